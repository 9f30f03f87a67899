package quantize

// Tests against llama.cpp's own output: the quantzoo models in the shared
// test data were made by llama-quantize from one F32 model (--pure, so
// every weight matrix has the named type), plus zoo-Q4_K_M-mixed with the
// default Q4_K_M recipe. zoo-F32.gguf is that source.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/internal/quanttest"
	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/internal/testdata"
)

func zooPath(t testing.TB, model string) string {
	t.Helper()
	return filepath.Join(testdata.Dir(t), "quantzoo", "zoo-"+model+".gguf")
}

func open(t *testing.T, path string) *gguf.File {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func data(t *testing.T, f *gguf.File, ti *gguf.TensorInfo) []byte {
	t.Helper()
	b, err := f.TensorData(ti)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// requantized returns the tensor ti of f dequantized, x, and x quantized
// to typ by the reference quantizer, q.
func requantized(t *testing.T, f *gguf.File, ti *gguf.TensorInfo, typ quant.Type) (x []float32, q []byte) {
	t.Helper()
	x = make([]float32, ti.Elements())
	size, _ := typ.RowSize(len(x))
	q = make([]byte, size)
	if err := quant.Dequantize(ti.Type, data(t, f, ti), x); err != nil {
		t.Fatal(err)
	}
	if err := quant.Quantize(typ, x, q); err != nil {
		t.Fatal(err)
	}
	return x, q
}

// TestZoo quantizes the zoo's F32 source to each type and compares the
// result with llama.cpp's file: the header (metadata, tensor infos and
// offsets) byte for byte, every tensor's type exactly, and every tensor's
// bytes — identical, or (allowed only for the K-quants and IQ4, whose
// search-based quantizers could in principle round differently) with a
// dequantized RMS error against the F32 weights no worse than llama.cpp's.
func TestZoo(t *testing.T) {
	const rmsTolerance = 1e-3 // relative: ours ≤ llama.cpp's × (1 + this)
	tests := []struct {
		typ   string
		pure  bool
		zoo   string
		exact bool // blocks must be byte-identical
	}{
		{"Q8_0", true, "Q8_0", true},
		{"Q4_0", true, "Q4_0", true},
		{"Q4_1", true, "Q4_1", true},
		{"Q5_0", true, "Q5_0", true},
		{"Q5_1", true, "Q5_1", true},
		{"F16", false, "F16", true},
		{"BF16", false, "BF16", true},
		{"Q2_K", true, "Q2_K", false},
		{"Q3_K", true, "Q3_K", false}, // llama-quantize's alias of Q3_K_M
		{"Q4_K", true, "Q4_K", false},
		{"Q5_K", true, "Q5_K", false},
		{"Q6_K", true, "Q6_K", false},
		{"IQ4_NL", true, "IQ4_NL", false},
		{"IQ4_XS", true, "IQ4_XS", false},
		{"Q4_K_M", false, "Q4_K_M-mixed", false},
	}
	srcPath := zooPath(t, "F32")
	src := open(t, srcPath)
	dir := t.TempDir()
	for _, tc := range tests {
		name := tc.typ
		if tc.pure {
			name += "-pure"
		}
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(dir, name+".gguf")
			rep, err := File(context.Background(), srcPath, out, Options{Type: tc.typ, Pure: tc.pure, Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			refPath := zooPath(t, tc.zoo)
			got, want := open(t, out), open(t, refPath)
			if got.DataOffset != want.DataOffset || got.Size() != want.Size() {
				t.Fatalf("layout: data at %d, %d bytes; llama.cpp's at %d, %d bytes", got.DataOffset, got.Size(), want.DataOffset, want.Size())
			}
			gb, _ := os.ReadFile(out)
			wb, _ := os.ReadFile(refPath)
			if !bytes.Equal(gb[:got.DataOffset], wb[:want.DataOffset]) {
				t.Errorf("header (metadata and tensor infos) differs from llama.cpp's")
			}
			identical, checked := 0, 0
			for i := range want.Tensors {
				wt := &want.Tensors[i]
				gt := &got.Tensors[i]
				if gt.Name != wt.Name || gt.Type != wt.Type || gt.Offset != wt.Offset {
					t.Errorf("tensor %d: ours %s %v at %d, llama.cpp's %s %v at %d", i, gt.Name, gt.Type, gt.Offset, wt.Name, wt.Type, wt.Offset)
					continue
				}
				gd, wd := data(t, got, gt), data(t, want, wt)
				checked++
				if bytes.Equal(gd, wd) {
					identical++
					continue
				}
				if tc.exact {
					t.Errorf("%s (%v): blocks differ from llama.cpp's", wt.Name, wt.Type)
					continue
				}
				si, _ := src.Tensor(wt.Name)
				x, _ := requantized(t, src, si, wt.Type)
				ours, theirs := quanttest.RMSError(t, wt.Type, gd, x), quanttest.RMSError(t, wt.Type, wd, x)
				t.Logf("%s (%v): bytes differ; RMS error vs F32 ours %.6g, llama.cpp %.6g", wt.Name, wt.Type, ours, theirs)
				if ours > theirs*(1+rmsTolerance) {
					t.Errorf("%s (%v): RMS error %.6g is worse than llama.cpp's %.6g", wt.Name, wt.Type, ours, theirs)
				}
			}
			t.Logf("%s: %d/%d tensors byte-identical to llama.cpp's; whole file identical: %v; %.3f bits per weight",
				name, identical, checked, bytes.Equal(gb, wb), rep.BitsPerWeight)
			if rep.Tensors != len(want.Tensors) || rep.OutBytes != want.Size() {
				t.Errorf("report: %d tensors, %d bytes", rep.Tensors, rep.OutBytes)
			}
		})
	}
}

// TestZooMetadata: the output's metadata is llama.cpp's — the same keys
// in the same order with the same values, general.file_type included —
// and differs from the source only where llama.cpp changes it.
func TestZooMetadata(t *testing.T) {
	srcPath := zooPath(t, "F32")
	for _, tc := range []struct {
		typ, zoo string
		id       uint64
	}{{"Q4_K_M", "Q4_K_M-mixed", 15}, {"Q8_0", "Q8_0", 7}} {
		t.Run(tc.typ, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.gguf")
			if _, err := File(context.Background(), srcPath, out, Options{Type: tc.typ}); err != nil {
				t.Fatal(err)
			}
			got, want, src := open(t, out), open(t, zooPath(t, tc.zoo)), open(t, srcPath)
			if k1, k2 := keys(got), keys(want); !reflect.DeepEqual(k1, k2) {
				t.Errorf("keys:\n ours      %v\n llama.cpp %v", k1, k2)
			}
			for _, kv := range want.KV {
				v, ok := got.Lookup(kv.Key)
				if !ok || !reflect.DeepEqual(v, kv.Value) {
					t.Errorf("%s: ours %v, llama.cpp %v", kv.Key, v, kv.Value)
				}
			}
			if ft, ok := got.Uint("general.file_type"); !ok || ft != tc.id {
				t.Errorf("general.file_type %d, want %d", ft, tc.id)
			}
			if qv, ok := got.Uint("general.quantization_version"); !ok || qv != 2 {
				t.Errorf("general.quantization_version %d, want 2", qv)
			}
			for _, kv := range src.KV {
				if kv.Key == "general.file_type" {
					continue
				}
				if v, _ := got.Lookup(kv.Key); !reflect.DeepEqual(v, kv.Value) {
					t.Errorf("%s changed from the source: %v → %v", kv.Key, kv.Value, v)
				}
			}
		})
	}
}

func keys(f *gguf.File) []string {
	var out []string
	for _, kv := range f.KV {
		out = append(out, kv.Key)
	}
	return out
}

// noTemp fails when dir holds anything but the files named.
func noTemp(t *testing.T, dir string, keep ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !contains(keep, e.Name()) {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestCancel: cancelling mid-way returns the context's error and leaves
// neither the output nor a temporary file; an existing output is kept.
func TestCancel(t *testing.T) {
	srcPath := zooPath(t, "F32")
	for _, existing := range []bool{false, true} {
		t.Run(fmt.Sprintf("existing=%v", existing), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out.gguf")
			if existing {
				if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			calls := 0
			_, err := File(ctx, srcPath, out, Options{Type: "Q4_K_M", Progress: func(done, total int64) {
				calls++
				if done > 0 && done < total {
					cancel()
				}
			}})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if calls < 2 {
				t.Errorf("progress called %d times", calls)
			}
			if existing {
				if b, _ := os.ReadFile(out); string(b) != "old" {
					t.Errorf("existing output replaced: %q", b)
				}
				noTemp(t, dir, "out.gguf")
			} else {
				noTemp(t, dir)
			}
		})
	}
}

// TestProgress: progress rises to the total of the source's tensor data.
func TestProgress(t *testing.T) {
	srcPath := zooPath(t, "F32")
	src := open(t, srcPath)
	var total int64
	for _, ti := range src.Tensors {
		total += int64(ti.Size)
	}
	var last, tot int64 = -1, 0
	out := filepath.Join(t.TempDir(), "out.gguf")
	_, err := File(context.Background(), srcPath, out, Options{Type: "Q8_0", Progress: func(done, t2 int64) {
		if done < last {
			t.Errorf("progress went back: %d after %d", done, last)
		}
		last, tot = done, t2
	}})
	if err != nil {
		t.Fatal(err)
	}
	if last != total || tot != total {
		t.Errorf("progress ended at %d/%d, want %d", last, tot, total)
	}
}

// TestRequantize: a quantized source is refused without AllowRequantize;
// with it, the weights are dequantized and quantized again (with a
// warning); a tensor already of the target type is copied, as llama.cpp
// does, and needs no permission.
func TestRequantize(t *testing.T) {
	srcPath := zooPath(t, "Q8_0")
	dir := t.TempDir()
	out := filepath.Join(dir, "out.gguf")
	_, err := File(context.Background(), srcPath, out, Options{Type: "Q4_0", Pure: true})
	if !errors.Is(err, ErrRequantize) || !strings.Contains(err.Error(), "Q8_0") || !strings.Contains(err.Error(), "--allow-requantize") {
		t.Fatalf("err = %v, want ErrRequantize naming Q8_0 and the flag", err)
	}
	noTemp(t, dir)

	rep, err := File(context.Background(), srcPath, out, Options{Type: "Q4_0", Pure: true, AllowRequantize: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) == 0 || !strings.Contains(rep.Warnings[0], "requantiz") {
		t.Errorf("no requantization warning: %q", rep.Warnings)
	}
	src, got := open(t, srcPath), open(t, out)
	ti, _ := src.Tensor("blk.1.ffn_down.weight")
	_, want := requantized(t, src, ti, quant.Q4_0)
	gi, _ := got.Tensor(ti.Name)
	if gi.Type != quant.Q4_0 || !bytes.Equal(data(t, got, gi), want) {
		t.Errorf("%s: %v, not Q4_0 of the dequantized Q8_0 weights", ti.Name, gi.Type)
	}

	rep, err = File(context.Background(), srcPath, out, Options{Type: "Q8_0", Pure: true})
	if err != nil {
		t.Fatalf("Q8_0 → Q8_0: %v", err)
	}
	if rep.Converted != 0 {
		t.Errorf("Q8_0 → Q8_0 converted %d tensors", rep.Converted)
	}
	a, _ := os.ReadFile(srcPath)
	b, _ := os.ReadFile(out)
	if !bytes.Equal(a, b) {
		t.Errorf("Q8_0 → Q8_0 is not a copy of llama.cpp's file")
	}
}

// TestBadInput: a truncated file, a missing file, an unknown type and the
// output path being the input all fail clearly, leaving nothing behind.
func TestBadInput(t *testing.T) {
	srcPath := zooPath(t, "F32")
	whole, err := os.ReadFile(srcPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	trunc := filepath.Join(dir, "trunc.gguf")
	if err := os.WriteFile(trunc, whole[:len(whole)*6/10], 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.gguf")
	tests := []struct {
		name, in, out, typ string
		is                 error
		msg                string
	}{
		{"truncated", trunc, out, "Q4_0", gguf.ErrTruncated, "truncated"},
		{"missing", filepath.Join(dir, "nope.gguf"), out, "Q4_0", os.ErrNotExist, "nope.gguf"},
		{"unknown type", srcPath, out, "Q9_K", ErrUnknownType, "Q4_K_M"},
		{"importance matrix type", srcPath, out, "IQ2_XS", ErrUnknownType, "IQ2_XS"},
		{"same file", trunc, trunc, "Q4_0", nil, "is the input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := File(context.Background(), tc.in, tc.out, Options{Type: tc.typ})
			if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want %v mentioning %q", err, tc.is, tc.msg)
			}
			t.Log(err)
			noTemp(t, dir, "trunc.gguf")
		})
	}
}

// failAfter fails every write past n bytes with ENOSPC, as a full disk
// does.
type failAfter struct {
	w io.Writer
	n int
}

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k, _ := f.w.Write(p[:f.n])
		f.n = 0
		return k, &os.PathError{Op: "write", Path: "out", Err: syscall.ENOSPC}
	}
	f.n -= len(p)
	return f.w.Write(p)
}

// TestDiskFull: a full disk is reported as ErrDiskFull with the size
// needed, and leaves no output and no temporary file.
func TestDiskFull(t *testing.T) {
	srcPath := zooPath(t, "F32")
	wrapOutput = func(w io.Writer) io.Writer { return &failAfter{w: w, n: 300 << 10} }
	defer func() { wrapOutput = nil }()
	dir := t.TempDir()
	_, err := File(context.Background(), srcPath, filepath.Join(dir, "out.gguf"), Options{Type: "Q8_0"})
	if !errors.Is(err, ErrDiskFull) || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "MiB") {
		t.Fatalf("err = %v, want ErrDiskFull with the size needed", err)
	}
	noTemp(t, dir)
}

// TestThreads: the output does not depend on the number of threads or on
// tensors being split into several chunks: it is llama.cpp's file in
// every case.
func TestThreads(t *testing.T) {
	srcPath := zooPath(t, "F32")
	want, err := os.ReadFile(zooPath(t, "Q4_K_M-mixed"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	defer func(c int) { chunkElems = c }(chunkElems)
	for _, tc := range []struct{ threads, chunk int }{{1, 1 << 22}, {3, 1 << 22}, {1, 3000}, {2, 3000}, {3, 100}} {
		chunkElems = tc.chunk
		out := filepath.Join(dir, "out.gguf")
		calls := 0
		if _, err := File(context.Background(), srcPath, out, Options{Type: "Q4_K_M", Threads: tc.threads,
			Progress: func(int64, int64) { calls++ }}); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
			t.Errorf("%d threads, chunks of %d elements: not llama.cpp's file", tc.threads, tc.chunk)
		}
		t.Logf("%d threads, chunks of %d elements: %d progress reports", tc.threads, tc.chunk, calls)
	}
}

// TestFloatSources: F16 and BF16 sources are converted without
// requantization warnings, each tensor to the blocks of its float32
// values.
func TestFloatSources(t *testing.T) {
	for _, model := range []string{"F16", "BF16"} {
		t.Run(model, func(t *testing.T) {
			srcPath := zooPath(t, model)
			out := filepath.Join(t.TempDir(), "out.gguf")
			rep, err := File(context.Background(), srcPath, out, Options{Type: "Q5_1", Pure: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Warnings) != 0 || rep.Converted != 16 {
				t.Errorf("%d converted, warnings %q", rep.Converted, rep.Warnings)
			}
			src, got := open(t, srcPath), open(t, out)
			for i := range src.Tensors {
				si := &src.Tensors[i]
				gi, _ := got.Tensor(si.Name)
				if si.Type == quant.F32 {
					if gi.Type != quant.F32 || !bytes.Equal(data(t, got, gi), data(t, src, si)) {
						t.Errorf("%s: F32 tensor not copied", si.Name)
					}
					continue
				}
				_, want := requantized(t, src, si, quant.Q5_1)
				if gi.Type != quant.Q5_1 || !bytes.Equal(data(t, got, gi), want) {
					t.Errorf("%s: %v, not Q5_1 of the %v weights", si.Name, gi.Type, si.Type)
				}
			}
		})
	}
}

// TestNonFinite: a NaN weight is refused, as llama.cpp's validation of the
// quantized data refuses it.
func TestNonFinite(t *testing.T) {
	w := gguf.NewWriter()
	if err := w.SetKV("general.architecture", "llama"); err != nil {
		t.Fatal(err)
	}
	x := make([]byte, 4*64*2)
	copy(x[4*70:], []byte{0, 0, 0xc0, 0x7f}) // NaN
	if err := w.AddTensor("blk.0.ffn_up.weight", quant.F32, []uint64{64, 2}, x); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "nan.gguf")
	if err := w.WriteFile(in); err != nil {
		t.Fatal(err)
	}
	_, err := File(context.Background(), in, filepath.Join(dir, "out.gguf"), Options{Type: "Q8_0"})
	if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "blk.0.ffn_up.weight") || !strings.Contains(err.Error(), "row 1") {
		t.Fatalf("err = %v, want ErrNonFinite naming the tensor and row", err)
	}
	noTemp(t, dir, "nan.gguf")
}
