package arch

import (
	"fmt"
	"math"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/gguf"
)

// variant says how one member of the Llama family differs from Llama.
type variant struct {
	rope     backend.RopeMode
	qkvBias  bool // Qwen2: biases on the q, k and v projections
	qkNorm   bool // Qwen3: RMSNorm over each head of q and k before RoPE
	fusedQKV bool // Phi-3: one attn_qkv matrix
	fusedFFN bool // Phi-3: ffn_up holds gate and up, in that order
}

func init() {
	Register("llama", func(f *gguf.File) (Model, error) {
		return buildTransformer(f, "llama", variant{rope: backend.RopeNormal})
	})
	Register("qwen2", func(f *gguf.File) (Model, error) {
		return buildTransformer(f, "qwen2", variant{rope: backend.RopeNeoX, qkvBias: true})
	})
	Register("qwen3", func(f *gguf.File) (Model, error) {
		return buildTransformer(f, "qwen3", variant{rope: backend.RopeNeoX, qkNorm: true})
	})
	Register("phi3", func(f *gguf.File) (Model, error) {
		return buildTransformer(f, "phi3", variant{rope: backend.RopeNeoX, fusedQKV: true, fusedFFN: true})
	})
}

// layer holds one transformer block. Matrix shapes are ggml ne order
// [cols, rows]: input width first.
type layer struct {
	attnNorm []float32       // [embd]
	q        *backend.Tensor // [embd, heads*headDim]
	k        *backend.Tensor // [embd, kvDim]
	v        *backend.Tensor // [embd, kvDim]
	qkv      *backend.Tensor // [embd, heads*headDim + 2*kvDim] (fused variant)
	qb, kb   []float32       // [heads*headDim], [kvDim] (qkvBias)
	vb       []float32       // [kvDim]
	qNorm    []float32       // [headDim] (qkNorm)
	kNorm    []float32       // [headDim]
	o        *backend.Tensor // [heads*headDim, embd]
	ffnNorm  []float32       // [embd]
	gate     *backend.Tensor // [embd, ff]
	up       *backend.Tensor // [embd, ff] or [embd, 2*ff] (fused variant)
	down     *backend.Tensor // [ff, embd]
}

// transformer is the Llama family: pre-norm blocks of grouped-query
// attention with RoPE and a SwiGLU feed-forward.
type transformer struct {
	cfg     Config
	v       variant
	embd    *backend.Tensor // [embd, vocab]
	outNorm []float32       // [embd]
	output  *backend.Tensor // [embd, vocab]; token_embd when tied
	layers  []layer
}

func (m *transformer) Config() *Config { return &m.cfg }

func buildTransformer(f *gguf.File, name string, v variant) (Model, error) {
	l := &loader{f: f, arch: name}
	c := Config{Arch: name}
	c.Embd = l.uint("embedding_length", -1)
	c.Layers = l.uint("block_count", -1)
	c.Heads = l.uint("attention.head_count", -1)
	c.FF = l.uint("feed_forward_length", -1)
	c.Context = l.uint("context_length", 2048)
	if l.err != nil {
		return nil, l.err
	}
	if c.Embd == 0 || c.Layers == 0 || c.Heads == 0 || c.FF == 0 {
		return nil, fmt.Errorf("metadata: zero width, layers, heads or feed-forward length")
	}
	c.KVHeads = l.uint("attention.head_count_kv", c.Heads)
	c.HeadDim = l.uint("attention.key_length", c.Embd/c.Heads)
	if vd := l.uint("attention.value_length", c.HeadDim); vd != c.HeadDim {
		return nil, fmt.Errorf("metadata: value length %d differs from key length %d (not supported)", vd, c.HeadDim)
	}
	if c.KVHeads == 0 || c.HeadDim == 0 || c.Heads%c.KVHeads != 0 {
		return nil, fmt.Errorf("metadata: %d heads cannot share %d KV heads", c.Heads, c.KVHeads)
	}
	c.RMSEps = l.float("attention.layer_norm_rms_epsilon", 1e-5)
	c.Rope = readRope(l, &c)
	c.Rope.Mode = v.rope
	if l.err != nil {
		return nil, l.err
	}

	embd, qDim, kvDim := c.Embd, c.Heads*c.HeadDim, c.KVDim()
	m := &transformer{cfg: c, v: v}
	tok, ok := f.Tensor("token_embd.weight")
	if !ok {
		return nil, fmt.Errorf("tensor token_embd.weight: missing")
	}
	if len(tok.Shape) < 2 {
		return nil, fmt.Errorf("tensor token_embd.weight: shape %v is not a matrix", tok.Shape)
	}
	m.cfg.Vocab = int(tok.Shape[1])
	m.embd = l.tensor("token_embd.weight", false, embd)
	m.outNorm = l.vector("output_norm.weight", false, embd)
	m.output = l.matrix("output.weight", true, embd, m.cfg.Vocab)
	if m.output == nil && l.err == nil {
		m.cfg.TiedEmbd = true
		m.output = l.matrix("token_embd.weight", false, embd, m.cfg.Vocab)
	}
	m.layers = make([]layer, c.Layers)
	for i := range m.layers {
		ly := &m.layers[i]
		p := fmt.Sprintf("blk.%d.", i)
		ly.attnNorm = l.vector(p+"attn_norm.weight", false, embd)
		if v.fusedQKV {
			ly.qkv = l.matrix(p+"attn_qkv.weight", false, embd, qDim+2*kvDim)
		} else {
			ly.q = l.matrix(p+"attn_q.weight", false, embd, qDim)
			ly.k = l.matrix(p+"attn_k.weight", false, embd, kvDim)
			ly.v = l.matrix(p+"attn_v.weight", false, embd, kvDim)
		}
		// Biases are read whenever present: some Llama-arch conversions
		// carry them too.
		ly.qb = l.vector(p+"attn_q.bias", !v.qkvBias, qDim)
		ly.kb = l.vector(p+"attn_k.bias", !v.qkvBias, kvDim)
		ly.vb = l.vector(p+"attn_v.bias", !v.qkvBias, kvDim)
		if v.qkNorm {
			ly.qNorm = l.vector(p+"attn_q_norm.weight", false, c.HeadDim)
			ly.kNorm = l.vector(p+"attn_k_norm.weight", false, c.HeadDim)
		}
		ly.o = l.matrix(p+"attn_output.weight", false, qDim, embd)
		ly.ffnNorm = l.vector(p+"ffn_norm.weight", false, embd)
		if v.fusedFFN {
			ly.up = l.matrix(p+"ffn_up.weight", false, embd, 2*c.FF)
		} else {
			ly.gate = l.matrix(p+"ffn_gate.weight", false, embd, c.FF)
			ly.up = l.matrix(p+"ffn_up.weight", false, embd, c.FF)
		}
		ly.down = l.matrix(p+"ffn_down.weight", false, c.FF, embd)
		if l.err != nil {
			return nil, l.err
		}
	}
	if l.err != nil {
		return nil, l.err
	}
	return m, nil
}

// readRope reads RoPE settings as llama.cpp does: dimension count, base,
// linear/YaRN scaling and per-dimension frequency factors.
func readRope(l *loader, c *Config) backend.Rope {
	r := backend.Rope{
		Dims:       l.uint("rope.dimension_count", c.HeadDim),
		FreqBase:   l.float("rope.freq_base", 10000),
		FreqScale:  1,
		AttnFactor: 1,
		BetaFast:   32,
		BetaSlow:   1,
	}
	if r.Dims <= 0 || r.Dims > c.HeadDim || r.Dims%2 != 0 {
		l.fail("metadata %s.rope.dimension_count: %d does not fit head size %d", l.arch, r.Dims, c.HeadDim)
		return r
	}
	factor := l.float("rope.scaling.factor", 0)
	if factor == 0 {
		factor = l.float("rope.scale_linear", 0)
	}
	typ := l.str("rope.scaling.type")
	switch typ {
	case "", "none", "linear", "yarn", "longrope":
	default:
		l.fail("metadata %s.rope.scaling.type: %q is not supported", l.arch, typ)
	}
	if factor > 0 && typ != "none" && typ != "longrope" {
		r.FreqScale = 1 / factor
	}
	r.OrigContext = l.uint("rope.scaling.original_context_length", c.Context)
	if typ == "yarn" {
		r.ExtFactor = 1
	}
	r.AttnFactor = l.float("rope.scaling.attn_factor", 1)
	// Llama 3.1 ships its frequency factors as a tensor; Phi-3's long-context
	// variants ship long and short ones (short applies within the trained
	// context, which is what we run at by default).
	for _, name := range []string{"rope_freqs.weight", "rope_factors_short.weight"} {
		if ff := l.vector(name, true, r.Dims/2); ff != nil {
			r.FreqFactors = ff
			break
		}
	}
	return r
}

// Scratch holds a sequence's intermediate buffers so decoding does not
// allocate per token. It grows to the largest batch seen.
type Scratch struct {
	n                      int
	x, xn, q, k, v, attn   []float32
	qkv, gate, up, ffn, gu []float32
	sel                    []float32
	groups                 []Group
	mdst                   [][]float32
	mw                     []*backend.Tensor
}

func grow(s []float32, n int) []float32 {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]float32, n)
}

func (s *Scratch) ensure(c *Config, n int) {
	qDim, kvDim := c.Heads*c.HeadDim, c.KVDim()
	s.x = grow(s.x, n*c.Embd)
	s.xn = grow(s.xn, n*c.Embd)
	s.q = grow(s.q, n*qDim)
	s.k = grow(s.k, n*kvDim)
	s.v = grow(s.v, n*kvDim)
	s.attn = grow(s.attn, n*qDim)
	s.gate = grow(s.gate, n*c.FF)
	s.up = grow(s.up, n*c.FF)
	s.ffn = grow(s.ffn, n*c.FF)
	s.n = n
}

// Batch is one forward pass over rows from one or more sequences, each
// with its own KV cache: the matrix products read every weight once for
// all rows, attention runs per sequence. Rows of a sequence are
// contiguous and listed by Groups.
type Batch struct {
	Tokens []int32
	Pos    []int32 // position of each row in its sequence
	Groups []Group
	// OutRows lists the rows whose logits are wanted, in the order they
	// are written to the logits buffer.
	OutRows []int
}

// Group is the rows [Start, End) of a batch that belong to one sequence.
type Group struct {
	Start, End int
	KV         *backend.KVCache
}

// BatchForwarder is implemented by models that run several sequences in
// one forward pass (all of this package's do).
type BatchForwarder interface {
	ForwardBatch(b backend.Backend, s *Scratch, batch *Batch, logits []float32) error
}

// multiMatMuler is the optional backend capability of several products
// of one input in one pass (the q, k and v projections; gate and up):
// the input is rounded once and the work shares one parallel loop.
type multiMatMuler interface {
	MatMulMulti(dst [][]float32, w []*backend.Tensor, x []float32, n int)
}

// Forward implements Model.
func (m *transformer) Forward(b backend.Backend, kv *backend.KVCache, s *Scratch, tokens, pos []int32, outRows []int, logits []float32) error {
	s.groups = append(s.groups[:0], Group{Start: 0, End: len(tokens), KV: kv})
	return m.ForwardBatch(b, s, &Batch{Tokens: tokens, Pos: pos, Groups: s.groups, OutRows: outRows}, logits)
}

// matmuls computes dst[i] = w[i]·x, in one pass when the backend can.
func (s *Scratch) matmuls(b backend.Backend, x []float32, n int, dst []([]float32), w []*backend.Tensor) {
	if mm, ok := b.(multiMatMuler); ok {
		mm.MatMulMulti(dst, w, x, n)
		return
	}
	for i := range w {
		b.MatMul(dst[i], w[i], x, n)
	}
}

// ForwardBatch implements BatchForwarder.
func (m *transformer) ForwardBatch(b backend.Backend, s *Scratch, bt *Batch, logits []float32) error {
	c := &m.cfg
	tokens, pos, outRows := bt.Tokens, bt.Pos, bt.OutRows
	n := len(tokens)
	if n == 0 || len(pos) != n {
		return fmt.Errorf("forward: %d tokens with %d positions", n, len(pos))
	}
	if len(logits) < len(outRows)*c.Vocab {
		return fmt.Errorf("forward: logits buffer too small")
	}
	next := 0
	for _, g := range bt.Groups {
		if g.Start != next || g.End <= g.Start || g.End > n || g.KV == nil {
			return fmt.Errorf("forward: sequence rows [%d,%d) do not continue the batch at row %d", g.Start, g.End, next)
		}
		if g.KV.Layers != c.Layers || g.KV.Dim != c.KVDim() {
			return fmt.Errorf("forward: KV cache of %d layers × %d does not fit the model", g.KV.Layers, g.KV.Dim)
		}
		for _, p := range pos[g.Start:g.End] {
			if p < 0 || int(p) >= g.KV.Context {
				return fmt.Errorf("forward: position %d outside the context of %d", p, g.KV.Context)
			}
		}
		next = g.End
	}
	if next != n {
		return fmt.Errorf("forward: sequences cover %d of %d rows", next, n)
	}
	for _, r := range outRows {
		if r < 0 || r >= n {
			return fmt.Errorf("forward: output row %d outside batch of %d", r, n)
		}
	}
	s.ensure(c, n)
	embd, qDim, kvDim := c.Embd, c.Heads*c.HeadDim, c.KVDim()
	x := s.x
	if err := b.Embed(x, m.embd, tokens); err != nil {
		return fmt.Errorf("forward: %w", err)
	}
	att := backend.Attention{Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
		Scale: float32(1 / math.Sqrt(float64(c.HeadDim)))}
	if cap(s.mdst) < 3 {
		s.mdst = make([][]float32, 3)
		s.mw = make([]*backend.Tensor, 3)
	}
	for li := range m.layers {
		ly := &m.layers[li]
		b.RMSNorm(s.xn, x, ly.attnNorm, c.RMSEps)
		q, k, v := s.q, s.k, s.v
		if ly.qkv != nil {
			w := qDim + 2*kvDim
			s.qkv = grow(s.qkv, n*w)
			b.MatMul(s.qkv, ly.qkv, s.xn, n)
			for i := range n {
				row := s.qkv[i*w : (i+1)*w]
				copy(q[i*qDim:(i+1)*qDim], row[:qDim])
				copy(k[i*kvDim:(i+1)*kvDim], row[qDim:qDim+kvDim])
				copy(v[i*kvDim:(i+1)*kvDim], row[qDim+kvDim:])
			}
		} else {
			s.mdst = append(s.mdst[:0], q, k, v)
			s.mw = append(s.mw[:0], ly.q, ly.k, ly.v)
			s.matmuls(b, s.xn, n, s.mdst, s.mw)
		}
		if ly.qb != nil {
			b.AddBias(q, ly.qb)
		}
		if ly.kb != nil {
			b.AddBias(k, ly.kb)
		}
		if ly.vb != nil {
			b.AddBias(v, ly.vb)
		}
		if ly.qNorm != nil {
			b.RMSNorm(q, q, ly.qNorm, c.RMSEps)
			b.RMSNorm(k, k, ly.kNorm, c.RMSEps)
		}
		b.RoPE(q, pos, c.Heads, c.HeadDim, &c.Rope)
		b.RoPE(k, pos, c.KVHeads, c.HeadDim, &c.Rope)
		for _, g := range bt.Groups {
			gp := pos[g.Start:g.End]
			g.KV.Store(li, gp, k[g.Start*kvDim:g.End*kvDim], v[g.Start*kvDim:g.End*kvDim])
			b.Attend(s.attn[g.Start*qDim:g.End*qDim], q[g.Start*qDim:g.End*qDim], g.KV, li, gp, att)
		}
		b.MatMul(s.xn, ly.o, s.attn, n)
		b.Add(x, s.xn)

		b.RMSNorm(s.xn, x, ly.ffnNorm, c.RMSEps)
		if ly.gate == nil {
			ff := c.FF
			s.gu = grow(s.gu, n*2*ff)
			b.MatMul(s.gu, ly.up, s.xn, n)
			for i := range n {
				copy(s.gate[i*ff:(i+1)*ff], s.gu[i*2*ff:i*2*ff+ff])
				copy(s.up[i*ff:(i+1)*ff], s.gu[i*2*ff+ff:(i+1)*2*ff])
			}
		} else {
			s.mdst = append(s.mdst[:0], s.gate, s.up)
			s.mw = append(s.mw[:0], ly.gate, ly.up)
			s.matmuls(b, s.xn, n, s.mdst, s.mw)
		}
		b.SwiGLU(s.ffn, s.gate, s.up)
		b.MatMul(s.xn, ly.down, s.ffn, n)
		b.Add(x, s.xn)
	}
	if len(outRows) == 0 {
		return nil
	}
	// Only the rows whose logits are wanted go through the (large) output
	// projection: during prefill that is usually just the last one.
	s.sel = grow(s.sel, len(outRows)*embd)
	for j, r := range outRows {
		copy(s.sel[j*embd:(j+1)*embd], x[r*embd:(r+1)*embd])
	}
	b.RMSNorm(s.sel, s.sel, m.outNorm, c.RMSEps)
	b.MatMul(logits[:len(outRows)*c.Vocab], m.output, s.sel, len(outRows))
	return nil
}
