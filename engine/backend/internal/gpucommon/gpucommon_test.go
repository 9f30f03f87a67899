package gpucommon

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

func f32(name string, rows, cols int, v ...float32) *backend.Tensor {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return &backend.Tensor{Name: name, Type: quant.F32, Ne: [4]int{cols, rows, 1, 1}, Data: b}
}

func TestActOf(t *testing.T) {
	for _, tc := range []struct {
		typ  quant.Type
		want Act
		rb   int // RowBytes(256)
	}{
		{quant.F32, ActNone, 4 * 256},
		{quant.Q4_0, ActQ8_0, 8 * 34},
		{quant.Q8_0, ActQ8_0, 8 * 34},
		{quant.Q4_1, ActQ8_1, 8 * 36},
		{quant.Q4_K, ActQ8_K, 292},
		{quant.F16, ActF16, 2 * 256},
		{quant.BF16, ActBF16, 2 * 256},
	} {
		a := ActOf(tc.typ)
		if a != tc.want {
			t.Errorf("ActOf(%v) = %d, want %d", tc.typ, a, tc.want)
		}
		if a != ActNone && ActTypes[a] != quant.VecDotType(tc.typ) {
			t.Errorf("ActTypes[ActOf(%v)] = %v, want %v", tc.typ, ActTypes[a], quant.VecDotType(tc.typ))
		}
		if rb := a.RowBytes(256); rb != tc.rb {
			t.Errorf("%v: RowBytes(256) = %d, want %d", tc.typ, rb, tc.rb)
		}
	}
}

func TestResident(t *testing.T) {
	all := func(quant.Type) bool { return true }
	none := func(quant.Type) bool { return false }
	m := f32("m", 2, 3, 1, 2, 3, 4, 5, 6)
	short := f32("short", 2, 3, 1, 2, 3, 4, 5)
	vec := f32("v", 1, 3, 1, -2, 3)
	for _, tc := range []struct {
		name     string
		t        *backend.Tensor
		supports func(quant.Type) bool
		want     []byte
		err      error // errors.Is, or nil for any error when fail
		fail     bool
	}{
		{"matrix as stored", m, all, m.Data, nil, false},
		{"vector widened", vec, none, BytesOf([]float32{1, -2, 3}), nil, false},
		{"unsupported", m, none, nil, backend.ErrUnsupported, true},
		{"short data", short, all, nil, nil, true},
	} {
		b, err := Resident("test", tc.t, tc.supports)
		if tc.fail {
			if err == nil || (tc.err != nil && !errors.Is(err, tc.err)) {
				t.Errorf("%s: error %v, want %v", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || string(b) != string(tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, b, err, tc.want)
		}
	}
}

func TestEmbedRows(t *testing.T) {
	tab := f32("tab", 3, 2, 1, 2, 3, 4, 5, 6)
	rows, err := EmbedRows("test", tab, []int32{2, 0, 2})
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{5, 6, 1, 2, 5, 6}
	for i := range want {
		if rows[i] != want[i] {
			t.Fatalf("rows %v, want %v", rows, want)
		}
	}
	bad := &backend.Tensor{Name: "bad", Type: quant.Type(255), Ne: [4]int{2, 3, 1, 1}, Data: make([]byte, 24)}
	if _, err := EmbedRows("test", bad, []int32{0}); err == nil {
		t.Error("rows of an unknown type: no error")
	}
}

// TestAttendShapeOf: the widest row a window leaves, and the chunks of
// rows whose scores fit ScoreBudget.
func TestAttendShapeOf(t *testing.T) {
	defer func(b int) { ScoreBudget = b }(ScoreBudget)
	ScoreBudget = 2 * 4 * 10 * 4 // two rows of 4 heads × 10 positions
	pos := []int32{7, 8, 9}
	a := &backend.Attention{Heads: 4, KVHeads: 2, HeadDim: 64}
	sh, err := AttendShapeOf("test", a, pos)
	if want := (AttendShape{Widest: 10, Chunk: 2, ScoreBytes: 2 * 4 * 10 * 4}); err != nil || sh != want {
		t.Errorf("no window: %+v, %v; want %+v", sh, err, want)
	}
	a.Window = 4
	sh, err = AttendShapeOf("test", a, pos)
	if want := (AttendShape{Widest: 4, Chunk: 3, ScoreBytes: 3 * 4 * 4 * 4, Window: 4}); err != nil || sh != want {
		t.Errorf("window of 4: %+v, %v; want %+v", sh, err, want)
	}
	a.Window, a.SoftCap = -1, 30
	if sh, err = AttendShapeOf("test", a, pos); err != nil || sh.Window != 0 || sh.SoftCap != 30 {
		t.Errorf("no window, a soft cap of 30: %+v, %v", sh, err)
	}
	a.SoftCap = -1
	if sh, err = AttendShapeOf("test", a, pos); err != nil || sh.SoftCap != 0 {
		t.Errorf("a negative soft cap: %+v, %v; want none", sh, err)
	}
	sh.Chunk = 2
	var chunks [][2]int
	for r0, rn := range sh.Chunks(5) {
		chunks = append(chunks, [2]int{r0, rn})
	}
	if want := [][2]int{{0, 2}, {2, 2}, {4, 1}}; !slices.Equal(chunks, want) {
		t.Errorf("chunks of 2 over 5 rows: %v, want %v", chunks, want)
	}
	a.HeadDim = MaxHeadDim + 1
	if _, err := AttendShapeOf("test", a, pos); err == nil {
		t.Error("a head wider than MaxHeadDim: no error")
	}
}

// TestStoreKVKernel checks the store kernels' launch shapes: Q8_0 a block
// of 32 values (keys' and values') to a SIMD group, the others a thread a
// value.
func TestStoreKVKernel(t *testing.T) {
	for _, c := range []struct {
		t      quant.Type
		k      Kernel
		blocks int
	}{{quant.Q8_0, KStoreKVQ8_0, 2 * 3 * 64 / 32}, {quant.F16, KStoreKVF16, 0}, {quant.F32, KStoreKVF32, 0}} {
		if k, blocks := StoreKVKernel(c.t, 3, 64); k != c.k || blocks != c.blocks {
			t.Errorf("%v: %s with %d blocks, want %s with %d", c.t, KernelNames[k], blocks, KernelNames[c.k], c.blocks)
		}
	}
}

// TestSyncErr checks what a Sync reports: the first kept failure, or the
// dead one before it, and nothing kept after.
func TestSyncErr(t *testing.T) {
	first, second, dead := errors.New("first"), errors.New("second"), errors.New("dead")
	var kept error
	KeepFirst(&kept, first)
	KeepFirst(&kept, second)
	if err := SyncErr(&kept, nil); err != first || kept != nil {
		t.Errorf("SyncErr = %v (kept %v), want first (none)", err, kept)
	}
	KeepFirst(&kept, second)
	if err := SyncErr(&kept, dead); err != dead || kept != nil {
		t.Errorf("SyncErr with a dead device = %v (kept %v), want dead (none)", err, kept)
	}
	if err := SyncErr(&kept, nil); err != nil {
		t.Errorf("SyncErr with nothing kept = %v", err)
	}
	if err := ErrClosed("gpu"); err.Error() != "gpu: device closed" {
		t.Errorf("ErrClosed = %v", err)
	}
}
