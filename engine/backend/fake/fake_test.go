package fake

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/cpu"
	"github.com/churon/churon/engine/quant"
)

func alloc(t *testing.T, d backend.Device, n int) backend.Buf {
	t.Helper()
	b, err := d.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReadOnlyAfterSync: what Read copies to the host arrives at Sync,
// and until then the host buffer holds NaNs.
func TestReadOnlyAfterSync(t *testing.T) {
	d := New(Options{})
	defer d.Close()
	b := alloc(t, d, 4)
	d.Write(b, []float32{1, 2, 3, 4})
	out := []float32{9, 9, 9, 9}
	d.Read(out, b)
	for _, v := range out {
		if !math.IsNaN(float64(v)) {
			t.Fatalf("before Sync the host buffer holds %v, want NaNs", out)
		}
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	if out[0] != 1 || out[3] != 4 {
		t.Fatalf("after Sync: %v", out)
	}
}

// TestHostArgumentsCopied: changing a host argument after an operation
// was queued does not change what it computes.
func TestHostArgumentsCopied(t *testing.T) {
	d := New(Options{})
	defer d.Close()
	b := alloc(t, d, 2)
	src := []float32{1, 2}
	d.Write(b, src)
	src[0] = 100
	x := alloc(t, d, 4)
	d.Write(x, []float32{1, 0, 1, 0})
	pos := []int32{3}
	r := &backend.Rope{Dims: 4, FreqBase: 10000, FreqScale: 1, AttnFactor: 1}
	d.RoPE(x, pos, 1, 4, r)
	pos[0], r.FreqBase = 0, 1
	got := make([]float32, 6)
	d.Read(got[:2], b)
	d.Read(got[2:], x)
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	if got[0] != 1 {
		t.Errorf("Write used the source as changed after the call: %v", got[:2])
	}
	want := make([]float32, 4)
	k := cpu.New(1)
	defer k.Close()
	copy(want, []float32{1, 0, 1, 0})
	k.RoPE(want, []int32{3}, 1, 4, &backend.Rope{Dims: 4, FreqBase: 10000, FreqScale: 1, AttnFactor: 1})
	for i := range want {
		if got[2+i] != want[i] {
			t.Fatalf("RoPE used the positions or parameters as changed after the call: %v, want %v", got[2:], want)
		}
	}
}

func mustPanic(t *testing.T, what, want string, f func()) {
	t.Helper()
	defer func() {
		p := recover()
		if p == nil {
			t.Errorf("%s: no panic", what)
			return
		}
		if !strings.Contains(panicText(p), want) {
			t.Errorf("%s: panic %q, want one saying %q", what, panicText(p), want)
		}
	}()
	f()
}

func panicText(p any) string {
	if s, ok := p.(string); ok {
		return s
	}
	if e, ok := p.(error); ok {
		return e.Error()
	}
	return ""
}

// TestForeignBuffersRefused: a buffer, weight or cache of another device
// is a bug, and each device says so.
func TestForeignBuffersRefused(t *testing.T) {
	a, b := New(Options{Name: "A"}), New(Options{Name: "B"})
	defer a.Close()
	defer b.Close()
	c := cpu.NewDevice(1)
	defer c.Close()
	ba, bb, bc := alloc(t, a, 4), alloc(t, b, 4), alloc(t, c, 4)
	mustPanic(t, "B's buffer on A", "another device", func() { a.Add(ba, bb) })
	mustPanic(t, "the CPU's buffer on A", "another device", func() { a.Add(bc, ba) })
	mustPanic(t, "A's buffer on the CPU", "another device", func() { c.Add(bc, ba) })
	mustPanic(t, "freeing B's buffer on A", "another device", func() { a.Free(bb) })
	spec := backend.KVSpec{Type: quant.F32, Context: 4, Dim: 4}
	kvb, err := b.NewKV(spec)
	if err != nil {
		t.Fatal(err)
	}
	mustPanic(t, "B's cache on A", "another device", func() { a.StoreKV(kvb, []int32{0}, ba, ba) })
	w := &backend.Tensor{Name: "w", Type: quant.F32, Ne: [4]int{4, 1, 1, 1}, Data: make([]byte, 16)}
	wc, _ := c.Upload(w)
	mustPanic(t, "the CPU's weight on A", "another device", func() { a.AddBias(ba, wc) })
}

// TestBudget: allocations, uploads and caches count against the budget;
// what is freed comes back.
func TestBudget(t *testing.T) {
	d := New(Options{Budget: 1000})
	defer d.Close()
	if d.FreeBytes() != 1000 {
		t.Fatalf("FreeBytes %d", d.FreeBytes())
	}
	b := alloc(t, d, 200) // 800 bytes
	if _, err := d.Alloc(51); !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("over budget: %v", err)
	}
	if _, err := d.NewKV(backend.KVSpec{Type: quant.F32, Context: 8, Dim: 4}); !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("a cache over budget: %v", err)
	}
	w := &backend.Tensor{Name: "big", Type: quant.F32, Ne: [4]int{16, 4, 1, 1}, Data: make([]byte, 256)}
	if _, err := d.Upload(w); !errors.Is(err, backend.ErrOutOfMemory) || !strings.Contains(err.Error(), "big") {
		t.Fatalf("an upload over budget: %v", err)
	}
	d.Free(b)
	if d.FreeBytes() != 1000 {
		t.Fatalf("after Free: %d free", d.FreeBytes())
	}
	kv, err := d.NewKV(backend.KVSpec{Type: quant.F32, Context: 8, Dim: 4})
	if err != nil {
		t.Fatal(err)
	}
	if d.FreeBytes() != 1000-256 {
		t.Fatalf("a cache of 256 bytes leaves %d", d.FreeBytes())
	}
	kv.Release()
	kv.Release()
	if used, peak := d.Used(); used != 0 || peak != 800 {
		t.Fatalf("used %d peak %d", used, peak)
	}
}

// TestStickyFault: the FaultAfter-th operation fails the device: Sync
// and cache reads report it from then on, and nothing after it runs.
func TestStickyFault(t *testing.T) {
	d := New(Options{FaultAfter: 3})
	defer d.Close()
	b := alloc(t, d, 2)
	kv, _ := d.NewKV(backend.KVSpec{Type: quant.F32, Context: 2, Dim: 2})
	d.Write(b, []float32{1, 2}) // op 1
	d.StoreKV(kv, []int32{0}, b, b)
	if err := d.Sync(); err != nil {
		t.Fatalf("before the fault: %v", err)
	}
	d.Add(b, b) // op 3: fails
	out := make([]float32, 2)
	d.Read(out, b)
	for range 2 {
		if err := d.Sync(); !errors.Is(err, ErrFault) {
			t.Fatalf("Sync after the fault: %v", err)
		}
	}
	if _, err := kv.AppendRows(nil, false, 0, 1); !errors.Is(err, ErrFault) {
		t.Fatalf("AppendRows after the fault: %v", err)
	}
	if !math.IsNaN(float64(out[0])) {
		t.Fatalf("a Read after the fault delivered %v", out)
	}
	if _, err := d.Alloc(1); !errors.Is(err, ErrFault) {
		t.Fatalf("Alloc after the fault: %v", err)
	}
	kv.Release() // safe on a failed device
}

// TestKernelsMatchCPU: the fake computes what the CPU computes, bit for
// bit, rows of a cache included.
func TestKernelsMatchCPU(t *testing.T) {
	f, c := New(Options{}), cpu.NewDevice(2)
	defer f.Close()
	defer c.Close()
	const dim, n = 64, 3
	w := &backend.Tensor{Name: "w", Type: quant.Q8_0, Ne: [4]int{dim, dim, 1, 1}, Data: make([]byte, dim*dim/32*34)}
	vals := make([]float32, dim*dim)
	for i := range vals {
		vals[i] = float32(math.Sin(float64(i)))
	}
	if err := quant.Quantize(quant.Q8_0, vals, w.Data); err != nil {
		t.Fatal(err)
	}
	x := make([]float32, n*dim)
	for i := range x {
		x[i] = float32(math.Cos(float64(i) * 0.37))
	}
	spec := backend.KVSpec{Type: quant.F16, Context: 8, Dim: dim}
	att := &backend.Attention{Heads: 2, KVHeads: 1, HeadDim: 32, Scale: 0.2, Window: 2}
	run := func(d backend.Device) ([]float32, []byte) {
		wd, err := d.Upload(w)
		if err != nil {
			t.Fatal(err)
		}
		kv, _ := d.NewKV(spec)
		bx, by, bo := alloc(t, d, n*dim), alloc(t, d, n*dim), alloc(t, d, n*dim)
		d.Write(bx, x)
		d.MatMul(by, wd, bx, n)
		d.StoreKV(kv, []int32{0, 1, 2}, by, bx)
		d.Attend(bo, bx, kv, []int32{0, 1, 2}, att, backend.AttendInputs{})
		out := make([]float32, n*dim)
		d.Read(out, bo)
		if err := d.Sync(); err != nil {
			t.Fatal(err)
		}
		rows, err := kv.AppendRows(nil, true, 0, 3)
		if err != nil {
			t.Fatal(err)
		}
		return out, rows
	}
	fo, fr := run(f)
	co, cr := run(c)
	for i := range co {
		if math.Float32bits(fo[i]) != math.Float32bits(co[i]) {
			t.Fatalf("out[%d]: fake %v, CPU %v", i, fo[i], co[i])
		}
	}
	if string(fr) != string(cr) {
		t.Fatal("cache rows differ")
	}
}

// TestUnsupported: Supports and Upload refuse the declared types.
func TestUnsupported(t *testing.T) {
	d := New(Options{Unsupported: []quant.Type{quant.Q4_K}})
	defer d.Close()
	if d.Supports(quant.Q4_K) || !d.Supports(quant.Q8_0) {
		t.Fatal("Supports ignores Options.Unsupported")
	}
	w := &backend.Tensor{Name: "w", Type: quant.Q4_K, Ne: [4]int{256, 2, 1, 1}, Data: make([]byte, 2*144)}
	if _, err := d.Upload(w); !errors.Is(err, backend.ErrUnsupported) {
		t.Fatalf("Upload of an unsupported type: %v", err)
	}
}

// TestFreeInOrder: Free takes effect in queue order: what was queued
// before it still runs, and a buffer used after it is refused, while its
// memory counts as free at once.
func TestFreeInOrder(t *testing.T) {
	d := New(Options{Budget: 64})
	defer d.Close()
	a := alloc(t, d, 8)
	d.Write(a, []float32{1, 2, 3, 4, 5, 6, 7, 8})
	out := make([]float32, 8)
	d.Read(out, a)
	d.Free(a)
	if d.FreeBytes() != 64 {
		t.Fatalf("after Free: %d bytes free", d.FreeBytes())
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	if out[7] != 8 {
		t.Fatalf("the Read queued before Free gave %v", out)
	}
	mustPanic(t, "using a freed buffer", "freed", func() { d.Add(a, a) })
	mustPanic(t, "freeing twice", "twice", func() { d.Free(a) })
}
