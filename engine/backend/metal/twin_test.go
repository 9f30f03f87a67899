//go:build linux || darwin

package metal

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/cpu"
	"github.com/churon/churon/engine/quant"
)

// twin runs the same operations on the Metal device (on a Mac, or the
// emulated runner) and on the CPU, the
// oracle every kernel is pinned to.
type twin struct {
	t *testing.T
	g *Device
	c *cpu.Device
}

func newTwin(t *testing.T, env ...string) *twin {
	t.Helper()
	tw := &twin{t: t, g: openTest(t, env...), c: cpu.NewDevice(2)}
	t.Cleanup(func() { tw.c.Close() })
	return tw
}

// pair is one buffer on each device.
type pair struct{ g, c backend.Buf }

func (tw *twin) buf(vals []float32) pair {
	tw.t.Helper()
	g, err := tw.g.Alloc(len(vals))
	if err != nil {
		tw.t.Fatal(err)
	}
	c, _ := tw.c.Alloc(len(vals))
	tw.g.Write(g, vals)
	tw.c.Write(c, vals)
	return pair{g, c}
}

func (tw *twin) zeros(n int) pair { return tw.buf(make([]float32, n)) }

// read returns both devices' values of p.
func (tw *twin) read(p pair) (g, c []float32) {
	tw.t.Helper()
	g, c = make([]float32, p.g.Len()), make([]float32, p.c.Len())
	tw.g.Read(g, p.g)
	tw.c.Read(c, p.c)
	if err := tw.g.Sync(); err != nil {
		tw.t.Fatal(err)
	}
	if err := tw.c.Sync(); err != nil {
		tw.t.Fatal(err)
	}
	return g, c
}

type wpair struct{ g, c backend.Weight }

func (tw *twin) weight(t *backend.Tensor) wpair {
	tw.t.Helper()
	g, err := tw.g.Upload(t)
	if err != nil {
		tw.t.Fatal(err)
	}
	c, _ := tw.c.Upload(t)
	return wpair{g, c}
}

// both runs f on each device.
func (tw *twin) both(f func(d backend.Device, side int)) {
	f(tw.g, 0)
	f(tw.c, 1)
}

func (p pair) on(side int) backend.Buf {
	if side == 0 {
		return p.g
	}
	return p.c
}

func (w wpair) on(side int) backend.Weight {
	if side == 0 {
		return w.g
	}
	return w.c
}

// relL2 is ‖a−b‖/‖b‖ (0 when both are 0).
func relL2(a, b []float32) float64 {
	var num, den float64
	for i := range b {
		d := float64(a[i]) - float64(b[i])
		num += d * d
		den += float64(b[i]) * float64(b[i])
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

// identical counts the values that agree bit for bit, and says where the
// first difference is.
func identical(a, b []float32) (same int, first int) {
	first = -1
	for i := range b {
		if math.Float32bits(a[i]) == math.Float32bits(b[i]) || (a[i] != a[i] && b[i] != b[i]) {
			same++
		} else if first < 0 {
			first = i
		}
	}
	return same, first
}

// mustEqual fails unless a and b are the same bits.
func mustEqual(t *testing.T, what string, a, b []float32) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d values, want %d", what, len(a), len(b))
	}
	if same, i := identical(a, b); same != len(b) {
		t.Fatalf("%s: %d of %d values differ; first at %d: Metal %v (%#08x), CPU %v (%#08x)", what, len(b)-same, len(b), i,
			a[i], math.Float32bits(a[i]), b[i], math.Float32bits(b[i]))
	}
}

// mustClose fails unless ‖a−b‖/‖b‖ ≤ tol and every value is finite
// where b's is.
func mustClose(t *testing.T, what string, a, b []float32, tol float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d values, want %d", what, len(a), len(b))
	}
	for i := range b {
		if !isFinite(b[i]) {
			continue
		}
		if !isFinite(a[i]) {
			t.Fatalf("%s: value %d is %v on Metal, %v on the CPU", what, i, a[i], b[i])
		}
	}
	if r := relL2(a, b); r > tol || math.IsNaN(r) {
		_, i := identical(a, b)
		t.Fatalf("%s: relative L2 difference %.3g > %.0e (first difference at %d: Metal %v, CPU %v)", what, r, tol, i, a[i], b[i])
	}
}

func isFinite(f float32) bool { return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) }

// randn is n normal values of standard deviation s.
func randn(r *rand.Rand, n int, s float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * s)
	}
	return v
}

// quantized makes a rows×cols tensor of type typ from random values.
func quantized(t *testing.T, r *rand.Rand, typ quant.Type, rows, cols int) *backend.Tensor {
	t.Helper()
	rb, ok := typ.RowSize(cols)
	if !ok {
		t.Fatalf("%v rows of %d", typ, cols)
	}
	data := make([]byte, rb*rows)
	if err := quant.Quantize(typ, randn(r, rows*cols, 0.5), data); err != nil {
		t.Fatal(err)
	}
	return &backend.Tensor{Name: "w", Type: typ, Ne: [4]int{cols, rows, 1, 1}, Data: data}
}

func vector(name string, v []float32) *backend.Tensor {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return &backend.Tensor{Name: name, Type: quant.F32, Ne: [4]int{len(v), 1, 1, 1}, Data: b}
}

// ulps is how many representable floats lie between a and b.
func ulps(a, b float32) int64 {
	ord := func(f float32) int64 {
		u := int64(math.Float32bits(f))
		if u&(1<<31) != 0 {
			return -(u &^ (1 << 31))
		}
		return u
	}
	d := ord(a) - ord(b)
	if d < 0 {
		d = -d
	}
	return d
}

// mustULP fails unless every value of a is within n units in the last
// place of b's (NaNs where b's are).
func mustULP(t *testing.T, what string, a, b []float32, n int64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d values, want %d", what, len(a), len(b))
	}
	worst, at := int64(0), -1
	for i := range b {
		if b[i] != b[i] {
			if a[i] == a[i] {
				t.Fatalf("%s: value %d is %v on Metal, NaN on the CPU", what, i, a[i])
			}
			continue
		}
		if u := ulps(a[i], b[i]); u > worst {
			worst, at = u, i
		}
	}
	if worst > n {
		t.Fatalf("%s: value %d is %d ulps from the CPU's (Metal %v, CPU %v); the bar is %d", what, at, worst, a[at], b[at], n)
	}
	same, _ := identical(a, b)
	t.Logf("%s: %d of %d values bit-identical, the rest within %d ulps", what, same, len(b), worst)
}
