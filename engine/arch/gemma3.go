package arch

import (
	"fmt"
	"math"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/quant"
)

// Gemma 3 (1B–27B, and Rnj-1 8B, which shares the architecture) is a
// Llama-like decoder with these differences, each following llama.cpp's
// src/models/gemma3.cpp:
//
//   - most layers attend over a sliding window (attention.sliding_window
//     positions); every sliding_window_pattern-th layer (6 unless the file
//     says otherwise, or a per-layer bool array) attends globally;
//   - local layers rotate with their own RoPE base (rope.freq_base_swa,
//     10 000) and no scaling; global layers use rope.freq_base and the
//     file's rope scaling (linear ×8 in the 4B and larger);
//   - queries and keys are RMS-normalised per head before RoPE (QK-norm)
//     and the queries are then scaled by 1/√head_dim (1/√(embd/heads) in
//     the 27B), the attention itself adding no scale;
//   - both sub-blocks are sandwiched: their outputs are RMS-normalised
//     (post_attention_norm, post_ffw_norm) before joining the residual;
//   - the feed-forward is GELU(tanh)-gated, not SiLU;
//   - token embeddings are multiplied by √embd;
//   - logits are soft-capped when final_logit_softcapping is set;
//   - the output projection is the embedding (tied) unless output.weight
//     is present.
//
// Gemma's RMSNorm multiplies by (1 + w); llama.cpp's converter stores
// 1 + w in the file (Gemma3Model.norm_shift), so the norms here are plain
// RMSNorms, as in llama.cpp.
//
// A global layer keeps the KV rows of every position, a local one a ring
// of its window and backend.RingMargin (CacheSpec).
type gemma3 struct {
	transformer
	layers       []gemma3Layer
	local        backend.Attention // sliding-window layers
	global       backend.Attention
	localRope    backend.Rope
	qScale       float32
	embdScale    float32
	localLayers  int
	globalLayers int
}

type gemma3Layer struct {
	attnNorm     *weight // [embd]
	q            *weight // [embd, heads*headDim]
	k, v         *weight // [embd, kvDim]
	qNorm, kNorm *weight // [headDim]
	o            *weight // [heads*headDim, embd]
	postAttnNorm *weight // [embd]
	ffnNorm      *weight // [embd]
	gate, up     *weight // [embd, ff]
	down         *weight // [ff, embd]
	postFFNNorm  *weight // [embd]
	local        bool    // sliding-window attention
}

func init() {
	Register("gemma3", buildGemma3)
	windowReaders["gemma3"] = func(l *loader, layers int) ([]int, error) {
		window := l.uint("attention.sliding_window", 0)
		if l.err != nil {
			return nil, l.err
		}
		local, err := gemma3Pattern(l.f, l.arch, layers, window)
		return windowsOf(window, local), err
	}
}

func buildGemma3(f *gguf.File) (Model, error) {
	const name = "gemma3"
	l := &loader{f: f, arch: name}
	c := Config{Arch: name}
	c.Embd = l.uint("embedding_length", -1)
	c.Layers = l.uint("block_count", -1)
	c.Heads = l.uint("attention.head_count", -1)
	c.FF = l.uint("feed_forward_length", -1)
	c.Context = l.uint("context_length", 131072)
	if l.err != nil {
		return nil, l.err
	}
	if c.Embd == 0 || c.Layers == 0 || c.Heads == 0 || c.FF == 0 {
		return nil, fmt.Errorf("metadata: zero width, layers, heads or feed-forward length")
	}
	if err := readHeads(l, &c); err != nil {
		return nil, err
	}
	c.RMSEps = l.float("attention.layer_norm_rms_epsilon", 1e-6)
	window := l.uint("attention.sliding_window", 0)
	localOf, err := gemma3Pattern(f, name, c.Layers, window)
	if err != nil {
		return nil, err
	}
	softCap := l.float("final_logit_softcapping", 0)
	if softCap < 0 || math.IsNaN(float64(softCap)) {
		return nil, fmt.Errorf("metadata %s.final_logit_softcapping: %v is not a positive cap", name, softCap)
	}
	if l.err != nil {
		return nil, l.err
	}

	m := &gemma3{}
	m.cfg = c
	m.logitCap = softCap
	embd, qDim, kvDim := c.Embd, c.Heads*c.HeadDim, c.KVDim()
	// llama.cpp picks the query scale by model size: the 27B (62 layers)
	// follows query_pre_attn_scalar = embd/heads, the others head_dim.
	if c.Layers == 62 {
		m.qScale = float32(1 / math.Sqrt(float64(c.Embd/c.Heads)))
	} else {
		m.qScale = float32(1 / math.Sqrt(float64(c.HeadDim)))
	}
	m.embdScale = float32(math.Sqrt(float64(c.Embd)))
	m.global = backend.Attention{Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim, Scale: 1}
	m.local = m.global
	m.local.Window = window

	if err := m.readEnds(f, l); err != nil {
		return nil, err
	}
	m.layers = make([]gemma3Layer, c.Layers)
	for i := range m.layers {
		l.at(i)
		ly := &m.layers[i]
		p := fmt.Sprintf("blk.%d.", i)
		ly.local = localOf[i]
		if ly.local {
			m.localLayers++
		} else {
			m.globalLayers++
		}
		ly.attnNorm = l.vector(p+"attn_norm.weight", false, embd)
		ly.q = l.matrix(p+"attn_q.weight", false, embd, qDim)
		ly.k = l.matrix(p+"attn_k.weight", false, embd, kvDim)
		ly.v = l.matrix(p+"attn_v.weight", false, embd, kvDim)
		ly.qNorm = l.vector(p+"attn_q_norm.weight", false, c.HeadDim)
		ly.kNorm = l.vector(p+"attn_k_norm.weight", false, c.HeadDim)
		ly.o = l.matrix(p+"attn_output.weight", false, qDim, embd)
		ly.postAttnNorm = l.vector(p+"post_attention_norm.weight", false, embd)
		ly.ffnNorm = l.vector(p+"ffn_norm.weight", false, embd)
		ly.gate = l.matrix(p+"ffn_gate.weight", false, embd, c.FF)
		ly.up = l.matrix(p+"ffn_up.weight", false, embd, c.FF)
		ly.down = l.matrix(p+"ffn_down.weight", false, c.FF, embd)
		ly.postFFNNorm = l.vector(p+"post_ffw_norm.weight", false, embd)
		if l.err != nil {
			return nil, l.err
		}
	}
	// The global layers' RoPE is the file's (base, linear or YaRN
	// scaling); the local layers' has its own base and no scaling, as
	// llama.cpp's rope_freq_{base,scale}_train_swa.
	m.cfg.Rope = readRope(l, &m.cfg)
	m.cfg.Rope.Mode = backend.RopeNeoX
	if m.cfg.Rope.FreqFactors != nil {
		// llama.cpp's gemma3 has no frequency factors: such a file would
		// not load there either.
		l.fail("tensor rope_freqs.weight: not applied by the gemma3 architecture")
	}
	m.localRope = m.cfg.Rope
	m.localRope.FreqBase = l.float("rope.freq_base_swa", 10000)
	m.localRope.FreqScale = 1
	l.finish()
	if l.err != nil {
		return nil, l.err
	}
	m.weights = l.weights
	return m, nil
}

// gemma3Pattern says which layers attend over a sliding window, as
// llama.cpp's load_swa_pattern: an array of bools per layer, or a period n
// whose last layer is global (layer i is local iff i mod n < n−1; n = 0
// makes every layer local). Without a window every layer is global.
func gemma3Pattern(f *gguf.File, arch string, layers, window int) ([]bool, error) {
	local := make([]bool, layers)
	if window <= 0 {
		return local, nil
	}
	key := arch + ".attention.sliding_window_pattern"
	v, present := f.Lookup(key)
	if !present {
		for i := range local {
			local[i] = i%6 < 5
		}
		return local, nil
	}
	if a, ok := v.V.(gguf.Array); ok {
		bs, ok := a.Values.([]bool)
		if !ok || len(bs) != layers {
			return nil, fmt.Errorf("metadata %s: want %d bools, one per layer", key, layers)
		}
		copy(local, bs)
		return local, nil
	}
	n, ok := f.Uint(key)
	if !ok || n > 1<<16 {
		return nil, fmt.Errorf("metadata %s: not a layer period or an array of bools", key)
	}
	for i := range local {
		local[i] = n == 0 || uint64(i)%n < n-1
	}
	return local, nil
}

// CacheSpec implements Model: the local layers' KV rows in rings.
func (m *gemma3) CacheSpec(kvType quant.Type, ctx int) []backend.LayerSpec {
	return kvCacheSpec(kvType, ctx, &m.cfg, func(i int) int {
		if m.layers[i].local {
			return m.local.Window
		}
		return 0
	})
}

// Forward implements Model: transformer's pass, with the embeddings
// scaled by √embd and Gemma's blocks.
func (m *gemma3) Forward(s *Scratch, bt *Batch, logits []float32) error {
	return m.forward(s, bt, logits, m.embdScale, m)
}

func (m *gemma3) runBlock(s *Scratch, dev backend.Device, li int, bt *Batch, x backend.Buf) error {
	return m.block(s, dev, &m.layers[li], li, bt, x)
}

// block runs one Gemma 3 block on dev over the residual stream x
// (n×embd), in place.
func (m *gemma3) block(s *Scratch, dev backend.Device, ly *gemma3Layer, li int, bt *Batch, x backend.Buf) error {
	c := &m.cfg
	n := len(bt.Tokens)
	pos := bt.Pos
	embd, qDim, kvDim, ff := c.Embd, c.Heads*c.HeadDim, c.KVDim(), c.FF
	ds := s.on(dev)
	b, err := ds.blockBufs(n, embd, qDim, kvDim, ff)
	if err != nil {
		return err
	}
	xn, q, k, v, attn := b[bufXN], b[bufQ], b[bufK], b[bufV], b[bufAttn]
	rope, att := &c.Rope, &m.global
	if ly.local {
		rope, att = &m.localRope, &m.local
	}

	dev.RMSNorm(xn, x, ly.attnNorm.on, c.RMSEps)
	s.mdst = append(s.mdst[:0], q, k, v)
	s.mw = append(s.mw[:0], ly.q.on, ly.k.on, ly.v.on)
	dev.MatMulMulti(s.mdst, s.mw, xn, n)
	dev.RMSNorm(q, q, ly.qNorm.on, c.RMSEps)
	dev.RMSNorm(k, k, ly.kNorm.on, c.RMSEps)
	dev.RoPE(q, pos, c.Heads, c.HeadDim, rope)
	dev.RoPE(k, pos, c.KVHeads, c.HeadDim, rope)
	// Scaled before the product, as llama.cpp does: with an F16 cache the
	// scaled queries are what get rounded to F16.
	dev.Scale(q, m.qScale)
	attendGroups(dev, bt, li, qDim, kvDim, q, k, v, attn, att, backend.AttendInputs{})
	dev.MatMul(xn, ly.o.on, attn, n)
	dev.RMSNorm(xn, xn, ly.postAttnNorm.on, c.RMSEps)
	dev.Add(x, xn)

	dev.RMSNorm(xn, x, ly.ffnNorm.on, c.RMSEps)
	gate, up, ffn := b[bufGate], b[bufUp], b[bufFFN]
	s.mdst = append(s.mdst[:0], gate, up)
	s.mw = append(s.mw[:0], ly.gate.on, ly.up.on)
	dev.MatMulMulti(s.mdst, s.mw, xn, n)
	dev.GeGLU(ffn, gate, up)
	dev.MatMul(xn, ly.down.on, ffn, n)
	dev.RMSNorm(xn, xn, ly.postFFNNorm.on, c.RMSEps)
	dev.Add(x, xn)
	return nil
}
