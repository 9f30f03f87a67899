package cpu

import (
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
	b      *Backend
	dst, q []float32
	kv     *backend.KVCache
	layer  int
	pos    []int32
	a      backend.Attention
	group  int // query heads per KV head
	hsplit int // parts the group's heads are split into, for parallelism
	gh     int // query heads per job: group / hsplit
	qb     int // query rows per job
	nqb    int // query blocks
}

// Attend implements backend.Backend.
func (b *Backend) Attend(dst, q []float32, kv *backend.KVCache, layer int, pos []int32, a backend.Attention) {
	n := len(pos)
	if n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t := &b.at
	*t = attnTask{b: b, dst: dst, q: q, kv: kv, layer: layer, pos: pos, a: a}
	t.group = a.Heads / a.KVHeads
	maxPos := 0
	for _, p := range pos {
		maxPos = max(maxPos, int(p))
	}
	ns := maxPos + 1

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
	t.dst, t.q, t.kv, t.pos = nil, nil, nil, nil
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
	k16, v16 := t.kv.F16(t.layer)
	k32, v32 := t.kv.F32(t.layer)
	k8, v8 := t.kv.Q8(t.layer)
	dim, rs := t.kv.Dim, t.kv.RowSize()
	head := func(i, h int) int { return (r0+i)*a.Heads + kvh*t.group + h0 + h }

	maxPos := 0
	for i := range rows {
		maxPos = max(maxPos, int(t.pos[r0+i]))
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
	ns := maxPos + 1
	S := ws.s[:rows*gh*ns]

	// block widens positions [kb, ke) of this KV head from the cache and
	// returns them with their row stride.
	block := func(c16 []uint16, c32 []float32, c8 []byte, buf []float32, kb, ke int) ([]float32, int) {
		if c8 != nil {
			for p := kb; p < ke; p++ {
				dequantQ8(buf[(p-kb)*hd:(p-kb+1)*hd], c8[p*rs:(p+1)*rs], kvh*hd)
			}
			return buf, hd
		}
		if c16 == nil {
			return c32[kb*dim+kvh*hd:], dim
		}
		for p := kb; p < ke; p++ {
			off := p*dim + kvh*hd
			// The cache of a long context lives in memory, not cache:
			// ask for the same row of the next block meanwhile.
			if next := off + keyBlock*dim; useAsm && next+hd <= len(c16) {
				prefetchAsm((*byte)(unsafe.Pointer(&c16[next])), 2*hd)
			}
			cvtF16(buf[(p-kb)*hd:(p-kb+1)*hd], c16[off:off+hd])
		}
		return buf, hd
	}

	// Pass 1: scores.
	for kb := 0; kb < ns; kb += keyBlock {
		ke := min(kb+keyBlock, ns)
		kf, stride := block(k16, k32, k8, ws.kf, kb, ke)
		for i := range rows {
			p := int(t.pos[r0+i])
			if p < kb {
				continue
			}
			nk := min(ke, p+1) - kb
			for h := range gh {
				qi := i*gh + h
				dots(S[qi*ns+kb:qi*ns+kb+nk], ws.q[qi*hd:(qi+1)*hd], kf, stride, a.Scale)
			}
		}
	}

	// Softmax per query, as ggml_soft_max: (scores already scaled) max,
	// exp, float64 sum, one float32 scale factor.
	for i := range rows {
		p := int(t.pos[r0+i])
		for h := range gh {
			qi := i*gh + h
			s := S[qi*ns : qi*ns+p+1]
			sum := softmaxExp(s, maxF32(s))
			scaleF32(s, float32(1/sum))
			if v16 != nil {
				roundF16(s)
			}
			clear(t.dst[head(i, h)*hd:][:hd])
		}
	}

	// Pass 2: the weighted sum of values, accumulated straight into dst.
	for kb := 0; kb < ns; kb += keyBlock {
		ke := min(kb+keyBlock, ns)
		vf, stride := block(v16, v32, v8, ws.vf, kb, ke)
		for i := range rows {
			p := int(t.pos[r0+i])
			if p < kb {
				continue
			}
			nk := min(ke, p+1) - kb
			for h := range gh {
				qi := i*gh + h
				accum(t.dst[head(i, h)*hd:][:hd], S[qi*ns+kb:qi*ns+kb+nk], vf, stride)
			}
		}
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
