package cpu

import (
	"math"
	"sync"

	"github.com/churon/churon/engine/quant"
)

// GELU as ggml computes it on the CPU: the tanh approximation, looked up
// in a table of its values at every F16 input (GGML_GELU_FP16), with
// inputs at or below -10 giving 0 and at or above 10 passing through.
// Matching the table, not the exact function, is what keeps Gemma's
// feed-forward within rounding of llama.cpp: the F16 rounding of the
// input and of the result is up to 2^-11 relative each.
const (
	geluCoefA       = float32(0.044715)
	geluSqrt2OverPi = float32(0.79788456080286535587989211986876)
)

var (
	geluOnce  sync.Once
	geluTable []uint16 // F16 GELU of every F16 input, by its bits
)

// geluF32 is ggml_gelu_f32: the approximation in float32 arithmetic.
func geluF32(x float32) float32 {
	return 0.5 * x * (1 + float32(math.Tanh(float64(geluSqrt2OverPi*x*(1+geluCoefA*x*x)))))
}

func geluTab() []uint16 {
	geluOnce.Do(func() {
		t := make([]uint16, 1<<16)
		for i := range t {
			t[i] = quant.FP32ToFP16(geluF32(quant.FP16ToFP32(uint16(i))))
		}
		geluTable = t
	})
	return geluTable
}

// geglu sets dst[i] = gelu(gate[i]) · up[i], as ggml_vec_geglu_f32.
func geglu(dst, gate, up []float32) {
	tab := geluTab()
	_ = up[len(gate)-1]
	_ = dst[len(gate)-1]
	for i, g := range gate {
		switch {
		case g <= -10:
			dst[i] = 0
		case g >= 10:
			dst[i] = g * up[i]
		default:
			dst[i] = quant.FP16ToFP32(tab[quant.FP32ToFP16(g)]) * up[i]
		}
	}
}

// gegluTask splits geglu over the workers.
type gegluTask struct{ dst, gate, up []float32 }

func (t *gegluTask) run(_, lo, hi int) {
	lo, hi = lo*elemChunk, min(len(t.dst), hi*elemChunk)
	geglu(t.dst[lo:hi], t.gate[lo:hi], t.up[lo:hi])
}

// GeGLU computes dst = gelu(gate) * up, elementwise, with ggml's GELU
// (tanh approximation through its F16 table).
func (b *Backend) GeGLU(dst, gate, up []float32) {
	n := len(gate)
	if n == 0 {
		return
	}
	if n < 2*elemChunk || b.threads == 1 {
		geglu(dst[:n], gate, up[:n])
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gg = gegluTask{dst: dst[:n], gate: gate, up: up[:n]}
	b.pool.parallel(&b.gg, (n+elemChunk-1)/elemChunk, 1)
	b.gg = gegluTask{}
}

// Scale multiplies every value of x by s, as ggml_scale.
func (b *Backend) Scale(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}

// SoftCap caps every value v of x as c·tanh(v/c) the way llama.cpp's
// graph spells it: a scale by 1/c, tanh, a scale by c, each rounded to
// float32.
func (b *Backend) SoftCap(x []float32, c float32) {
	inv := 1 / c
	for i, v := range x {
		x[i] = float32(math.Tanh(float64(v*inv))) * c
	}
}
