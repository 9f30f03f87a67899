// Package gputwin holds the test helpers the GPU backends (cuda, metal)
// share: a twin that runs the same operations on a GPU device and on the
// CPU, the oracle every kernel is pinned to, and the checks that compare
// the two. It is imported only by those backends' tests.
package gputwin

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/cpu"
	"github.com/churon/churon/engine/quant"
)

// Twin runs the same operations on the device G and on the CPU C.
type Twin[D backend.Device] struct {
	T *testing.T
	G D
	C *cpu.Device
}

// New pairs g with a two-thread CPU device, closed when t ends.
func New[D backend.Device](t *testing.T, g D) *Twin[D] {
	t.Helper()
	tw := &Twin[D]{T: t, G: g, C: cpu.NewDevice(2)}
	t.Cleanup(func() { tw.C.Close() })
	return tw
}

// Pair is one buffer on each device.
type Pair struct{ G, C backend.Buf }

// Buf allocates vals on both devices.
func (tw *Twin[D]) Buf(vals []float32) Pair {
	tw.T.Helper()
	g, err := tw.G.Alloc(len(vals))
	if err != nil {
		tw.T.Fatal(err)
	}
	c, _ := tw.C.Alloc(len(vals))
	tw.G.Write(g, vals)
	tw.C.Write(c, vals)
	return Pair{g, c}
}

// Zeros is n zeros on both devices.
func (tw *Twin[D]) Zeros(n int) Pair { return tw.Buf(make([]float32, n)) }

// Read returns both devices' values of p.
func (tw *Twin[D]) Read(p Pair) (g, c []float32) {
	tw.T.Helper()
	g, c = make([]float32, p.G.Len()), make([]float32, p.C.Len())
	tw.G.Read(g, p.G)
	tw.C.Read(c, p.C)
	if err := tw.G.Sync(); err != nil {
		tw.T.Fatal(err)
	}
	if err := tw.C.Sync(); err != nil {
		tw.T.Fatal(err)
	}
	return g, c
}

// WPair is one weight on each device.
type WPair struct{ G, C backend.Weight }

// Weight uploads t to both devices.
func (tw *Twin[D]) Weight(t *backend.Tensor) WPair {
	tw.T.Helper()
	g, err := tw.G.Upload(t)
	if err != nil {
		tw.T.Fatal(err)
	}
	c, _ := tw.C.Upload(t)
	return WPair{g, c}
}

// Both runs f on each device: side 0 is the GPU, side 1 the CPU.
func (tw *Twin[D]) Both(f func(d backend.Device, side int)) {
	f(tw.G, 0)
	f(tw.C, 1)
}

// On is p's buffer on side (0 the GPU, 1 the CPU).
func (p Pair) On(side int) backend.Buf {
	if side == 0 {
		return p.G
	}
	return p.C
}

// On is w's weight on side (0 the GPU, 1 the CPU).
func (w WPair) On(side int) backend.Weight {
	if side == 0 {
		return w.G
	}
	return w.C
}

// Check compares a GPU's values (a) with the CPU's (b); its failure
// messages name the device.
type Check struct {
	Name string // the device as a value's label: "GPU", "Metal"
	On   string // the device after a verb: "on the GPU", "on Metal"
}

// RelL2 is ‖a−b‖/‖b‖ (0 when both are 0).
func RelL2(a, b []float32) float64 {
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

// Identical counts the values that agree bit for bit, and says where the
// first difference is.
func Identical(a, b []float32) (same int, first int) {
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

// MustEqual fails unless a and b are the same bits.
func (k Check) MustEqual(t *testing.T, what string, a, b []float32) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d values, want %d", what, len(a), len(b))
	}
	if same, i := Identical(a, b); same != len(b) {
		t.Fatalf("%s: %d of %d values differ; first at %d: %s %v (%#08x), CPU %v (%#08x)", what, len(b)-same, len(b), i,
			k.Name, a[i], math.Float32bits(a[i]), b[i], math.Float32bits(b[i]))
	}
}

// MustClose fails unless ‖a−b‖/‖b‖ ≤ tol and every value is finite
// where b's is.
func (k Check) MustClose(t *testing.T, what string, a, b []float32, tol float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d values, want %d", what, len(a), len(b))
	}
	for i := range b {
		if !IsFinite(b[i]) {
			continue
		}
		if !IsFinite(a[i]) {
			t.Fatalf("%s: value %d is %v %s, %v on the CPU", what, i, a[i], k.On, b[i])
		}
	}
	if r := RelL2(a, b); r > tol || math.IsNaN(r) {
		_, i := Identical(a, b)
		t.Fatalf("%s: relative L2 difference %.3g > %.0e (first difference at %d: %s %v, CPU %v)", what, r, tol, i, k.Name, a[i], b[i])
	}
}

// ULPs is how many representable floats lie between a and b.
func ULPs(a, b float32) int64 {
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

// MustULP fails unless every value of a is within n units in the last
// place of b's (NaNs where b's are).
func (k Check) MustULP(t *testing.T, what string, a, b []float32, n int64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d values, want %d", what, len(a), len(b))
	}
	worst, at := int64(0), -1
	for i := range b {
		if b[i] != b[i] {
			if a[i] == a[i] {
				t.Fatalf("%s: value %d is %v %s, NaN on the CPU", what, i, a[i], k.On)
			}
			continue
		}
		if u := ULPs(a[i], b[i]); u > worst {
			worst, at = u, i
		}
	}
	if worst > n {
		t.Fatalf("%s: value %d is %d ulps from the CPU's (%s %v, CPU %v); the bar is %d", what, at, worst, k.Name, a[at], b[at], n)
	}
	same, _ := Identical(a, b)
	t.Logf("%s: %d of %d values bit-identical, the rest within %d ulps", what, same, len(b), worst)
}

// IsFinite says f is neither NaN nor infinite.
func IsFinite(f float32) bool { return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) }

// Randn is n normal values of standard deviation s.
func Randn(r *rand.Rand, n int, s float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * s)
	}
	return v
}

// Quantized makes a rows×cols tensor of type typ from random values.
func Quantized(t *testing.T, r *rand.Rand, typ quant.Type, rows, cols int) *backend.Tensor {
	t.Helper()
	rb, ok := typ.RowSize(cols)
	if !ok {
		t.Fatalf("%v rows of %d", typ, cols)
	}
	data := make([]byte, rb*rows)
	if err := quant.Quantize(typ, Randn(r, rows*cols, 0.5), data); err != nil {
		t.Fatal(err)
	}
	return &backend.Tensor{Name: "w", Type: typ, Ne: [4]int{cols, rows, 1, 1}, Data: data}
}

// Vector is v as a one-row F32 tensor called name.
func Vector(name string, v []float32) *backend.Tensor {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return &backend.Tensor{Name: name, Type: quant.F32, Ne: [4]int{len(v), 1, 1, 1}, Data: b}
}
