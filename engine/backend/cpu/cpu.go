package cpu

import (
	"fmt"
	"math"
	"sync"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// Backend is the CPU's kernels on host slices, the Device's engine room
// (and the fake test device's). It is safe for concurrent use:
// operations are serialised (they share one pool of cores and the
// scratch buffers).
type Backend struct {
	pool    *pool
	threads int

	mu     sync.Mutex
	mm     matmulTask
	qa     quantTask
	at     attnTask
	ew     elemTask
	gg     gegluTask
	dn     deltaTask
	dnPrep deltaPrep
	rope   ropeCache
	// per-worker scratch, indexed by the worker number a task gets
	work []workerScratch
}

type workerScratch struct {
	kf  []float32 // attention: a key block widened to float32
	vf  []float32 // ... and its values
	s   []float32 // attention scores of one block
	q   []float32 // queries of one job (rounded as the cache requires)
	acc []float32 // running outputs of one job
	ml  []float32 // running max and sum per query
}

// New returns a CPU backend using the given number of threads
// (0 = DefaultThreads).
func New(threads int) *Backend {
	p := newPool(threads)
	b := &Backend{pool: p, threads: p.workers, work: make([]workerScratch, p.workers)}
	b.mm.b, b.qa.b, b.at.b = b, b, b
	return b
}

// Close stops the worker goroutines. The backend must not be used after.
func (b *Backend) Close() { b.pool.close() }

// Threads is the number of threads the backend uses.
func (b *Backend) Threads() int { return b.threads }

// Name describes the backend for the status line and benchmark reports:
// which kernels run ("avx512", with "+amx" where prompts run on tile
// kernels), on how many threads, and CHURON_CPU where it is set (it
// caps the level).
func (b *Backend) Name() string { return b.name("") }

// name is Name with a note of the device's (its weights' layout) after
// the threads.
func (b *Backend) name(note string) string {
	if note != "" {
		note = "; " + note
	}
	level := quant.SIMDLevel()
	if quant.AMX() {
		level += "+amx"
	}
	if v, known := quant.CPUSetting(); v != "" {
		if known {
			note += "; CHURON_CPU=" + v
		} else {
			note += fmt.Sprintf("; CHURON_CPU=%q not understood", v)
		}
	}
	return fmt.Sprintf("CPU %s (%d threads%s)", level, b.threads, note)
}

func growF(s []float32, n int) []float32 {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]float32, n, n+n/4)
}

func growB(s []byte, n int) []byte {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]byte, n, n+n/4)
}

// Embed writes the rows of table named by ids into dst (len(ids)×Cols).
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

// RMSNorm normalises each row of x (row length len(w)) into dst and
// multiplies by w. dst may alias x.
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

// ropeCache keeps the cos/sin table of the last positions rotated: every
// layer rotates q and k at the same positions with the same parameters,
// so one table serves the whole forward pass.
type ropeCache struct {
	r   backend.Rope // the parameters the table was made with
	ok  bool
	pos []int32
	cs  []float32 // per position: nd/2 (cos, sin) pairs
}

// RoPE rotates each head of x (len(pos) rows of heads×headDim) in place,
// following ggml's rope with YaRN; pos[i] is the position of row i.
func (b *Backend) RoPE(x []float32, pos []int32, heads, headDim int, r *backend.Rope) {
	b.mu.Lock()
	defer b.mu.Unlock()
	nd := r.Dims
	half := nd / 2
	cs := b.rope.table(pos, r)
	for i := range pos {
		pc := cs[i*nd : (i+1)*nd]
		row := x[i*heads*headDim : (i+1)*heads*headDim]
		for h := range heads {
			v := row[h*headDim : (h+1)*headDim]
			if r.Mode == backend.RopeNeoX {
				a, bb := v[:half], v[half:nd]
				for k := range half {
					c, s := pc[2*k], pc[2*k+1]
					x0, x1 := a[k], bb[k]
					a[k] = x0*c - x1*s
					bb[k] = x0*s + x1*c
				}
			} else {
				for k := range half {
					c, s := pc[2*k], pc[2*k+1]
					x0, x1 := v[2*k], v[2*k+1]
					v[2*k] = x0*c - x1*s
					v[2*k+1] = x0*s + x1*c
				}
			}
		}
	}
}

func (c *ropeCache) table(pos []int32, r *backend.Rope) []float32 {
	nd := r.Dims
	if c.ok && sameRope(&c.r, r) && len(c.pos) == len(pos) && len(c.cs) == len(pos)*nd {
		same := true
		for i, p := range pos {
			if c.pos[i] != p {
				same = false
				break
			}
		}
		if same {
			return c.cs
		}
	}
	c.r, c.ok = *r, true
	c.pos = append(c.pos[:0], pos...)
	c.cs = growF(c.cs, len(pos)*nd)
	half := nd / 2
	thetaScale := float32(math.Pow(float64(r.FreqBase), -2.0/float64(nd)))
	var corr [2]float32
	if r.ExtFactor != 0 {
		corr = yarnCorrDims(nd, r.OrigContext, r.FreqBase, r.BetaFast, r.BetaSlow)
	}
	for i, p := range pos {
		pc := c.cs[i*nd : (i+1)*nd]
		theta := float32(p)
		for k := range half {
			ff := float32(1)
			if r.FreqFactors != nil {
				ff = r.FreqFactors[k]
			}
			pc[2*k], pc[2*k+1] = ropeYarn(theta/ff, r.FreqScale, corr, 2*k, r.ExtFactor, r.AttnFactor)
			theta *= thetaScale
		}
	}
	return c.cs
}

func sameRope(a, b *backend.Rope) bool {
	if len(a.FreqFactors) != len(b.FreqFactors) ||
		(len(a.FreqFactors) > 0 && &a.FreqFactors[0] != &b.FreqFactors[0]) {
		return false
	}
	return a.Mode == b.Mode && a.Dims == b.Dims && a.FreqBase == b.FreqBase && a.FreqScale == b.FreqScale &&
		a.ExtFactor == b.ExtFactor && a.AttnFactor == b.AttnFactor && a.BetaFast == b.BetaFast &&
		a.BetaSlow == b.BetaSlow && a.OrigContext == b.OrigContext
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

// elemTask runs an element-wise operation over chunks of a long vector.
type elemTask struct {
	op            int
	dst, gate, up []float32
}

const (
	opSwiGLU = iota
)

func (t *elemTask) run(_, lo, hi int) {
	lo, hi = lo*elemChunk, min(len(t.dst), hi*elemChunk)
	switch t.op {
	case opSwiGLU:
		swiglu(t.dst[lo:hi], t.gate[lo:hi], t.up[lo:hi])
	}
}

// elemChunk is the grain of element-wise loops: the vector kernels do a
// few thousand elements in about the time a parallel loop takes to start.
const elemChunk = 8192

// SwiGLU computes dst = silu(gate) * up, elementwise.
func (b *Backend) SwiGLU(dst, gate, up []float32) {
	n := len(gate)
	if n < 2*elemChunk || b.threads == 1 {
		swiglu(dst[:n], gate, up[:n])
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ew = elemTask{op: opSwiGLU, dst: dst[:n], gate: gate, up: up[:n]}
	jobs := (n + elemChunk - 1) / elemChunk
	b.pool.parallel(&b.ew, jobs, 1)
	b.ew = elemTask{}
}

// Add computes dst += x, elementwise.
func (b *Backend) Add(dst, x []float32) {
	for i, v := range x {
		dst[i] += v
	}
}

// AddBias adds bias to each row of x (row length len(bias)).
func (b *Backend) AddBias(x, bias []float32) {
	d := len(bias)
	for r := 0; r+d <= len(x); r += d {
		row := x[r : r+d]
		for j, v := range bias {
			row[j] += v
		}
	}
}
