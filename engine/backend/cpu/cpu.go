// Package cpu is the reference backend: every operation the architectures
// need, on the host CPU, split across a persistent worker pool.
//
// Numerics follow llama.cpp's CPU backend where it matters for agreement:
// activations are rounded to the weight type's dot-product partner
// (quant.VecDotType) before a matrix product, RMSNorm and softmax sums are
// accumulated in float64 as ggml does, and an F16 KV cache rounds queries
// and attention weights to F16 like ggml's F16 matrix products.
package cpu

import (
	"fmt"
	"math"
	"sync"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// Backend runs on the CPU. It is safe for concurrent use: calls share
// only the worker pool.
type Backend struct {
	pool    *pool
	threads int
	bufs    sync.Pool // *[]byte scratch for quantized activations
}

// New returns a CPU backend using the given number of threads
// (0 = all logical CPUs).
func New(threads int) *Backend {
	p := newPool(threads)
	return &Backend{pool: p, threads: p.workers}
}

// Close stops the worker goroutines. The backend must not be used after.
func (b *Backend) Close() { b.pool.close() }

// Threads is the number of threads the backend uses.
func (b *Backend) Threads() int { return b.threads }

// Name describes the backend for the status line.
func (b *Backend) Name() string { return fmt.Sprintf("CPU (%d threads)", b.threads) }

func (b *Backend) scratch(n int) *[]byte {
	if v := b.bufs.Get(); v != nil {
		p := v.(*[]byte)
		if cap(*p) >= n {
			*p = (*p)[:n]
			return p
		}
	}
	s := make([]byte, n)
	return &s
}

// MatMul implements backend.Backend.
func (b *Backend) MatMul(dst []float32, w *backend.Tensor, x []float32, n int) {
	cols, rows := w.Cols(), w.Rows()
	at := quant.VecDotType(w.Type)
	arow, ok := at.RowSize(cols)
	if !ok {
		panic(fmt.Sprintf("cpu: matmul %s: row of %d not a whole number of %v blocks", w.Name, cols, at))
	}
	wrow, _ := w.Type.RowSize(cols)
	buf := b.scratch(arow * n)
	act := *buf
	for i := range n {
		if err := quant.QuantizeActivations(at, x[i*cols:(i+1)*cols], act[i*arow:(i+1)*arow]); err != nil {
			panic(fmt.Sprintf("cpu: matmul %s: %v", w.Name, err))
		}
	}
	// Row-outer: each weight row is read once for all n inputs, which is
	// what makes prefill cheaper per token than decode.
	grain := max(1, 16/max(1, n))
	b.pool.parallelFor(rows, grain, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			wr := w.Data[r*wrow : (r+1)*wrow]
			for i := range n {
				dst[i*rows+r] = quant.VecDot(w.Type, wr, act[i*arow:(i+1)*arow], cols)
			}
		}
	})
	b.bufs.Put(buf)
}

// Embed implements backend.Backend.
func (b *Backend) Embed(dst []float32, table *backend.Tensor, ids []int32) error {
	cols := table.Cols()
	rowBytes, ok := table.Type.RowSize(cols)
	if !ok {
		return fmt.Errorf("cpu: embed %s: bad row size", table.Name)
	}
	for i, id := range ids {
		if id < 0 || int(id) >= table.Rows() {
			return fmt.Errorf("cpu: embed: token id %d outside vocabulary of %d", id, table.Rows())
		}
		src := table.Data[int(id)*rowBytes : (int(id)+1)*rowBytes]
		if err := quant.Dequantize(table.Type, src, dst[i*cols:(i+1)*cols]); err != nil {
			return fmt.Errorf("cpu: embed %s: %w", table.Name, err)
		}
	}
	return nil
}

// RMSNorm implements backend.Backend.
func (b *Backend) RMSNorm(dst, x, w []float32, eps float32) {
	d := len(w)
	for r := 0; r+d <= len(x); r += d {
		row, out := x[r:r+d], dst[r:r+d]
		var sum float64
		for _, v := range row {
			sum += float64(v * v)
		}
		mean := float32(sum / float64(d))
		scale := float32(1 / math.Sqrt(float64(mean+eps)))
		for j, v := range row {
			out[j] = (v * scale) * w[j]
		}
	}
}

// RoPE implements backend.Backend, following ggml's rope with YaRN.
func (b *Backend) RoPE(x []float32, pos []int32, heads, headDim int, r *backend.Rope) {
	nd := r.Dims
	half := nd / 2
	cs := make([]float32, nd) // cos,sin pairs per dimension pair
	thetaScale := float32(math.Pow(float64(r.FreqBase), -2.0/float64(nd)))
	var corr [2]float32
	if r.ExtFactor != 0 {
		corr = yarnCorrDims(nd, r.OrigContext, r.FreqBase, r.BetaFast, r.BetaSlow)
	}
	for i, p := range pos {
		theta := float32(p)
		for k := range half {
			ff := float32(1)
			if r.FreqFactors != nil {
				ff = r.FreqFactors[k]
			}
			c, s := ropeYarn(theta/ff, r.FreqScale, corr, 2*k, r.ExtFactor, r.AttnFactor)
			cs[2*k], cs[2*k+1] = c, s
			theta *= thetaScale
		}
		row := x[i*heads*headDim : (i+1)*heads*headDim]
		for h := range heads {
			v := row[h*headDim : (h+1)*headDim]
			for k := range half {
				c, s := cs[2*k], cs[2*k+1]
				var a, bb *float32
				if r.Mode == backend.RopeNeoX {
					a, bb = &v[k], &v[k+half]
				} else {
					a, bb = &v[2*k], &v[2*k+1]
				}
				x0, x1 := *a, *bb
				*a = x0*c - x1*s
				*bb = x0*s + x1*c
			}
		}
	}
}

func ropeYarn(thetaExtrap, freqScale float32, corr [2]float32, i0 int, extFactor, mscale float32) (float32, float32) {
	thetaInterp := freqScale * thetaExtrap
	theta := thetaInterp
	if extFactor != 0 {
		y := (float32(i0)/2 - corr[0]) / max(0.001, corr[1]-corr[0])
		rampMix := (1 - min(1, max(0, y))) * extFactor
		theta = thetaInterp*(1-rampMix) + thetaExtrap*rampMix
		mscale *= 1 + 0.1*float32(math.Log(float64(1/freqScale)))
	}
	return float32(math.Cos(float64(theta))) * mscale, float32(math.Sin(float64(theta))) * mscale
}

func yarnCorrDims(nDims, nCtxOrig int, base, betaFast, betaSlow float32) [2]float32 {
	corr := func(nRot float32) float64 {
		return float64(nDims) * math.Log(float64(nCtxOrig)/(float64(nRot)*2*math.Pi)) / (2 * math.Log(float64(base)))
	}
	start := math.Floor(corr(betaFast))
	end := math.Ceil(corr(betaSlow))
	return [2]float32{float32(max(0, start)), float32(min(float64(nDims-1), end))}
}

// Attend implements backend.Backend.
func (b *Backend) Attend(dst, q []float32, kv *backend.KVCache, layer int, pos []int32, a backend.Attention) {
	hd := a.HeadDim
	group := a.Heads / a.KVHeads
	n := len(pos)
	k16, v16 := kv.F16(layer)
	k32, v32 := kv.F32(layer)
	b.pool.parallelFor(n*a.Heads, 1, func(lo, hi int) {
		scores := make([]float32, kv.Context)
		qh16 := make([]float32, hd)
		acc := make([]float64, hd)
		for job := lo; job < hi; job++ {
			i, h := job/a.Heads, job%a.Heads
			kvh := h / group
			qh := q[(i*a.Heads+h)*hd : (i*a.Heads+h+1)*hd]
			if k16 != nil {
				// ggml multiplies an F16 cache by queries rounded to F16.
				for j, v := range qh {
					qh16[j] = quant.FP16ToFP32(quant.FP32ToFP16(v))
				}
				qh = qh16
			}
			last := int(pos[i])
			mx := float32(math.Inf(-1))
			for t := 0; t <= last; t++ {
				off := t*kv.Dim + kvh*hd
				var s float64
				if k16 != nil {
					kr := k16[off : off+hd]
					for j, v := range qh {
						s += float64(v * quant.FP16ToFP32(kr[j]))
					}
				} else {
					kr := k32[off : off+hd]
					for j, v := range qh {
						s += float64(v * kr[j])
					}
				}
				sc := float32(s) * a.Scale
				scores[t] = sc
				mx = max(mx, sc)
			}
			var sum float64
			for t := 0; t <= last; t++ {
				e := float32(math.Exp(float64(scores[t] - mx)))
				scores[t] = e
				sum += float64(e)
			}
			inv := float32(1 / sum)
			clear(acc)
			for t := 0; t <= last; t++ {
				p := scores[t] * inv
				off := t*kv.Dim + kvh*hd
				if v16 != nil {
					// ...and attention weights rounded to F16 for the values.
					p = quant.FP16ToFP32(quant.FP32ToFP16(p))
					vr := v16[off : off+hd]
					for j := range acc {
						acc[j] += float64(p * quant.FP16ToFP32(vr[j]))
					}
				} else {
					vr := v32[off : off+hd]
					for j := range acc {
						acc[j] += float64(p * vr[j])
					}
				}
			}
			out := dst[(i*a.Heads+h)*hd : (i*a.Heads+h+1)*hd]
			for j := range out {
				out[j] = float32(acc[j])
			}
		}
	})
}

// SwiGLU implements backend.Backend.
func (b *Backend) SwiGLU(dst, gate, up []float32) {
	for i, g := range gate {
		dst[i] = g / (1 + float32(math.Exp(float64(-g)))) * up[i]
	}
}

// Add implements backend.Backend.
func (b *Backend) Add(dst, x []float32) {
	for i, v := range x {
		dst[i] += v
	}
}

// AddBias implements backend.Backend.
func (b *Backend) AddBias(x, bias []float32) {
	d := len(bias)
	for r := 0; r+d <= len(x); r += d {
		row := x[r : r+d]
		for j, v := range bias {
			row[j] += v
		}
	}
}

var _ backend.Backend = (*Backend)(nil)
