package arch

import (
	"fmt"
	"math"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/quant"
)

// Qwen 3.5 (qwen35: 0.8B–27B; qwen35moe: 35B-A3B) is a hybrid: most layers
// are Gated DeltaNet layers — linear attention with a fixed-size
// recurrent state per sequence (backend.DeltaNet) — and every
// full_attention_interval-th layer (4 unless the file says otherwise, or
// the explicit attention.recurrent_layers list) is full attention. Each
// follows llama.cpp's src/models/qwen35.cpp and qwen35moe.cpp:
//
//   - a block is x + mixer(RMSNorm(x)), then + FFN(RMSNorm(·)) with the
//     second norm named post_attention_norm; the converter stored every
//     norm weight as 1 + w, so the norms are plain RMSNorms;
//   - full attention: attn_q gives, per head, the query then a gate of
//     the same width; QK-norm per head; NeoX RoPE over the first
//     rope.dimension_count dimensions (llama.cpp's IMROPE, whose sections
//     all take the token's position for text); the output multiplied by
//     the sigmoid of the gate before attn_output;
//   - a DeltaNet layer: attn_qkv through the causal depthwise conv
//     (ssm_conv1d) and SiLU, q and k L2-normalised, the delta rule with
//     β = σ(ssm_beta·x) and g = softplus(ssm_alpha·x + ssm_dt.bias)·ssm_a,
//     then RMSNorm(ssm_norm, per value head) ⊙ SiLU(attn_gate·x) and
//     ssm_out;
//   - qwen35's feed-forward is SwiGLU; qwen35moe's a softmax top-k mixture
//     of experts with normalised weights plus a shared expert scaled by
//     the sigmoid of ffn_gate_inp_shexp·x.
//
// Multi-token-prediction layers (nextn_predict_layers, stored after the
// trunk's) are loaded but not run: they are for speculative decoding.
type qwen35 struct {
	transformer
	layers []q35Layer
	att    backend.Attention
}

type q35Layer struct {
	attnNorm, postNorm *weight
	recurrent          bool
	// full attention
	q, k, v, o   *weight // q is [embd, 2·heads·headDim]: query and gate per head
	qNorm, kNorm *weight
	// Gated DeltaNet
	qkv, z, alpha, beta, out *weight
	ssmNorm                  *weight // [headDim]
	dn                       *backend.DeltaNet
	// feed-forward
	gate, up, down *weight
	moe            *moe
}

// qwen35MoE is the experts' routing: llama.cpp's build_moe_ffn with
// softmax gating and norm_w.
var qwen35MoE = MoESpec{Gating: GateSoftmax, NormWeights: true}

func init() {
	Register("qwen35", func(f *gguf.File) (Model, error) { return buildQwen35(f, "qwen35", false) })
	Register("qwen35moe", func(f *gguf.File) (Model, error) { return buildQwen35(f, "qwen35moe", true) })
	stateReaders["qwen35"], stateReaders["qwen35moe"] = qwen35States, qwen35States
}

func buildQwen35(f *gguf.File, name string, experts bool) (Model, error) {
	l := &loader{f: f, arch: name}
	c := Config{Arch: name}
	c.Embd = l.uint("embedding_length", -1)
	all, trunk, err := qwen35Layers(l)
	if err != nil {
		return nil, err
	}
	c.Heads = l.uint("attention.head_count", -1)
	ffReq := -1
	if experts {
		ffReq = 0
	}
	c.FF = l.uint("feed_forward_length", ffReq)
	c.Context = l.uint("context_length", 4096)
	if experts {
		readMoEConfig(l, &c, &qwen35MoE)
	}
	if l.err != nil {
		return nil, l.err
	}
	c.Layers = trunk
	if c.Embd == 0 || c.Heads == 0 || (c.FF == 0 && c.Experts == 0) {
		return nil, fmt.Errorf("metadata: zero width, heads or feed-forward length")
	}
	if experts && c.Experts == 0 {
		return nil, fmt.Errorf("metadata %s.expert_count: missing or zero (a mixture of experts needs experts)", name)
	}
	if err := readHeads(l, &c); err != nil {
		return nil, err
	}
	c.RMSEps = l.float("attention.layer_norm_rms_epsilon", 1e-6)
	recurrent, err := qwen35Pattern(f, name, all, c.Layers)
	if err != nil {
		return nil, err
	}
	shape, err := qwen35DeltaNet(l, c.RMSEps)
	if err != nil {
		return nil, err
	}
	c.SSMConvDim, c.SSMValueDim, c.SSMHeads = shape.ConvDim(), shape.ValueDim(), shape.VHeads

	m := &qwen35{}
	m.cfg = c
	embd, qDim, kvDim := c.Embd, c.Heads*c.HeadDim, c.KVDim()
	m.att = backend.Attention{Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
		Scale: float32(1 / math.Sqrt(float64(c.HeadDim))), Gated: true}
	if err := m.readEnds(f, l); err != nil {
		return nil, err
	}
	m.layers = make([]q35Layer, c.Layers)
	cd, vd := shape.ConvDim(), shape.ValueDim()
	for i := range m.layers {
		l.at(i)
		ly := &m.layers[i]
		p := fmt.Sprintf("blk.%d.", i)
		ly.recurrent = recurrent[i]
		ly.attnNorm = l.vector(p+"attn_norm.weight", false, embd)
		ly.postNorm = l.vector(p+"post_attention_norm.weight", false, embd)
		if ly.recurrent {
			ly.qkv = l.matrix(p+"attn_qkv.weight", false, embd, cd)
			ly.z = l.matrix(p+"attn_gate.weight", false, embd, vd)
			ly.alpha = l.matrix(p+"ssm_alpha.weight", false, embd, shape.VHeads)
			ly.beta = l.matrix(p+"ssm_beta.weight", false, embd, shape.VHeads)
			ly.ssmNorm = l.vector(p+"ssm_norm.weight", false, shape.HeadDim)
			ly.out = l.matrix(p+"ssm_out.weight", false, vd, embd)
			dn := shape
			dn.Conv = tapMajor(l.hostMatrix(p+"ssm_conv1d.weight", shape.ConvKernel, cd), shape.ConvKernel)
			dn.DTBias = l.hostVector(p+"ssm_dt.bias", false, shape.VHeads)
			dn.A = l.hostVector(p+"ssm_a", false, shape.VHeads)
			ly.dn = &dn
		} else {
			ly.q = l.matrix(p+"attn_q.weight", false, embd, 2*qDim)
			ly.k = l.matrix(p+"attn_k.weight", false, embd, kvDim)
			ly.v = l.matrix(p+"attn_v.weight", false, embd, kvDim)
			ly.qNorm = l.vector(p+"attn_q_norm.weight", false, c.HeadDim)
			ly.kNorm = l.vector(p+"attn_k_norm.weight", false, c.HeadDim)
			ly.o = l.matrix(p+"attn_output.weight", false, qDim, embd)
		}
		if experts {
			ly.moe = readMoE(l, p, &m.cfg, qwen35MoE)
		} else {
			ly.gate = l.matrix(p+"ffn_gate.weight", false, embd, c.FF)
			ly.up = l.matrix(p+"ffn_up.weight", false, embd, c.FF)
			ly.down = l.matrix(p+"ffn_down.weight", false, c.FF, embd)
		}
		if l.err != nil {
			return nil, l.err
		}
	}
	// The multi-token-prediction layers: known, not run.
	for _, ti := range f.Tensors {
		var li int
		var rest string
		if n, _ := fmt.Sscanf(ti.Name, "blk.%d.%s", &li, &rest); n == 2 && li >= c.Layers && li < all {
			l.known(ti.Name)
		}
	}
	m.cfg.Rope = readRope(l, &m.cfg)
	m.cfg.Rope.Mode = backend.RopeNeoX
	if m.cfg.Rope.FreqFactors != nil {
		l.fail("tensor rope_freqs.weight: not applied by the %s architecture", name)
	}
	if err := checkQwen35Sections(f, name, m.cfg.Rope.Dims); err != nil {
		return nil, err
	}
	l.finish()
	if l.err != nil {
		return nil, l.err
	}
	m.weights = l.weights
	return m, nil
}

// qwen35Layers reads the layer count: all the file's layers, and the
// trunk's (without the multi-token-prediction layers stored after it).
func qwen35Layers(l *loader) (all, trunk int, err error) {
	all = l.uint("block_count", -1)
	nextn := l.uint("nextn_predict_layers", 0)
	if l.err != nil {
		return 0, 0, l.err
	}
	if nextn >= all {
		return 0, 0, fmt.Errorf("metadata %s.nextn_predict_layers: %d of %d layers", l.arch, nextn, all)
	}
	return all, all - nextn, nil
}

// qwen35DeltaNet reads the Gated DeltaNet layers' shape.
func qwen35DeltaNet(l *loader, eps float32) (backend.DeltaNet, error) {
	shape := backend.DeltaNet{
		ConvKernel: l.uint("ssm.conv_kernel", -1),
		HeadDim:    l.uint("ssm.state_size", -1),
		VHeads:     l.uint("ssm.time_step_rank", -1),
		KHeads:     l.uint("ssm.group_count", -1),
		Eps:        eps,
	}
	inner := l.uint("ssm.inner_size", -1)
	if l.err != nil {
		return backend.DeltaNet{}, l.err
	}
	if shape.ConvKernel < 2 || shape.HeadDim == 0 || shape.KHeads == 0 || shape.VHeads%shape.KHeads != 0 ||
		inner != shape.VHeads*shape.HeadDim {
		return backend.DeltaNet{}, fmt.Errorf("metadata %s.ssm: conv kernel %d, %d key and %d value heads of %d, inner size %d do not make a Gated DeltaNet",
			l.arch, shape.ConvKernel, shape.KHeads, shape.VHeads, shape.HeadDim, inner)
	}
	return shape, nil
}

// qwen35States reads, per trunk layer, the recurrent state a sequence
// keeps (0 in the full-attention layers): States' answer.
func qwen35States(f *gguf.File) ([]int, error) {
	l := &loader{f: f, arch: f.Architecture()}
	all, trunk, err := qwen35Layers(l)
	if err != nil {
		return nil, err
	}
	shape, err := qwen35DeltaNet(l, 0)
	if err != nil {
		return nil, err
	}
	rec, err := qwen35Pattern(f, l.arch, all, trunk)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(rec))
	for i, r := range rec {
		if r {
			out[i] = shape.StateBytes()
		}
	}
	return out, nil
}

// qwen35Pattern says which of the trunk's layers are recurrent, as
// llama.cpp's load_arch_hparams: attention.recurrent_layers (one bool
// per layer, the MTP layers' included), or else every layer but each
// full_attention_interval-th (default 4).
func qwen35Pattern(f *gguf.File, arch string, all, layers int) ([]bool, error) {
	rec := make([]bool, layers)
	key := arch + ".attention.recurrent_layers"
	if v, ok := f.Lookup(key); ok {
		a, ok := v.V.(gguf.Array)
		bs, ok2 := a.Values.([]bool)
		if !ok || !ok2 || len(bs) != all {
			return nil, fmt.Errorf("metadata %s: want %d bools, one per layer", key, all)
		}
		copy(rec, bs)
		return rec, nil
	}
	n := uint64(4)
	ikey := arch + ".full_attention_interval"
	if _, present := f.Lookup(ikey); present {
		var ok bool
		if n, ok = f.Uint(ikey); !ok || n == 0 || n > 1<<16 {
			return nil, fmt.Errorf("metadata %s: not a layer interval", ikey)
		}
	}
	for i := range rec {
		rec[i] = uint64(i+1)%n != 0
	}
	return rec, nil
}

// checkQwen35Sections refuses RoPE sections under which a text token's
// rotation is not NeoX RoPE over dims: llama.cpp's IMROPE gives a pair
// the position of section t, h or w — for text all the token's position
// — or else the fourth (e), which is 0 for text and leaves the pair
// unrotated.
func checkQwen35Sections(f *gguf.File, arch string, dims int) error {
	key := arch + ".rope.dimension_sections"
	v, ok := f.Lookup(key)
	if !ok {
		return fmt.Errorf("metadata %s: missing", key)
	}
	a, _ := v.V.(gguf.Array)
	var sec [4]int
	switch vals := a.Values.(type) {
	case []int32:
		for i := 0; i < len(vals) && i < 4; i++ {
			sec[i] = int(vals[i])
		}
	case []uint32:
		for i := 0; i < len(vals) && i < 4; i++ {
			sec[i] = int(vals[i])
		}
	default:
		return fmt.Errorf("metadata %s: not an array of integers", key)
	}
	total := sec[0] + sec[1] + sec[2] + sec[3]
	if total <= 0 || total > dims {
		return fmt.Errorf("metadata %s: sections %v for %d rotated dimensions", key, sec, dims)
	}
	for pair := range dims / 2 {
		s := pair % total
		if !(s%3 == 0 && s < 3*sec[0] || s%3 == 1 && s < 3*sec[1] || s%3 == 2 && s < 3*sec[2]) {
			return fmt.Errorf("metadata %s: sections %v leave pair %d to the fourth section (not supported for text)", key, sec, pair)
		}
	}
	return nil
}

// hostMatrix reads a small 2-D tensor of parameters [cols, rows] (a
// convolution's kernel) as float32 values.
func (l *loader) hostMatrix(name string, cols, rows int) []float32 {
	t := l.tensor2D(name, false, cols, rows)
	if t == nil {
		return nil
	}
	out := make([]float32, cols*rows)
	if err := quant.Dequantize(t.Type, t.Data, out); err != nil {
		l.fail("tensor %s: %v", name, err)
		return nil
	}
	return out
}

// tapMajor turns a convolution kernel stored taps per channel (ggml's
// [taps, channels]) into one row per tap.
func tapMajor(w []float32, taps int) []float32 {
	if w == nil {
		return nil
	}
	ch := len(w) / taps
	out := make([]float32, len(w))
	for c := range ch {
		for i := range taps {
			out[i*ch+c] = w[c*taps+i]
		}
	}
	return out
}

// CacheSpec implements Model: KV rows for the attention layers, a state
// for each DeltaNet layer.
func (m *qwen35) CacheSpec(kvType quant.Type, ctx int) []backend.LayerSpec {
	kv := &backend.KVSpec{Type: kvType, Context: ctx, Dim: m.cfg.KVDim()}
	out := make([]backend.LayerSpec, len(m.layers))
	for i, ly := range m.layers {
		if ly.recurrent {
			out[i].StateBytes = ly.dn.StateBytes()
		} else {
			out[i].KV = kv
		}
	}
	return out
}

// Forward implements Model.
func (m *qwen35) Forward(s *Scratch, bt *Batch, logits []float32) error {
	return m.forward(s, bt, logits, 0, m)
}

func (m *qwen35) runBlock(s *Scratch, dev backend.Device, li int, bt *Batch, x backend.Buf) error {
	ly := &m.layers[li]
	c := &m.cfg
	n := len(bt.Tokens)
	ds := s.on(dev)
	xn, err := ds.get(bufXN, n*c.Embd)
	if err != nil {
		return err
	}
	dev.RMSNorm(xn, x, ly.attnNorm.on, c.RMSEps)
	if ly.recurrent {
		err = m.deltaNet(s, ds, dev, ly, li, bt, xn)
	} else {
		err = m.attention(s, ds, dev, ly, li, bt, xn)
	}
	if err != nil {
		return err
	}
	dev.Add(x, xn)
	dev.RMSNorm(xn, x, ly.postNorm.on, c.RMSEps)
	if ly.moe != nil {
		return ly.moe.forward(s, dev, ds, xn, x, n)
	}
	gate, err := ds.get(bufGate, n*c.FF)
	if err != nil {
		return err
	}
	up, err := ds.get(bufUp, n*c.FF)
	if err != nil {
		return err
	}
	s.mdst = append(s.mdst[:0], gate, up)
	s.mw = append(s.mw[:0], ly.gate.on, ly.up.on)
	dev.MatMulMulti(s.mdst, s.mw, xn, n)
	dev.SwiGLU(gate, gate, up)
	dev.MatMul(xn, ly.down.on, gate, n)
	dev.Add(x, xn)
	return nil
}

// attention is a full-attention layer's mixer: xn (n×embd) in, its
// output in xn.
func (m *qwen35) attention(s *Scratch, ds *devScratch, dev backend.Device, ly *q35Layer, li int, bt *Batch, xn backend.Buf) error {
	c := &m.cfg
	n := len(bt.Tokens)
	hd, qDim, kvDim := c.HeadDim, c.Heads*c.HeadDim, c.KVDim()
	var b [5]backend.Buf
	for i, r := range [...]struct{ role, n int }{
		{bufQG, n * 2 * qDim}, {bufQ, n * qDim}, {bufK, n * kvDim}, {bufV, n * kvDim}, {bufAttn, n * qDim},
	} {
		var err error
		if b[i], err = ds.get(r.role, r.n); err != nil {
			return err
		}
	}
	qg, q, k, v, attn := b[0], b[1], b[2], b[3], b[4]
	s.mdst = append(s.mdst[:0], qg, k, v)
	s.mw = append(s.mw[:0], ly.q.on, ly.k.on, ly.v.on)
	dev.MatMulMulti(s.mdst, s.mw, xn, n)
	// Per head the query, then its gate: the gate goes to attn until
	// Attend, which reads it from there.
	gate := attn
	dev.CopyRows(q, hd, qg, 2*hd, n*c.Heads, hd)
	dev.CopyRows(gate, hd, qg.Slice(hd, qg.Len()), 2*hd, n*c.Heads, hd)
	dev.RMSNorm(q, q, ly.qNorm.on, c.RMSEps)
	dev.RMSNorm(k, k, ly.kNorm.on, c.RMSEps)
	dev.RoPE(q, bt.Pos, c.Heads, hd, &c.Rope)
	dev.RoPE(k, bt.Pos, c.KVHeads, hd, &c.Rope)
	// Attend writes over its gate: the gate is first moved to qg.
	dev.CopyRows(qg, qDim, gate, qDim, n, qDim)
	for _, g := range bt.Groups {
		kv := g.Cache.KV(li)
		gp := bt.Pos[g.Start:g.End]
		dev.StoreKV(kv, gp, k.Slice(g.Start*kvDim, g.End*kvDim), v.Slice(g.Start*kvDim, g.End*kvDim))
		dev.Attend(attn.Slice(g.Start*qDim, g.End*qDim), q.Slice(g.Start*qDim, g.End*qDim), kv, gp, &m.att,
			backend.AttendInputs{Gate: qg.Slice(g.Start*qDim, g.End*qDim)})
	}
	dev.MatMul(xn, ly.o.on, attn, n)
	return nil
}

// deltaNet is a Gated DeltaNet layer's mixer: xn (n×embd) in, its output
// in xn. Each sequence's rows run through its own state.
func (m *qwen35) deltaNet(s *Scratch, ds *devScratch, dev backend.Device, ly *q35Layer, li int, bt *Batch, xn backend.Buf) error {
	run, ok := dev.(backend.DeltaNetRunner)
	if !ok {
		return fmt.Errorf("%s does not run Gated DeltaNet layers", dev.Name())
	}
	d := ly.dn
	n := len(bt.Tokens)
	cd, vd, H := d.ConvDim(), d.ValueDim(), d.VHeads
	var b [5]backend.Buf
	for i, r := range [...]struct{ role, n int }{
		{bufDNQKV, n * cd}, {bufDNZ, n * vd}, {bufDNAlpha, n * H}, {bufDNBeta, n * H}, {bufDNOut, n * vd},
	} {
		var err error
		if b[i], err = ds.get(r.role, r.n); err != nil {
			return err
		}
	}
	qkv, z, alpha, beta, o := b[0], b[1], b[2], b[3], b[4]
	s.mdst = append(s.mdst[:0], qkv, z, alpha, beta)
	s.mw = append(s.mw[:0], ly.qkv.on, ly.z.on, ly.alpha.on, ly.beta.on)
	dev.MatMulMulti(s.mdst, s.mw, xn, n)
	for _, g := range bt.Groups {
		st := g.Cache.Layer(li).State
		if st == nil {
			return fmt.Errorf("a sequence's cache has no state for layer %d", li)
		}
		run.DeltaNet(o.Slice(g.Start*vd, g.End*vd), qkv.Slice(g.Start*cd, g.End*cd),
			alpha.Slice(g.Start*H, g.End*H), beta.Slice(g.Start*H, g.End*H), st, g.End-g.Start, d)
	}
	// RMSNorm over each value head, times SiLU of the gate z.
	dev.RMSNorm(o, o, ly.ssmNorm.on, m.cfg.RMSEps)
	dev.SwiGLU(o, z, o)
	dev.MatMul(xn, ly.out.on, o, n)
	return nil
}
