package gguf

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/internal/testdata"
)

// allValues has one entry per scalar type, per slice type (empty and not),
// and nested arrays, as (key, value given to SetKV, value read back).
func allValues() []struct {
	key       string
	in        any
	want      Value
	wantArray bool
} {
	type row = struct {
		key       string
		in        any
		want      Value
		wantArray bool
	}
	arr := func(et ValueType, vs any) Value { return Value{TypeArray, Array{et, vs}} }
	nested := Array{TypeArray, []Array{
		{TypeInt32, []int32{1, -2}},
		{TypeString, []string{"a", "", "bc"}},
		{TypeArray, []Array{{TypeFloat64, []float64{}}, {TypeBool, []bool{true}}}},
		{TypeUint8, []uint8{}},
	}}
	return []row{
		{"u8", uint8(200), Value{TypeUint8, uint8(200)}, false},
		{"i8", int8(-100), Value{TypeInt8, int8(-100)}, false},
		{"u16", uint16(65000), Value{TypeUint16, uint16(65000)}, false},
		{"i16", int16(-32000), Value{TypeInt16, int16(-32000)}, false},
		{"u32", uint32(4000000000), Value{TypeUint32, uint32(4000000000)}, false},
		{"i32", int32(-2000000000), Value{TypeInt32, int32(-2000000000)}, false},
		{"f32", float32(1e-5), Value{TypeFloat32, float32(1e-5)}, false},
		{"bool.t", true, Value{TypeBool, true}, false},
		{"bool.f", false, Value{TypeBool, false}, false},
		{"str", "héllo\nworld", Value{TypeString, "héllo\nworld"}, false},
		{"str.empty", "", Value{TypeString, ""}, false},
		{"u64", uint64(math.MaxUint64), Value{TypeUint64, uint64(math.MaxUint64)}, false},
		{"i64", int64(math.MinInt64), Value{TypeInt64, int64(math.MinInt64)}, false},
		{"f64", math.Pi, Value{TypeFloat64, math.Pi}, false},
		{"value", Value{TypeUint32, uint32(7)}, Value{TypeUint32, uint32(7)}, false},
		{"a.u8", []uint8{0, 1, 255}, arr(TypeUint8, []uint8{0, 1, 255}), true},
		{"a.i8", []int8{-128, 0, 127}, arr(TypeInt8, []int8{-128, 0, 127}), true},
		{"a.u16", []uint16{1, 65535}, arr(TypeUint16, []uint16{1, 65535}), true},
		{"a.i16", []int16{-1, 2}, arr(TypeInt16, []int16{-1, 2}), true},
		{"a.u32", []uint32{3, 4}, arr(TypeUint32, []uint32{3, 4}), true},
		{"a.i32", []int32{-5, 6}, arr(TypeInt32, []int32{-5, 6}), true},
		{"a.f32", []float32{1.5, -0, float32(math.Inf(1))}, arr(TypeFloat32, []float32{1.5, -0, float32(math.Inf(1))}), true},
		{"a.bool", []bool{true, false, true}, arr(TypeBool, []bool{true, false, true}), true},
		{"a.str", []string{"x", "", "<0x0A>", "▁the"}, arr(TypeString, []string{"x", "", "<0x0A>", "▁the"}), true},
		{"a.u64", []uint64{math.MaxUint64}, arr(TypeUint64, []uint64{math.MaxUint64}), true},
		{"a.i64", []int64{math.MinInt64, 1}, arr(TypeInt64, []int64{math.MinInt64, 1}), true},
		{"a.f64", []float64{math.SmallestNonzeroFloat64}, arr(TypeFloat64, []float64{math.SmallestNonzeroFloat64}), true},
		{"e.u8", []uint8{}, arr(TypeUint8, []uint8{}), true},
		{"e.i8", []int8{}, arr(TypeInt8, []int8{}), true},
		{"e.u16", []uint16{}, arr(TypeUint16, []uint16{}), true},
		{"e.i16", []int16{}, arr(TypeInt16, []int16{}), true},
		{"e.u32", []uint32{}, arr(TypeUint32, []uint32{}), true},
		{"e.i32", []int32{}, arr(TypeInt32, []int32{}), true},
		{"e.f32", []float32{}, arr(TypeFloat32, []float32{}), true},
		{"e.bool", []bool{}, arr(TypeBool, []bool{}), true},
		{"e.str", []string{}, arr(TypeString, []string{}), true},
		{"e.u64", []uint64{}, arr(TypeUint64, []uint64{}), true},
		{"e.i64", []int64{}, arr(TypeInt64, []int64{}), true},
		{"e.f64", []float64{}, arr(TypeFloat64, []float64{}), true},
		{"e.nested", []Array{}, arr(TypeArray, []Array{}), true},
		{"nested", nested, Value{TypeArray, nested}, true},
	}
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

type testTensor struct {
	name  string
	typ   quant.Type
	shape []uint64
	data  []byte
}

func someTensors() []testTensor {
	r := rand.New(rand.NewPCG(1, 2))
	var ts []testTensor
	for i, c := range []struct {
		typ   quant.Type
		shape []uint64
	}{
		{quant.F32, []uint64{3}},
		{quant.F16, []uint64{5, 3}},
		{quant.Q4_0, []uint64{64, 2}},
		{quant.Q4_K, []uint64{256, 3, 1}},
		{quant.Q6_K, []uint64{512, 1, 2, 1}},
		{quant.BF16, []uint64{7}},
		{quant.IQ4_XS, []uint64{256}},
		{quant.I8, []uint64{1}},
	} {
		ti := TensorInfo{Type: c.typ, Shape: c.shape}
		rows := ti.Elements() / c.shape[0]
		row, _ := c.typ.RowSize(int(c.shape[0]))
		ts = append(ts, testTensor{
			name:  "blk." + string(rune('0'+i)) + ".w",
			typ:   c.typ,
			shape: c.shape,
			data:  randBytes(r, row*int(rows)),
		})
	}
	return ts
}

func buildFile(t testing.TB, align uint32, tensors []testTensor) []byte {
	t.Helper()
	w := NewWriter()
	if err := w.SetKV("general.architecture", "test"); err != nil {
		t.Fatal(err)
	}
	if align != 0 {
		if err := w.SetKV("general.alignment", align); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range allValues() {
		if err := w.SetKV(c.key, c.in); err != nil {
			t.Fatalf("SetKV(%q): %v", c.key, err)
		}
	}
	for _, tt := range tensors {
		if err := w.AddTensor(tt.name, tt.typ, tt.shape, tt.data); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	n, err := w.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteTo: %d, %v (buffer %d)", n, err, buf.Len())
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	for _, align := range []uint32{0, 1, 8, 64, 4096} {
		for _, withTensors := range []bool{false, true} {
			var tensors []testTensor
			if withTensors {
				tensors = someTensors()
			}
			data := buildFile(t, align, tensors)
			f, err := Parse(data)
			if err != nil {
				t.Fatalf("align %d: %v", align, err)
			}
			checkInvariants(t, f)
			wantAlign := uint64(align)
			if align == 0 {
				wantAlign = DefaultAlignment
			}
			if f.Version != 3 || f.Alignment != wantAlign {
				t.Errorf("version %d alignment %d, want 3 %d", f.Version, f.Alignment, wantAlign)
			}
			if f.Architecture() != "test" {
				t.Errorf("architecture %q", f.Architecture())
			}
			for _, c := range allValues() {
				got, ok := f.Lookup(c.key)
				if !ok || !reflect.DeepEqual(got, c.want) {
					t.Errorf("align %d: %q = %#v, want %#v", align, c.key, got, c.want)
				}
			}
			// Insertion order is file order.
			if f.KV[0].Key != "general.architecture" || f.KV[len(f.KV)-1].Key != "nested" {
				t.Errorf("key order: first %q last %q", f.KV[0].Key, f.KV[len(f.KV)-1].Key)
			}
			if len(f.Tensors) != len(tensors) {
				t.Fatalf("%d tensors, want %d", len(f.Tensors), len(tensors))
			}
			for i, tt := range tensors {
				ti := &f.Tensors[i]
				if ti.Name != tt.name || ti.Type != tt.typ || !reflect.DeepEqual(ti.Shape, tt.shape) {
					t.Errorf("tensor %d: %q %s %v, want %q %s %v", i, ti.Name, ti.Type, ti.Shape, tt.name, tt.typ, tt.shape)
				}
				if ti.Offset%wantAlign != 0 {
					t.Errorf("tensor %q offset %d not aligned to %d", ti.Name, ti.Offset, wantAlign)
				}
				b, err := f.TensorData(ti)
				if err != nil || !bytes.Equal(b, tt.data) {
					t.Errorf("tensor %q data differs (%v)", ti.Name, err)
				}
			}
			if withTensors && uint64(len(data))%wantAlign != 0 {
				t.Errorf("file size %d not padded to %d", len(data), wantAlign)
			}
			if !withTensors && uint64(len(data)) > f.DataOffset {
				t.Errorf("tensorless file of %d bytes has padding (data offset %d)", len(data), f.DataOffset)
			}
		}
	}
}

func TestAccessors(t *testing.T) {
	f, err := Parse(buildFile(t, 0, nil))
	if err != nil {
		t.Fatal(err)
	}
	type res struct {
		v  any
		ok bool
	}
	two := func(v any, ok bool) res { return res{v, ok} }
	for _, c := range []struct {
		name      string
		got, want res
	}{
		{"Uint u8", two(f.Uint("u8")), res{uint64(200), true}},
		{"Uint i8 negative", two(f.Uint("i8")), res{uint64(0), false}},
		{"Uint u64", two(f.Uint("u64")), res{uint64(math.MaxUint64), true}},
		{"Uint value", two(f.Uint("value")), res{uint64(7), true}},
		{"Uint f32", two(f.Uint("f32")), res{uint64(0), false}},
		{"Uint bool", two(f.Uint("bool.t")), res{uint64(0), false}},
		{"Uint missing", two(f.Uint("nope")), res{uint64(0), false}},
		{"Int i64", two(f.Int("i64")), res{int64(math.MinInt64), true}},
		{"Int u32", two(f.Int("u32")), res{int64(4000000000), true}},
		{"Int u64 too big", two(f.Int("u64")), res{int64(0), false}},
		{"Int string", two(f.Int("str")), res{int64(0), false}},
		{"Float f32", two(f.Float("f32")), res{float64(float32(1e-5)), true}},
		{"Float f64", two(f.Float("f64")), res{math.Pi, true}},
		{"Float i16", two(f.Float("i16")), res{float64(-32000), true}},
		{"Float bool", two(f.Float("bool.t")), res{float64(0), false}},
		{"Bool", two(f.Bool("bool.t")), res{true, true}},
		{"Bool u8", two(f.Bool("u8")), res{false, false}},
		{"String", two(f.String("str")), res{"héllo\nworld", true}},
		{"String array", two(f.String("a.str")), res{"", false}},
		{"Strings", two(f.Strings("a.str")), res{[]string{"x", "", "<0x0A>", "▁the"}, true}},
		{"Strings empty", two(f.Strings("e.str")), res{[]string{}, true}},
		{"Strings ints", two(f.Strings("a.i32")), res{[]string(nil), false}},
		{"Strings scalar", two(f.Strings("str")), res{[]string(nil), false}},
		{"Float32s f32", two(f.Float32s("a.f32")), res{[]float32{1.5, -0, float32(math.Inf(1))}, true}},
		{"Float32s i16", two(f.Float32s("a.i16")), res{[]float32{-1, 2}, true}},
		{"Float32s f64", two(f.Float32s("a.f64")), res{[]float32{float32(math.SmallestNonzeroFloat64)}, true}},
		{"Float32s strings", two(f.Float32s("a.str")), res{[]float32(nil), false}},
		{"Float32s bools", two(f.Float32s("a.bool")), res{[]float32(nil), false}},
		{"Int32s i32", two(f.Int32s("a.i32")), res{[]int32{-5, 6}, true}},
		{"Int32s u8", two(f.Int32s("a.u8")), res{[]int32{0, 1, 255}, true}},
		{"Int32s u32", two(f.Int32s("a.u32")), res{[]int32{3, 4}, true}},
		{"Int32s u64 too big", two(f.Int32s("a.u64")), res{[]int32(nil), false}},
		{"Int32s i64 too small", two(f.Int32s("a.i64")), res{[]int32(nil), false}},
		{"Int32s f32", two(f.Int32s("a.f32")), res{[]int32(nil), false}},
		{"Int32s empty", two(f.Int32s("e.u16")), res{[]int32{}, true}},
		{"Int32s nested", two(f.Int32s("nested")), res{[]int32(nil), false}},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %#v, want %#v", c.name, c.got, c.want)
		}
	}
	if _, ok := f.Tensor("nope"); ok {
		t.Error("Tensor(nope) found")
	}
}

func TestWriterReplaceAndDelete(t *testing.T) {
	w := NewWriter()
	for _, k := range []string{"a", "b", "c"} {
		if err := w.SetKV(k, uint32(1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.SetKV("b", "two"); err != nil {
		t.Fatal(err)
	}
	if !w.DeleteKV("a") || w.DeleteKV("a") {
		t.Fatal("DeleteKV")
	}
	if err := w.SetKV("a", int8(3)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, kv := range f.KV {
		keys = append(keys, kv.Key)
	}
	if strings.Join(keys, ",") != "b,c,a" {
		t.Errorf("keys %v, want b,c,a", keys)
	}
	if s, _ := f.String("b"); s != "two" {
		t.Errorf("b = %q", s)
	}
}

func TestWriterRejects(t *testing.T) {
	w := NewWriter()
	for _, c := range []struct {
		name string
		key  string
		v    any
	}{
		{"int", "k", 5},
		{"uint", "k", uint(5)},
		{"map", "k", map[string]int{}},
		{"nil", "k", nil},
		{"empty key", "", uint8(1)},
		{"long key", strings.Repeat("k", MaxKeyLen+1), uint8(1)},
		{"alignment type", "general.alignment", uint64(32)},
		{"alignment zero", "general.alignment", uint32(0)},
		{"alignment not pow2", "general.alignment", uint32(48)},
		{"array mismatch", "k", Array{TypeUint32, []int32{1}}},
		{"array not slice", "k", Array{TypeUint32, uint32(1)}},
		{"nested mismatch", "k", Array{TypeArray, []Array{{TypeString, []int8{}}}}},
		{"value mismatch", "k", Value{TypeUint32, int32(1)}},
		{"value unknown", "k", Value{ValueType(13), uint8(1)}},
		{"too deep", "k", deepArray(MaxArrayDepth + 1)},
		{"[]int", "k", []int{1}},
	} {
		if err := w.SetKV(c.key, c.v); err == nil {
			t.Errorf("%s: SetKV accepted %#v", c.name, c.v)
		}
	}
	if err := w.SetKV("k", deepArray(MaxArrayDepth)); err != nil {
		t.Errorf("depth %d rejected: %v", MaxArrayDepth, err)
	}
	if err := w.AddTensor("ok", quant.F32, []uint64{2}, make([]byte, 8)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		tname string
		typ   quant.Type
		shape []uint64
		n     int
	}{
		{"duplicate", "ok", quant.F32, []uint64{2}, 8},
		{"empty name", "", quant.F32, []uint64{2}, 8},
		{"long name", strings.Repeat("n", 64), quant.F32, []uint64{2}, 8},
		{"unknown type", "x", quant.Type(4), []uint64{2}, 8},
		{"no dims", "x", quant.F32, nil, 4},
		{"5 dims", "x", quant.F32, []uint64{1, 1, 1, 1, 1}, 4},
		{"zero dim", "x", quant.F32, []uint64{2, 0}, 0},
		{"ragged row", "x", quant.Q4_0, []uint64{48}, 27},
		{"short data", "x", quant.F32, []uint64{2}, 7},
		{"long data", "x", quant.F32, []uint64{2}, 9},
		{"overflow", "x", quant.F32, []uint64{1 << 32, 1 << 31}, 0},
	} {
		if err := w.AddTensor(c.tname, c.typ, c.shape, make([]byte, c.n)); err == nil {
			t.Errorf("%s: AddTensor accepted", c.name)
		}
	}
}

// deepArray returns an array value nested depth levels deep (1 = flat).
func deepArray(depth int) Array {
	a := Array{TypeUint8, []uint8{1}}
	for i := 1; i < depth; i++ {
		a = Array{TypeArray, []Array{a}}
	}
	return a
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.gguf")
	w := NewWriter()
	w.SetKV("general.architecture", "llama")
	tt := someTensors()[3]
	if err := w.AddTensor(tt.name, tt.typ, tt.shape, tt.data); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w.WriteTo(&buf)
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, buf.Bytes()) {
		t.Fatalf("WriteFile content differs from WriteTo (%v)", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries after WriteFile, want 1", len(ents))
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Architecture() != "llama" || len(f.Tensors) != 1 {
		t.Errorf("reopened file: arch %q, %d tensors", f.Architecture(), len(f.Tensors))
	}
	if err := w.WriteFile(filepath.Join(dir, "missing", "x.gguf")); err == nil {
		t.Error("WriteFile into a missing directory succeeded")
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

func TestWriteToError(t *testing.T) {
	w := NewWriter()
	w.SetKV("k", "v")
	if _, err := w.WriteTo(&failWriter{n: 10}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("WriteTo on a failing writer: %v", err)
	}
}

// TestRewriteReal copies real files through Reader and Writer: the output
// must be byte-identical, which pins the writer's layout to llama.cpp's.
func TestRewriteReal(t *testing.T) {
	dir := testdata.Dir(t)
	for _, name := range []string{"models/stories260K.gguf", "quantzoo/zoo-Q4_K_M-mixed.gguf", "vocab/ggml-vocab-llama-spm.gguf"} {
		path := filepath.Join(dir, name)
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		w := NewWriter()
		for _, kv := range f.KV {
			if err := w.SetKV(kv.Key, kv.Value); err != nil {
				t.Fatal(err)
			}
		}
		for i := range f.Tensors {
			ti := &f.Tensors[i]
			b, err := f.TensorData(ti)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.AddTensor(ti.Name, ti.Type, ti.Shape, b); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		orig, _ := os.ReadFile(path)
		if !bytes.Equal(buf.Bytes(), orig) {
			n := 0
			for n < min(len(orig), buf.Len()) && orig[n] == buf.Bytes()[n] {
				n++
			}
			t.Errorf("%s: rewrite differs from the original at byte %d (sizes %d, %d)", name, n, buf.Len(), len(orig))
		}
		f.Close()
	}
}
