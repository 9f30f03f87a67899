package arch

import (
	"fmt"
	"math"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/quant"
)

// variant says how one member of the Llama family differs from Llama.
type variant struct {
	rope     backend.RopeMode
	qkvBias  bool // Qwen2: biases on the q, k and v projections
	qkNorm   bool // Qwen3: RMSNorm over each head of q and k before RoPE
	fusedQKV bool // Phi-3: one attn_qkv matrix
	fusedFFN bool // Phi-3: ffn_up holds gate and up, in that order
	// moe, when set, is the mixture of experts that replaces the
	// feed-forward of a file with experts (expert_count > 0).
	moe *MoESpec
	// gpt-oss (gptoss.go): attention sinks, banded attention on the even
	// layers, the feed-forward norm named post_attention_norm.
	sinks, swa bool
	ffnNorm    string // "" = ffn_norm.weight
	// expertsOnly: every layer is a mixture of experts, so the file need
	// not state a dense feed_forward_length.
	expertsOnly bool
}

func init() {
	Register("llama", func(f *gguf.File) (Model, error) {
		return buildTransformer(f, "llama", variant{rope: backend.RopeNormal, moe: &mixtral})
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
	attnNorm *weight // [embd]
	q        *weight // [embd, heads*headDim]
	k        *weight // [embd, kvDim]
	v        *weight // [embd, kvDim]
	qkv      *weight // [embd, heads*headDim + 2*kvDim] (fused variant)
	qb, kb   *weight // [heads*headDim], [kvDim] (qkvBias)
	vb       *weight // [kvDim]
	qNorm    *weight // [headDim] (qkNorm)
	kNorm    *weight // [headDim]
	o        *weight // [heads*headDim, embd]
	ffnNorm  *weight // [embd]
	gate     *weight // [embd, ff]
	up       *weight // [embd, ff] or [embd, 2*ff] (fused variant)
	down     *weight // [ff, embd]
	moe      *moe    // instead of gate, up and down (moe.go)
	sinks    *weight // [heads]: attention sinks (gpt-oss)
	extras           // optional biases and scales (optional.go)
}

// transformer is the Llama family: pre-norm blocks of grouped-query
// attention with RoPE and a SwiGLU feed-forward.
type transformer struct {
	resident
	cfg Config
	v   variant
	att backend.Attention
	// attSWA is the attention of the banded layers (swa[layer]), ropeSWA
	// their RoPE: the file's, with rope.freq_base_swa as its base when
	// the file has one (llama.cpp's rope_freq_base_train_swa).
	attSWA  backend.Attention
	ropeSWA backend.Rope
	swa     []bool
	embd    *weight // [embd, vocab]
	outNorm *weight // [embd]
	output  *weight // [embd, vocab]; token_embd when tied
	outB    *weight // [vocab]: output.bias (Qwen2 files may have one)
	layers  []layer
	// logitCap > 0 soft-caps the logits (Gemma's final_logit_softcapping).
	logitCap float32
}

func (m *transformer) Config() *Config { return &m.cfg }

// CacheSpec implements Model: KV rows in every layer, a banded layer's
// in a ring.
func (m *transformer) CacheSpec(kvType quant.Type, ctx int) []backend.LayerSpec {
	return kvCacheSpec(kvType, ctx, &m.cfg, func(i int) int {
		if m.swa != nil && m.swa[i] {
			return m.attSWA.Window
		}
		return 0
	})
}

// kvCacheSpec gives every layer KV rows; a layer whose window(i) > 0
// attends over a sliding window and keeps only a ring of
// backend.RingRows(window, ctx) of them.
func kvCacheSpec(kvType quant.Type, ctx int, c *Config, window func(i int) int) []backend.LayerSpec {
	full := &backend.KVSpec{Type: kvType, Context: ctx, Dim: c.KVDim()}
	rings := map[int]*backend.KVSpec{}
	out := make([]backend.LayerSpec, c.Layers)
	for i := range out {
		w := window(i)
		out[i] = backend.LayerSpec{KV: full, Window: w}
		r := backend.RingRows(w, ctx)
		if r == 0 {
			continue
		}
		if rings[r] == nil {
			ring := *full
			ring.Ring = r
			rings[r] = &ring
		}
		out[i].KV = rings[r]
	}
	return out
}

func buildTransformer(f *gguf.File, name string, v variant) (Model, error) {
	l := &loader{f: f, arch: name}
	c := Config{Arch: name}
	c.Embd = l.uint("embedding_length", -1)
	c.Layers = l.uint("block_count", -1)
	c.Heads = l.uint("attention.head_count", -1)
	ffReq := -1
	if v.expertsOnly {
		ffReq = 0
	}
	c.FF = l.uint("feed_forward_length", ffReq)
	c.Context = l.uint("context_length", 2048)
	if v.moe != nil {
		readMoEConfig(l, &c, v.moe)
	}
	if l.err != nil {
		return nil, l.err
	}
	if c.Embd == 0 || c.Layers == 0 || c.Heads == 0 || (c.FF == 0 && c.Experts == 0) {
		return nil, fmt.Errorf("metadata: zero width, layers, heads or feed-forward length")
	}
	if err := readHeads(l, &c); err != nil {
		return nil, err
	}
	c.RMSEps = l.float("attention.layer_norm_rms_epsilon", 1e-5)
	if l.err != nil {
		return nil, l.err
	}

	embd, qDim, kvDim := c.Embd, c.Heads*c.HeadDim, c.KVDim()
	m := &transformer{cfg: c, v: v}
	m.att = backend.Attention{Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
		Scale: float32(1 / math.Sqrt(float64(c.HeadDim))), Sinks: v.sinks}
	if v.swa {
		if err := readSWA(l, m); err != nil {
			return nil, err
		}
	}
	if err := m.readEnds(f, l); err != nil {
		return nil, err
	}
	m.outB = l.vector("output.bias", true, m.cfg.Vocab)
	m.layers = make([]layer, c.Layers)
	for i := range m.layers {
		l.at(i)
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
		ffnNorm := "ffn_norm.weight"
		if v.ffnNorm != "" {
			ffnNorm = v.ffnNorm
		}
		ly.ffnNorm = l.vector(p+ffnNorm, false, embd)
		if v.sinks {
			ly.sinks = l.sinkVector(p+"attn_sinks.weight", c.Heads)
		}
		if c.Experts > 0 {
			ly.moe = readMoE(l, p, &m.cfg, *v.moe)
		} else if v.fusedFFN {
			ly.up = l.matrix(p+"ffn_up.weight", false, embd, 2*c.FF)
		} else {
			ly.gate = l.matrix(p+"ffn_gate.weight", false, embd, c.FF)
			ly.up = l.matrix(p+"ffn_up.weight", false, embd, c.FF)
		}
		if ly.moe == nil {
			ly.down = l.matrix(p+"ffn_down.weight", false, c.FF, embd)
		}
		upRows := c.FF
		if v.fusedFFN {
			upRows = 2 * c.FF
		}
		readExtras(l, p, ly, embd, qDim+2*kvDim, upRows, c.FF)
		if l.err != nil {
			return nil, l.err
		}
	}
	// Read last: RoPE's frequency factors, parameters rather than weights.
	m.cfg.Rope = readRope(l, &m.cfg)
	// Phi-3's long-context files carry long factors too, which apply past
	// the original context; sequences run within it use the short ones.
	l.known("rope_factors_long.weight")
	m.cfg.Rope.Mode = v.rope
	m.ropeSWA = m.cfg.Rope
	m.ropeSWA.FreqBase = l.float("rope.freq_base_swa", m.cfg.Rope.FreqBase)
	l.finish()
	if l.err != nil {
		return nil, l.err
	}
	m.weights = l.weights
	return m, nil
}

// readHeads reads the attention's KV heads and head width into c, whose
// Embd and Heads are read and non-zero, and refuses shapes the kernels do
// not run: values as wide as keys, query heads in whole groups per KV head.
func readHeads(l *loader, c *Config) error {
	c.KVHeads = l.uint("attention.head_count_kv", c.Heads)
	c.HeadDim = l.uint("attention.key_length", c.Embd/c.Heads)
	if vd := l.uint("attention.value_length", c.HeadDim); vd != c.HeadDim {
		return fmt.Errorf("metadata: value length %d differs from key length %d (not supported)", vd, c.HeadDim)
	}
	if c.KVHeads == 0 || c.HeadDim == 0 || c.Heads%c.KVHeads != 0 {
		return fmt.Errorf("metadata: %d heads cannot share %d KV heads", c.Heads, c.KVHeads)
	}
	return nil
}

// readEnds sets the vocabulary from token_embd's shape and loads the
// model's two ends: the embedding table on the input part, the output
// norm and projection on the output part, the projection tied to the
// embeddings where the file has no output.weight.
func (m *transformer) readEnds(f *gguf.File, l *loader) error {
	tok, ok := f.Tensor("token_embd.weight")
	if !ok {
		return fmt.Errorf("tensor token_embd.weight: missing")
	}
	if len(tok.Shape) < 2 {
		return fmt.Errorf("tensor token_embd.weight: shape %v is not a matrix", tok.Shape)
	}
	embd := m.cfg.Embd
	m.cfg.Vocab = int(tok.Shape[1])
	l.at(InputPart)
	m.embd = l.table("token_embd.weight", embd)
	l.at(m.cfg.Layers)
	m.outNorm = l.vector("output_norm.weight", false, embd)
	m.output = l.matrix("output.weight", true, embd, m.cfg.Vocab)
	if m.output == nil && l.err == nil {
		m.cfg.TiedEmbd = true
		m.output = l.matrix("token_embd.weight", false, embd, m.cfg.Vocab)
	}
	return nil
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
		if ff := l.hostVector(name, true, r.Dims/2); ff != nil {
			r.FreqFactors = ff
			break
		}
	}
	return r
}

// Batch is one forward pass over rows from one or more sequences, each
// with its own cache: the matrix products read every weight once for all
// rows, attention runs per sequence. Rows of a sequence are contiguous and
// listed by Groups.
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
	Cache      *backend.Cache
}

// check validates a batch against the model and its plan.
func (m *transformer) check(bt *Batch, logits []float32) error {
	c := &m.cfg
	n := len(bt.Tokens)
	if m.plan == nil {
		return fmt.Errorf("forward: the model is not placed on a device")
	}
	if n == 0 || len(bt.Pos) != n {
		return fmt.Errorf("forward: %d tokens with %d positions", n, len(bt.Pos))
	}
	if len(logits) < len(bt.OutRows)*c.Vocab {
		return fmt.Errorf("forward: logits buffer too small")
	}
	next := 0
	for _, g := range bt.Groups {
		if g.Start != next || g.End <= g.Start || g.End > n || g.Cache == nil {
			return fmt.Errorf("forward: sequence rows [%d,%d) do not continue the batch at row %d", g.Start, g.End, next)
		}
		if g.Cache.Plan() != m.plan {
			return fmt.Errorf("forward: a sequence's cache was made for another placement of the model")
		}
		// The first layer with KV rows gives the context (a hybrid's
		// recurrent layers have none).
		var kv backend.KV
		for i := 0; kv == nil && i < g.Cache.Layers(); i++ {
			kv = g.Cache.KV(i)
		}
		if g.Cache.Layers() != c.Layers || (kv != nil && kv.Spec().Dim != c.KVDim()) || (kv == nil && c.SSMConvDim == 0) {
			return fmt.Errorf("forward: a cache of %d layers does not fit the model", g.Cache.Layers())
		}
		ctx := math.MaxInt32
		if kv != nil {
			ctx = kv.Spec().Context
		}
		for _, p := range bt.Pos[g.Start:g.End] {
			if p < 0 || int(p) >= ctx {
				return fmt.Errorf("forward: position %d outside the context of %d", p, ctx)
			}
		}
		next = g.End
	}
	if next != n {
		return fmt.Errorf("forward: sequences cover %d of %d rows", next, n)
	}
	for _, r := range bt.OutRows {
		if r < 0 || r >= n {
			return fmt.Errorf("forward: output row %d outside batch of %d", r, n)
		}
	}
	return nil
}

// Forward implements Model. Each part runs on its device in the plan;
// where the next part's device differs, the residual stream crosses
// (Scratch.cross), and the logits come back from the output head's
// device.
func (m *transformer) Forward(s *Scratch, bt *Batch, logits []float32) error {
	return m.forward(s, bt, logits, 0, m)
}

// blockRunner runs an architecture's block li over the residual stream x
// on dev. forward takes the blocks as an interface, not a func value, so
// that a step allocates nothing.
type blockRunner interface {
	runBlock(s *Scratch, dev backend.Device, li int, bt *Batch, x backend.Buf) error
}

func (m *transformer) runBlock(s *Scratch, dev backend.Device, li int, bt *Batch, x backend.Buf) error {
	return m.block(s, dev, &m.layers[li], li, bt, x)
}

// forward is the pass every decoder here shares: embed (multiplied by
// embdScale unless it is 0), the cfg.Layers blocks by blocks, each on its
// planned device, then the output head.
func (m *transformer) forward(s *Scratch, bt *Batch, logits []float32, embdScale float32, blocks blockRunner) error {
	if err := m.check(bt, logits); err != nil {
		return err
	}
	c := &m.cfg
	p := m.plan
	n := len(bt.Tokens)
	embd := c.Embd

	dev := p.Input
	x, err := s.on(dev).get(bufX, n*embd)
	if err != nil {
		return fmt.Errorf("forward: %w", err)
	}
	dev.Embed(x, m.embd.on, bt.Tokens)
	if embdScale != 0 {
		dev.Scale(x, embdScale)
	}
	for li := 0; li < c.Layers; li++ {
		if d := p.Layers[li]; d != dev {
			if x, err = s.cross(dev, d, x, n*embd); err != nil {
				return fmt.Errorf("forward: %w", err)
			}
			dev = d
		}
		if err := blocks.runBlock(s, dev, li, bt, x); err != nil {
			return fmt.Errorf("forward: layer %d: %w", li, err)
		}
	}
	if d := p.Output; d != dev {
		if x, err = s.cross(dev, d, x, n*embd); err != nil {
			return fmt.Errorf("forward: %w", err)
		}
		dev = d
	}
	if err := m.head(s, dev, x, bt.OutRows, logits); err != nil {
		return fmt.Errorf("forward: %w", err)
	}
	if err := dev.Sync(); err != nil {
		return fmt.Errorf("forward: %w", &backend.DeviceError{Device: dev, Err: err})
	}
	return nil
}

// blockBufs takes from ds the buffers a block of n rows works in, by
// role; ff = 0 leaves the feed-forward's to whoever sizes its own.
func (ds *devScratch) blockBufs(n, embd, qDim, kvDim, ff int) ([numBufs]backend.Buf, error) {
	var b [numBufs]backend.Buf
	for _, r := range [...]struct{ role, n int }{
		{bufXN, n * embd}, {bufQ, n * qDim}, {bufK, n * kvDim}, {bufV, n * kvDim},
		{bufAttn, n * qDim}, {bufGate, n * ff}, {bufUp, n * ff}, {bufFFN, n * ff},
	} {
		var err error
		if b[r.role], err = ds.get(r.role, r.n); err != nil {
			return b, err
		}
	}
	return b, nil
}

// attendGroups stores each sequence's keys and values of layer li in its
// own cache and attends its queries over that cache into attn.
func attendGroups(dev backend.Device, bt *Batch, li, qDim, kvDim int, q, k, v, attn backend.Buf, att *backend.Attention, in backend.AttendInputs) {
	for _, g := range bt.Groups {
		kv := g.Cache.KV(li)
		gp := bt.Pos[g.Start:g.End]
		dev.StoreKV(kv, gp, k.Slice(g.Start*kvDim, g.End*kvDim), v.Slice(g.Start*kvDim, g.End*kvDim))
		dev.Attend(attn.Slice(g.Start*qDim, g.End*qDim), q.Slice(g.Start*qDim, g.End*qDim), kv, gp, att, in)
	}
}

// block runs one transformer block on dev over the residual stream x
// (n×embd), in place.
func (m *transformer) block(s *Scratch, dev backend.Device, ly *layer, li int, bt *Batch, x backend.Buf) error {
	c := &m.cfg
	n := len(bt.Tokens)
	pos := bt.Pos
	embd, qDim, kvDim, ff := c.Embd, c.Heads*c.HeadDim, c.KVDim(), c.FF
	if ly.moe != nil {
		ff = 0 // the experts size their own buffers
	}
	ds := s.on(dev)
	b, err := ds.blockBufs(n, embd, qDim, kvDim, ff)
	if err != nil {
		return err
	}
	xn, q, k, v, attn := b[bufXN], b[bufQ], b[bufK], b[bufV], b[bufAttn]

	dev.RMSNorm(xn, x, ly.attnNorm.on, c.RMSEps)
	if ly.qkv != nil {
		w := qDim + 2*kvDim
		qkv, err := ds.get(bufQKV, n*w)
		if err != nil {
			return err
		}
		dev.MatMul(qkv, ly.qkv.on, xn, n)
		post(dev, qkv, ly.qkvS, ly.qkvB)
		dev.CopyRows(q, qDim, qkv, w, n, qDim)
		dev.CopyRows(k, kvDim, qkv.Slice(qDim, qkv.Len()), w, n, kvDim)
		dev.CopyRows(v, kvDim, qkv.Slice(qDim+kvDim, qkv.Len()), w, n, kvDim)
	} else {
		s.mdst = append(s.mdst[:0], q, k, v)
		s.mw = append(s.mw[:0], ly.q.on, ly.k.on, ly.v.on)
		dev.MatMulMulti(s.mdst, s.mw, xn, n)
		post(dev, q, ly.qS, nil)
		post(dev, k, ly.kS, nil)
		post(dev, v, ly.vS, nil)
	}
	if ly.qb != nil {
		dev.AddBias(q, ly.qb.on)
	}
	if ly.kb != nil {
		dev.AddBias(k, ly.kb.on)
	}
	if ly.vb != nil {
		dev.AddBias(v, ly.vb.on)
	}
	if ly.qNorm != nil {
		dev.RMSNorm(q, q, ly.qNorm.on, c.RMSEps)
		dev.RMSNorm(k, k, ly.kNorm.on, c.RMSEps)
	}
	rope, att, in := &c.Rope, &m.att, backend.AttendInputs{}
	if m.swa != nil && m.swa[li] {
		rope, att = &m.ropeSWA, &m.attSWA
	}
	dev.RoPE(q, pos, c.Heads, c.HeadDim, rope)
	dev.RoPE(k, pos, c.KVHeads, c.HeadDim, rope)
	if ly.sinks != nil {
		in.Sinks = ly.sinks.on
	}
	attendGroups(dev, bt, li, qDim, kvDim, q, k, v, attn, att, in)
	dev.MatMul(xn, ly.o.on, attn, n)
	post(dev, xn, ly.oS, ly.ob)
	dev.Add(x, xn)

	dev.RMSNorm(xn, x, ly.ffnNorm.on, c.RMSEps)
	if ly.moe != nil {
		return ly.moe.forward(s, dev, ds, xn, x, n)
	}
	gate, up, ffn := b[bufGate], b[bufUp], b[bufFFN]
	if ly.gate == nil {
		gu, err := ds.get(bufGateUp, n*2*ff)
		if err != nil {
			return err
		}
		dev.MatMul(gu, ly.up.on, xn, n)
		postFFN(dev, gu, ly.upS, ly.upB)
		dev.CopyRows(gate, ff, gu, 2*ff, n, ff)
		dev.CopyRows(up, ff, gu.Slice(ff, gu.Len()), 2*ff, n, ff)
	} else {
		s.mdst = append(s.mdst[:0], gate, up)
		s.mw = append(s.mw[:0], ly.gate.on, ly.up.on)
		dev.MatMulMulti(s.mdst, s.mw, xn, n)
		postFFN(dev, up, ly.upS, ly.upB)
		postFFN(dev, gate, ly.gateS, ly.gateB)
	}
	dev.SwiGLU(ffn, gate, up)
	dev.MatMul(xn, ly.down.on, ffn, n)
	postFFN(dev, xn, ly.downS, ly.downB)
	dev.Add(x, xn)
	return nil
}

// outChunk is how many rows' logits the output head computes at once:
// the logits buffer on the device holds a chunk (up to outChunk+15 rows,
// a short last chunk folded in), not a whole prompt's.
const outChunk = 32

// head runs the output norm and projection on dev for the rows of x in
// outRows and queues their logits' copy into logits. Only the rows whose
// logits are wanted go through the (large) projection: during prefill
// that is usually just the last one.
func (m *transformer) head(s *Scratch, dev backend.Device, x backend.Buf, outRows []int, logits []float32) error {
	c := &m.cfg
	embd, vocab := c.Embd, c.Vocab
	ds := s.on(dev)
	// The buffers are sized for the largest chunk first: growing one
	// between chunks would free it while the last chunk's Read waits.
	most := min(len(outRows), outChunk+15)
	if _, err := ds.get(bufSel, most*embd); err != nil {
		return err
	}
	if _, err := ds.get(bufLogits, most*vocab); err != nil {
		return err
	}
	for j0 := 0; j0 < len(outRows); {
		// Chunks of outChunk rows, the last one taking a short rest along:
		// a chunk of fewer than 16 rows would run other kernels on the CPU
		// (quant's tile kernels start at 16 rows) than the same rows in
		// one product, and the chunking must not change a bit.
		j1 := min(len(outRows), j0+outChunk)
		if len(outRows)-j1 < 16 {
			j1 = len(outRows)
		}
		rows := outRows[j0:j1]
		k := len(rows)
		sel, err := ds.get(bufSel, k*embd)
		if err != nil {
			return err
		}
		// Runs of consecutive rows are copied together.
		for i := 0; i < k; {
			e := i + 1
			for e < k && rows[e] == rows[e-1]+1 {
				e++
			}
			dev.CopyRows(sel.Slice(i*embd, e*embd), embd, x.Slice(rows[i]*embd, (rows[i]+e-i)*embd), embd, 1, (e-i)*embd)
			i = e
		}
		dev.RMSNorm(sel, sel, m.outNorm.on, c.RMSEps)
		out, err := ds.get(bufLogits, k*vocab)
		if err != nil {
			return err
		}
		dev.MatMul(out, m.output.on, sel, k)
		post(dev, out, 0, m.outB)
		if m.logitCap > 0 {
			dev.SoftCap(out, m.logitCap)
		}
		dev.Read(logits[j0*vocab:j1*vocab], out)
		j0 = j1
	}
	return nil
}
