package cpu

import (
	"math"
	"testing"

	"github.com/churon/churon/engine/quant"
)

// TestGeGLU pins ggml's GELU: the tanh approximation looked up at the F16
// rounding of the input (so within an F16 step of the exact function),
// zero at or below -10, the identity at or above 10, times up.
func TestGeGLU(t *testing.T) {
	exact := func(x float64) float64 {
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	}
	var gate, up []float32
	for x := -12.0; x <= 12; x += 0.013 {
		gate = append(gate, float32(x))
		up = append(up, float32(1+x/7))
	}
	gate = append(gate, -10, 10, 0, -0.0)
	up = append(up, 2, 2, 2, 2)
	dst := make([]float32, len(gate))
	b1 := New(1)
	defer b1.Close()
	b1.GeGLU(dst, gate, up)
	for i, g := range gate {
		x := float64(g)
		var want float64
		switch {
		case x <= -10:
			want = 0
		case x >= 10:
			want = x * float64(up[i])
		default:
			h := float64(quant.FP16ToFP32(quant.FP32ToFP16(g)))
			want = float64(quant.FP16ToFP32(quant.FP32ToFP16(float32(exact(h))))) * float64(up[i])
		}
		if d := math.Abs(float64(dst[i]) - want); d > 1e-6*math.Max(1, math.Abs(want)) {
			t.Fatalf("geglu(%g)·%g = %g, want %g", g, up[i], dst[i], want)
		}
		// And the table is GELU to F16 precision.
		if x > -10 && x < 10 {
			if d := math.Abs(float64(dst[i]) - exact(x)*float64(up[i])); d > 2e-3*math.Max(1, math.Abs(x*float64(up[i]))) {
				t.Fatalf("geglu(%g) = %g, exact GELU gives %g", g, dst[i], exact(x)*float64(up[i]))
			}
		}
	}
	// Split over threads, a long vector gives the same values.
	long := make([]float32, 5*elemChunk)
	lup := make([]float32, len(long))
	for i := range long {
		long[i], lup[i] = float32(i%997)/50-10, 1
	}
	one, many := make([]float32, len(long)), make([]float32, len(long))
	b1.GeGLU(one, long, lup)
	b := New(3)
	defer b.Close()
	b.GeGLU(many, long, lup)
	for i := range one {
		if one[i] != many[i] {
			t.Fatalf("element %d: %g with 1 thread, %g with 3", i, one[i], many[i])
		}
	}
}

func TestSoftCap(t *testing.T) {
	x := []float32{-100, -1, 0, 0.5, 3, 1000}
	b := New(1)
	defer b.Close()
	b.SoftCap(x, 2)
	for i, v := range []float64{-100, -1, 0, 0.5, 3, 1000} {
		want := 2 * math.Tanh(v/2)
		if math.Abs(float64(x[i])-want) > 1e-6 {
			t.Errorf("softcap(%g) = %g, want %g", v, x[i], want)
		}
	}
}
