package cpu

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// Attention is tiled by KV head and blocks of query rows. A job walks the
// cache in blocks of keyBlock positions, widening each block from F16 to
// float32 once for every query head of its group and every row of its
// query block, in two passes: scores, then the weighted sum of values.
// Between them each query's scores become probabilities exactly as ggml's
// (non-flash) soft_max does: global max, float64 sum, one scale — and,
// for an F16 cache, rounded to F16 as ggml's F16 product with V rounds
// them. Matching that rounding is what keeps logits within 2e-4 cosine
// of llama.cpp with an F16 cache; an online softmax (running max and
// rescaled sums, as flash attention does) cannot, because it never holds
// a normalised probability to round. The cost of exactness is the score
// buffer: query rows × heads × context floats per job, capped by
// scoreBudget by shrinking the query block — never tokens × tokens.
const (
	keyBlock    = 64
	queryBlock  = 32
	scoreBudget = 1 << 20 // bytes of scores per worker
)

type attnTask struct {
	b         *Backend
	dst, q    []float32
	gate      []float32 // a.Gated: sigmoid gates laid out like q
	sinks     []float32 // one logit per query head, or nil
	kv        *KV
	pos       []int32
	a         backend.Attention
	group     int // query heads per KV head
	hsplit    int // parts the group's heads are split into, for parallelism
	gh        int // query heads per job: group / hsplit
	qb        int // query rows per job
	nqb       int // query blocks
	window    int // a.Window, or 0
	base      int // the first position any query sees: scores start there
	ns        int // scores per query: positions [base, last query's]
	softCap   float32
	invSoftCp float32
}

// Attend writes, for each of the len(pos) query rows in q (rows of
// Heads×HeadDim), the attention output over the positions of kv that a
// query at pos[i] sees: [0, pos[i]], or its last a.Window positions.
// gate (a.Gated) holds sigmoid gates laid out like q, and sinks (nil, or
// one per query head) the logits of a.Sinks.
func (b *Backend) Attend(dst, q, gate []float32, kv *KV, pos []int32, a *backend.Attention, sinks []float32) {
	n := len(pos)
	if n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t := &b.at
	*t = attnTask{b: b, dst: dst, q: q, kv: kv, pos: pos, a: *a, sinks: sinks, window: max(0, a.Window)}
	if a.Gated {
		t.gate = gate
	}
	if a.SoftCap > 0 {
		t.softCap, t.invSoftCp = a.SoftCap, 1/a.SoftCap
	}
	t.group = a.Heads / a.KVHeads
	maxPos, base := 0, int(pos[0])
	for _, p := range pos {
		maxPos = max(maxPos, int(p))
		base = min(base, t.first(int(p)))
	}
	// Scores are kept for the positions some query sees, so a
	// sliding-window layer's cost does not grow with the position.
	ns := maxPos + 1 - base
	t.base, t.ns = base, ns
	if rows := kv.spec.Rows(); ns > rows {
		panic(fmt.Sprintf("cpu: attention over positions [%d,%d] of a cache of %d rows", base, maxPos, rows))
	}

	// Few rows (decode): split each group's heads across jobs until every
	// thread has one, so a model with two KV heads still keeps 16 cores
	// busy. Each part re-widens its key blocks, so no more than needed.
	t.hsplit = 1
	if n < queryBlock {
		for d := 2; d <= t.group && a.KVHeads*t.hsplit < b.threads; d++ {
			if t.group%d == 0 {
				t.hsplit = d
			}
		}
	}
	t.gh = t.group / t.hsplit
	t.qb = max(1, min(n, queryBlock, scoreBudget/(4*t.gh*ns)))
	t.nqb = (n + t.qb - 1) / t.qb

	hd := a.HeadDim
	for w := range b.work {
		ws := &b.work[w]
		ws.kf = growF(ws.kf, keyBlock*hd)
		ws.vf = growF(ws.vf, keyBlock*hd)
		ws.s = growF(ws.s, t.qb*t.gh*ns)
		ws.q = growF(ws.q, t.qb*t.gh*hd)
	}
	b.pool.parallel(t, a.KVHeads*t.hsplit*t.nqb, 1)
	*t = attnTask{}
}

// first is the first position a query at p sees.
func (t *attnTask) first(p int) int {
	if t.window > 0 {
		return max(0, p-t.window+1)
	}
	return 0
}

// run does jobs [lo, hi). Later query blocks (more keys in a causal
// prompt) come first so the longest jobs start earliest.
func (t *attnTask) run(w, lo, hi int) {
	for j := lo; j < hi; j++ {
		qb := t.nqb - 1 - j%t.nqb
		j2 := j / t.nqb
		t.block(w, j2/t.hsplit, (j2%t.hsplit)*t.gh, qb)
	}
}

// block computes query rows of block qb for heads h0 … h0+gh-1 of the
// group of KV head kvh.
func (t *attnTask) block(w, kvh, h0, qb int) {
	ws := &t.b.work[w]
	a := t.a
	hd, gh := a.HeadDim, t.gh
	r0, r1 := qb*t.qb, min(len(t.pos), (qb+1)*t.qb)
	rows := r1 - r0
	k16, v16 := t.kv.F16()
	k32, v32 := t.kv.F32()
	k8, v8 := t.kv.Q8()
	spec := t.kv.spec
	dim, rs := spec.Dim, spec.RowSize()
	head := func(i, h int) int { return (r0+i)*a.Heads + kvh*t.group + h0 + h }
	base, ns := t.base, t.ns

	maxPos, minFirst := 0, int(t.pos[r0])
	for i := range rows {
		maxPos = max(maxPos, int(t.pos[r0+i]))
		minFirst = min(minFirst, t.first(int(t.pos[r0+i])))
		for h := range gh {
			src := t.q[head(i, h)*hd:][:hd]
			dst := ws.q[(i*gh+h)*hd:][:hd]
			copy(dst, src)
			if k16 != nil {
				// ggml rounds queries to F16 to multiply an F16 cache.
				roundF16(dst)
			}
		}
	}
	end := maxPos + 1
	S := ws.s[:rows*gh*ns]
	// Blocks before every row's window hold nothing a row sees.
	kb0 := minFirst / keyBlock * keyBlock

	// block widens positions [kb, ke) of this KV head from the cache
	// (rows spec.Row(p): a ring's wrap around) and returns them with
	// their row stride.
	block := func(c16 []uint16, c32 []float32, c8 []byte, buf []float32, kb, ke int) ([]float32, int) {
		if c8 != nil {
			for p := kb; p < ke; p++ {
				r := spec.Row(p)
				dequantQ8(buf[(p-kb)*hd:(p-kb+1)*hd], c8[r*rs:(r+1)*rs], kvh*hd)
			}
			return buf, hd
		}
		if c16 == nil {
			if r := spec.Row(kb); r+ke-kb <= spec.Rows() {
				return c32[r*dim+kvh*hd:], dim
			}
			for p := kb; p < ke; p++ {
				off := spec.Row(p)*dim + kvh*hd
				copy(buf[(p-kb)*hd:(p-kb+1)*hd], c32[off:off+hd])
			}
			return buf, hd
		}
		for p := kb; p < ke; p++ {
			off := spec.Row(p)*dim + kvh*hd
			// The cache of a long context lives in memory, not cache:
			// ask for the same row of the next block meanwhile.
			if next := spec.Row(p + keyBlock); useAsm && next < spec.Rows() {
				prefetchAsm((*byte)(unsafe.Pointer(&c16[next*dim+kvh*hd])), 2*hd)
			}
			cvtF16(buf[(p-kb)*hd:(p-kb+1)*hd], c16[off:off+hd])
		}
		return buf, hd
	}

	// eachRun walks the cache block by block, widening each block of this
	// KV head's keys (or values) once, and calls f for every row i and
	// head h of the group with the run of the block that row sees: nk
	// positions, whose scores start at S[o] and rows at c (stride apart).
	// Both passes walk the same runs.
	eachRun := func(c16 []uint16, c32 []float32, c8 []byte, buf []float32, f func(i, h, o, nk int, c []float32, stride int)) {
		for kb := kb0; kb < end; kb += keyBlock {
			ke := min(kb+keyBlock, end)
			cf, stride := block(c16, c32, c8, buf, kb, ke)
			for i := range rows {
				p := int(t.pos[r0+i])
				lo := max(kb, t.first(p))
				if p < lo || lo >= ke {
					continue
				}
				nk := min(ke, p+1) - lo
				for h := range gh {
					f(i, h, (i*gh+h)*ns+lo-base, nk, cf[(lo-kb)*stride:], stride)
				}
			}
		}
	}

	// Pass 1: scores.
	eachRun(k16, k32, k8, ws.kf, func(i, h, o, nk int, kf []float32, stride int) {
		qi := i*gh + h
		dots(S[o:o+nk], ws.q[qi*hd:(qi+1)*hd], kf, stride, a.Scale)
	})

	// Softmax per query, as ggml_soft_max: (scores already scaled and
	// capped) max, exp, float64 sum, one float32 scale factor. A sink
	// joins the max and the sum, as ggml's soft_max with sinks.
	for i := range rows {
		p := int(t.pos[r0+i])
		for h := range gh {
			qi := i*gh + h
			s := S[qi*ns+t.first(p)-base : qi*ns+p+1-base]
			if t.softCap > 0 {
				softCap(s, t.softCap, t.invSoftCp)
			}
			mx := maxF32(s)
			var sink float32
			if t.sinks != nil {
				sink = t.sinks[kvh*t.group+h0+h]
				mx = max(mx, sink)
			}
			sum := softmaxExp(s, mx)
			if t.sinks != nil {
				sum += math.Exp(float64(sink - mx))
			}
			scaleF32(s, float32(1/sum))
			if v16 != nil {
				roundF16(s)
			}
			clear(t.dst[head(i, h)*hd:][:hd])
		}
	}

	// Pass 2: the weighted sum of values, accumulated straight into dst.
	eachRun(v16, v32, v8, ws.vf, func(i, h, o, nk int, vf []float32, stride int) {
		accum(t.dst[head(i, h)*hd:][:hd], S[o:o+nk], vf, stride)
	})
	if t.gate != nil {
		for i := range rows {
			for h := range gh {
				o := head(i, h) * hd
				gateSigmoid(t.dst[o:o+hd], t.gate[o:o+hd])
			}
		}
	}
}

// softCap caps scores as ggml's soft-capping does: s ← cap·tanh(s/cap).
func softCap(s []float32, c, inv float32) {
	for i, v := range s {
		s[i] = float32(math.Tanh(float64(v*inv))) * c
	}
}

// gateSigmoid multiplies each output by the sigmoid of its gate.
func gateSigmoid(dst, gate []float32) {
	for i, g := range gate {
		dst[i] *= 1 / (1 + float32(math.Exp(float64(-g))))
	}
}

// dequantQ8 widens values [e0, e0+len(dst)) of a Q8_0 cache row (blocks
// of an F16 scale and 32 int8s) as ggml's dequantize_row_q8_0 does. A
// head may start inside a block (head size 8 or 16), so it walks blocks
// from e0 rather than assume heads are block-aligned.
//
// A Q8_0 cache is attended in float32: queries are not rounded (llama.cpp
// quantizes them to Q8_0 for an integer dot product) and probabilities
// are not rounded to F16, so it is as close to an exact product with the
// stored keys and values as the F32 path, and not meant to match
// llama.cpp's q8_0 cache bit for bit.
func dequantQ8(dst []float32, row []byte, e0 int) {
	const bs, ts = 32, 34
	for j := 0; j < len(dst); {
		e := e0 + j
		blk := row[e/bs*ts:][:ts]
		in := e % bs
		d := quant.FP16ToFP32(uint16(blk[0]) | uint16(blk[1])<<8)
		n := min(bs-in, len(dst)-j)
		q := blk[2+in : 2+in+n]
		out := dst[j : j+n]
		for i, v := range q {
			out[i] = d * float32(int8(v))
		}
		j += n
	}
}
