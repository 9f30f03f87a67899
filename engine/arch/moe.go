package arch

import (
	"fmt"
	"math"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// The mixture-of-experts feed-forward, written once for every
// architecture that has one. A router scores the experts for each token;
// the best few run the token through their own gated feed-forward and
// the outputs are summed with the router's weights. Each layer's experts
// are 3-D tensors [input, output, experts]: an expert's matrix product
// reads only that expert's slice (backend.Device.WeightSlice), and the
// tokens of a batch are grouped by expert so that each chosen expert's
// weights are read once per batch, not once per token — on a CPU that is
// the whole speed of a mixture of experts.

// Gating is how router logits become the experts' probabilities.
type Gating int

const (
	// GateSoftmax takes a softmax over all experts, then the top k
	// (Qwen3-MoE, Qwen 3.5 MoE, Mixtral).
	GateSoftmax Gating = iota
	// GateSoftmaxSelected takes the top k raw logits, then a softmax over
	// those k only (gpt-oss).
	GateSoftmaxSelected
	// GateSigmoid scores each expert by the sigmoid of its logit
	// (DeepSeek-V3 style routers).
	GateSigmoid
)

// ActKind is the gated activation of an expert.
type ActKind int

const (
	// ActSwiGLU is silu(gate)·up.
	ActSwiGLU ActKind = iota
	// ActSwiGLUClamped is gpt-oss's variant: g = min(gate, Limit),
	// u = clamp(up, −Limit, Limit), g·σ(Alpha·g)·(u+1).
	ActSwiGLUClamped
)

// Activation is an expert's activation and its parameters.
type Activation struct {
	Kind         ActKind
	Alpha, Limit float32 // ActSwiGLUClamped
}

func (a Activation) apply(dev backend.Device, dst, gate, up backend.Buf) {
	switch a.Kind {
	case ActSwiGLUClamped:
		dev.SwiGLUClamped(dst, gate, up, a.Alpha, a.Limit)
	default:
		dev.SwiGLU(dst, gate, up)
	}
}

// MoESpec is what an architecture's code (not its file) says about its
// experts, as llama.cpp's build_moe_ffn arguments do.
type MoESpec struct {
	Gating Gating
	// NormWeights divides the chosen experts' weights by their sum.
	NormWeights bool
	// WeightScale multiplies the weights after that (0 or 1: not at all).
	WeightScale float32
	Act         Activation
	// DenseWidth: the experts are feed_forward_length wide, whatever
	// expert_feed_forward_length says (llama files with experts).
	DenseWidth bool
}

// moe is one layer's mixture-of-experts feed-forward. Optional parts are
// nil when the file does not have them.
type moe struct {
	spec                    MoESpec
	experts, used, ff, embd int

	router  *weight   // ffn_gate_inp.weight [embd, experts]
	routerB []float32 // ffn_gate_inp.bias: added to the logits
	selB    []float32 // exp_probs_b.bias: biases the choice, not the weights

	gate, up, down *weight // [embd, ff, E], [embd, ff, E], [ff, embd, E]
	gateUp         *weight // [embd, 2ff, E]: gate rows, then up rows
	// per-expert biases [ff or embd, E] and scales [E]
	gateB, upB, downB, gateUpB *weight
	gateS, upS, downS          []float32

	// The shared expert every token goes through, and its gate: a
	// sigmoid of one logit per token scales its output.
	shGate, shUp, shDown *weight
	shInp                *weight // ffn_gate_inp_shexp.weight [embd]
	shFF                 int
	// the shared expert's per-tensor scales (0: none): gate, up, down
	shS [3]float32

	// per-expert slices of the 3-D weights, made at the first pass after
	// a placement; of is the resident down weight they were made with
	of     backend.Weight
	slices [numExpertTensors][]backend.Weight
}

// The 3-D tensors a layer slices per expert.
const (
	exGate = iota
	exUp
	exDown
	exGateUp
	exGateB
	exUpB
	exDownB
	exGateUpB
	numExpertTensors
)

// readMoEConfig reads the expert counts of the file into c.
func readMoEConfig(l *loader, c *Config, spec *MoESpec) {
	c.Experts = l.uint("expert_count", 0)
	c.ExpertsUsed = l.uint("expert_used_count", 0)
	c.ExpertFF = l.uint("expert_feed_forward_length", 0)
	if l.err != nil || c.Experts == 0 {
		return
	}
	if c.ExpertsUsed == 0 || c.ExpertsUsed > c.Experts {
		l.fail("metadata %s.expert_used_count: %d of %d experts", l.arch, c.ExpertsUsed, c.Experts)
	}
	if spec.DenseWidth {
		c.ExpertFF = c.FF
	}
	if c.ExpertFF == 0 {
		// llama.cpp's rule when the file does not say.
		c.ExpertFF = c.FF / max(1, c.ExpertsUsed)
	}
}

// readMoE reads the experts of the layer whose tensor names start with p.
func readMoE(l *loader, p string, c *Config, spec MoESpec) *moe {
	E, embd, ff := c.Experts, c.Embd, c.ExpertFF
	m := &moe{spec: spec, experts: E, used: c.ExpertsUsed, ff: ff, embd: embd}
	m.router = l.matrix(p+"ffn_gate_inp.weight", false, embd, E)
	m.routerB = l.hostVector(p+"ffn_gate_inp.bias", true, E)
	m.selB = l.hostVector(p+"exp_probs_b.bias", true, E)
	if _, fused := l.f.Tensor(p + "ffn_gate_up_exps.weight"); fused {
		m.gateUp = l.experts(p+"ffn_gate_up_exps.weight", embd, 2*ff, E)
		m.gateUpB = l.expertRows(p+"ffn_gate_up_exps.bias", 2*ff, E)
	} else {
		m.gate = l.experts(p+"ffn_gate_exps.weight", embd, ff, E)
		m.up = l.experts(p+"ffn_up_exps.weight", embd, ff, E)
		m.gateB = l.expertRows(p+"ffn_gate_exps.bias", ff, E)
		m.upB = l.expertRows(p+"ffn_up_exps.bias", ff, E)
		// llama.cpp applies per-expert scales to the split tensors only.
		m.gateS = l.hostVector(p+"ffn_gate_exps.scale", true, E)
		m.upS = l.hostVector(p+"ffn_up_exps.scale", true, E)
	}
	m.down = l.experts(p+"ffn_down_exps.weight", ff, embd, E)
	m.downB = l.expertRows(p+"ffn_down_exps.bias", embd, E)
	m.downS = l.hostVector(p+"ffn_down_exps.scale", true, E)

	if _, ok := l.f.Tensor(p + "ffn_up_shexp.weight"); ok {
		t, _ := l.f.Tensor(p + "ffn_up_shexp.weight")
		if len(t.Shape) >= 2 {
			m.shFF = int(t.Shape[1])
		}
		m.shGate = l.matrix(p+"ffn_gate_shexp.weight", false, embd, m.shFF)
		m.shUp = l.matrix(p+"ffn_up_shexp.weight", false, embd, m.shFF)
		m.shDown = l.matrix(p+"ffn_down_shexp.weight", false, m.shFF, embd)
		m.shInp = l.matrix(p+"ffn_gate_inp_shexp.weight", true, embd, 1)
		for i, n := range []string{"ffn_gate_shexp", "ffn_up_shexp", "ffn_down_shexp"} {
			if v := l.hostVector(p+n+".scale", true, 1); v != nil {
				m.shS[i] = v[0]
			}
		}
	}
	return m
}

// experts reads a 3-D expert tensor [cols, rows, n] used in matrix
// products.
func (l *loader) experts(name string, cols, rows, n int) *weight {
	t := l.tensor(name, false, cols, rows, n)
	if t == nil {
		return nil
	}
	if t.Ne[3] != 1 {
		l.fail("tensor %s: shape %v has a fourth dimension", name, t.Ne)
		return nil
	}
	if !quant.VecDotSupported(t.Type) {
		l.fail("tensor %s: type %v is not supported for matrix products", name, t.Type)
		return nil
	}
	if _, ok := t.Type.RowSize(cols); !ok {
		l.fail("tensor %s: row length %d is not a multiple of the %v block", name, cols, t.Type)
		return nil
	}
	return l.add(t)
}

// expertRows reads an optional 2-D tensor of one row per expert (the
// experts' biases).
func (l *loader) expertRows(name string, cols, n int) *weight {
	t := l.tensor2D(name, true, cols, n)
	if t == nil {
		return nil
	}
	if _, ok := t.Type.RowSize(cols); !ok {
		l.fail("tensor %s: type %v cannot hold rows of %d", name, t.Type, cols)
		return nil
	}
	return l.add(t)
}

// placeSlices makes the per-expert slices of the layer's 3-D weights on
// dev, where Place put them, unless the ones made last still view them.
func (m *moe) placeSlices(dev backend.Device) error {
	if m.of != nil && m.of == m.down.on {
		return nil
	}
	for i, w := range [numExpertTensors]*weight{m.gate, m.up, m.down, m.gateUp, m.gateB, m.upB, m.downB, m.gateUpB} {
		m.slices[i] = nil
		if w == nil {
			continue
		}
		s := make([]backend.Weight, m.experts)
		for e := range s {
			var err error
			if s[e], err = dev.WeightSlice(w.on, e); err != nil {
				return fmt.Errorf("expert %d of %s: %w", e, w.t.Name, err)
			}
		}
		m.slices[i] = s
	}
	m.of = m.down.on
	return nil
}

// moeHost is the routing of one pass's tokens, on the host.
type moeHost struct {
	logits  []float32 // n×experts, then n shared-expert gate logits
	probs   []float32 // one token's
	sel     []int32   // n×used: chosen experts, best first
	w       []float32 // n×used: their weights
	count   []int     // tokens per expert
	start   []int     // where each expert's tokens start in rows
	rows    []int32   // tokens grouped by expert, in token order
	rw      []float32 // their weights
	ident   []int32   // 0 … n-1
	shw     []float32 // shared expert's gates
	zero    []float32
	fill    []int
	taken   []bool
	experts []int // the chosen experts, by index
	n, nn   []int // rows of each, and of each product
}

// forward adds the experts' output for the n normalised rows xn to the
// residual stream x.
func (m *moe) forward(s *Scratch, dev backend.Device, ds *devScratch, xn, x backend.Buf, n int) error {
	E, ff, embd := m.experts, m.ff, m.embd
	if err := m.placeSlices(dev); err != nil {
		return err
	}
	h := &s.moe
	nLog := n * E
	if m.shInp != nil {
		nLog += n
	}
	logits, err := ds.get(bufRouter, nLog)
	if err != nil {
		return err
	}
	dev.MatMul(logits, m.router.on, xn, n)
	if m.shInp != nil {
		dev.MatMul(logits.Slice(n*E, nLog), m.shInp.on, xn, n)
	}
	h.logits = grow(h.logits, nLog)
	dev.Read(h.logits, logits)
	// The choice of experts decides which weights to read: it waits for
	// the router, on any device.
	if err := dev.Sync(); err != nil {
		return &backend.DeviceError{Device: dev, Err: err}
	}
	m.route(h, n)

	// Every buffer sized for all the experts' rows (n·used) at once: one
	// grown within the layer would be freed under the queued products
	// that use it.
	rows := n * m.used
	wide, fused := max(n*m.shFF, rows*ff), 0
	if m.gateUp != nil {
		fused = rows * 2 * ff
	}
	var b [7]backend.Buf
	for i, r := range [...]struct{ role, n int }{
		{bufMoEIn, rows * embd}, {bufMoEOut, max(rows, n) * embd}, {bufMoESum, n * embd},
		{bufGate, wide}, {bufUp, wide}, {bufFFN, wide}, {bufGateUp, fused},
	} {
		if b[i], err = ds.get(r.role, r.n); err != nil {
			return err
		}
	}
	in, out, sum, gbuf, ubuf, act, gubuf := b[0], b[1], b[2], b[3], b[4], b[5], b[6]
	h.zero = grow(h.zero, n*embd)
	clear(h.zero)
	dev.Write(sum, h.zero)

	m.runExperts(s, dev, n, xn, in, sum, out, gbuf, ubuf, act, gubuf)

	if m.shUp != nil {
		g, u, a := gbuf.Slice(0, n*m.shFF), ubuf.Slice(0, n*m.shFF), act.Slice(0, n*m.shFF)
		s.mdst = append(s.mdst[:0], g, u)
		s.mw = append(s.mw[:0], m.shGate.on, m.shUp.on)
		dev.MatMulMulti(s.mdst, s.mw, xn, n)
		postFFN(dev, u, m.shS[1], nil)
		postFFN(dev, g, m.shS[0], nil)
		dev.SwiGLU(a, g, u)
		y := out.Slice(0, n*embd)
		dev.MatMul(y, m.shDown.on, a, n)
		postFFN(dev, y, m.shS[2], nil)
		var gates []float32
		if m.shInp != nil {
			gates = h.shw[:n]
		}
		dev.ScatterAddRows(sum, y, embd, h.ident[:n], gates)
	}
	dev.Add(x, sum)
	return nil
}

// runExperts runs the chosen experts, each once over the tokens routed to
// it, and adds their weighted outputs to sum. Every expert's rows lie
// one after the other in the buffers, in expert order (h.rows' order),
// so each step is one device call for all experts — a few parallel
// loops a layer, not a few per expert — and each token's outputs are
// added in expert order, the same bits however the token is batched.
func (m *moe) runExperts(s *Scratch, dev backend.Device, n int, xn, in, sum, out, gbuf, ubuf, act, gubuf backend.Buf) {
	h := &s.moe
	ff, embd := m.ff, m.embd
	sl := &m.slices
	h.experts = h.experts[:0]
	for e := range m.experts {
		if h.count[e] > 0 {
			h.experts = append(h.experts, e)
		}
	}
	total := n * m.used // rows over all experts
	h.n = h.n[:0]
	s.mx = s.mx[:0]
	for _, e := range h.experts {
		c, at := h.count[e], h.start[e]
		src := xn
		if c < n {
			// (all n tokens, in order, need no copy)
			src = in.Slice(at*embd, (at+c)*embd)
			dev.GatherRows(src, xn, embd, h.rows[at:at+c])
		}
		s.mx = append(s.mx, src)
		h.n = append(h.n, c)
	}
	g, u, a := gbuf.Slice(0, total*ff), ubuf.Slice(0, total*ff), act.Slice(0, total*ff)
	s.mdst, s.mw, s.min, h.nn = s.mdst[:0], s.mw[:0], s.min[:0], h.nn[:0]
	if m.gateUp != nil {
		for i, e := range h.experts {
			at, c := h.start[e], h.count[e]
			s.mdst = append(s.mdst, gubuf.Slice(at*2*ff, (at+c)*2*ff))
			s.mw = append(s.mw, sl[exGateUp][e])
			s.min = append(s.min, s.mx[i])
			h.nn = append(h.nn, c)
		}
		dev.MatMulEach(s.mdst, s.mw, s.min, h.nn)
		if sl[exGateUpB] != nil {
			for i, e := range h.experts {
				dev.AddBias(s.mdst[i], sl[exGateUpB][e])
			}
		}
		gu := gubuf.Slice(0, total*2*ff)
		dev.CopyRows(g, ff, gu, 2*ff, total, ff)
		dev.CopyRows(u, ff, gu.Slice(ff, gu.Len()), 2*ff, total, ff)
	} else {
		for i, e := range h.experts {
			at, c := h.start[e], h.count[e]
			s.mdst = append(s.mdst, g.Slice(at*ff, (at+c)*ff), u.Slice(at*ff, (at+c)*ff))
			s.mw = append(s.mw, sl[exGate][e], sl[exUp][e])
			s.min = append(s.min, s.mx[i], s.mx[i])
			h.nn = append(h.nn, c, c)
		}
		dev.MatMulEach(s.mdst, s.mw, s.min, h.nn)
		for i, e := range h.experts {
			gi, ui := s.mdst[2*i], s.mdst[2*i+1]
			if m.upS != nil {
				dev.Scale(ui, m.upS[e])
			}
			if sl[exUpB] != nil {
				dev.AddBias(ui, sl[exUpB][e])
			}
			if m.gateS != nil {
				dev.Scale(gi, m.gateS[e])
			}
			if sl[exGateB] != nil {
				dev.AddBias(gi, sl[exGateB][e])
			}
		}
	}
	m.spec.Act.apply(dev, a, g, u)
	s.mdst, s.mw, s.min = s.mdst[:0], s.mw[:0], s.min[:0]
	for _, e := range h.experts {
		at, c := h.start[e], h.count[e]
		s.mdst = append(s.mdst, out.Slice(at*embd, (at+c)*embd))
		s.mw = append(s.mw, sl[exDown][e])
		s.min = append(s.min, a.Slice(at*ff, (at+c)*ff))
	}
	dev.MatMulEach(s.mdst, s.mw, s.min, h.n)
	for i, e := range h.experts {
		if m.downS != nil {
			dev.Scale(s.mdst[i], m.downS[e])
		}
		if sl[exDownB] != nil {
			dev.AddBias(s.mdst[i], sl[exDownB][e])
		}
	}
	dev.ScatterAddRows(sum, out.Slice(0, total*embd), embd, h.rows[:total], h.rw[:total])
}

// route chooses each token's experts and their weights from the router
// logits in h, as llama.cpp's build_moe_ffn does, and groups the tokens
// by expert.
func (m *moe) route(h *moeHost, n int) {
	E, k := m.experts, m.used
	h.probs = grow(h.probs, E)
	h.sel = growI(h.sel, n*k)
	h.w = grow(h.w, n*k)
	h.count = growInt(h.count, E)
	h.start = growInt(h.start, E)
	h.rows = growI(h.rows, n*k)
	h.rw = grow(h.rw, n*k)
	h.ident = growI(h.ident, n)
	h.shw = grow(h.shw, n)
	clear(h.count)
	h.taken = growBool(h.taken, E)
	sel := h.taken
	for t := range n {
		h.ident[t] = int32(t)
		lg := h.logits[t*E : (t+1)*E]
		if m.routerB != nil {
			for i, b := range m.routerB {
				lg[i] += b
			}
		}
		p := h.probs[:E]
		switch m.spec.Gating {
		case GateSoftmax:
			softmax32(p, lg)
		case GateSigmoid:
			for i, v := range lg {
				p[i] = sigmoid32(v)
			}
		default:
			copy(p, lg)
		}
		// The top k by the (optionally biased) scores; the first of equal
		// scores wins.
		clear(sel)
		ts, tw := h.sel[t*k:(t+1)*k], h.w[t*k:(t+1)*k]
		for j := range k {
			best, bv := -1, float32(0)
			for i := range E {
				if sel[i] {
					continue
				}
				v := p[i]
				if m.selB != nil {
					v += m.selB[i]
				}
				if best < 0 || v > bv {
					best, bv = i, v
				}
			}
			sel[best] = true
			ts[j], tw[j] = int32(best), p[best]
		}
		if m.spec.Gating == GateSoftmaxSelected {
			softmax32(tw, tw)
		}
		if m.spec.NormWeights {
			var sum float64
			for _, v := range tw {
				sum += float64(v)
			}
			// llama.cpp's guard against a zero sum: the smallest normal
			// half-precision value.
			d := max(float32(sum), 6.103515625e-5)
			for j := range tw {
				tw[j] /= d
			}
		}
		if sc := m.spec.WeightScale; sc != 0 && sc != 1 {
			for j := range tw {
				tw[j] *= sc
			}
		}
		for _, e := range ts {
			h.count[e]++
		}
	}
	at := 0
	for e := range E {
		h.start[e] = at
		at += h.count[e]
	}
	h.fill = growInt(h.fill, E)
	fill := h.fill
	copy(fill, h.start)
	for t := range n {
		for j := range k {
			e := h.sel[t*k+j]
			h.rows[fill[e]] = int32(t)
			h.rw[fill[e]] = h.w[t*k+j]
			fill[e]++
		}
	}
	if m.shInp != nil {
		for t := range n {
			h.shw[t] = sigmoid32(h.logits[n*E+t])
		}
	}
}

// softmax32 is ggml's softmax: float32 exponentials summed in float64.
func softmax32(dst, x []float32) {
	mx := x[0]
	for _, v := range x {
		mx = max(mx, v)
	}
	var sum float64
	for i, v := range x {
		e := float32(math.Exp(float64(v - mx)))
		dst[i] = e
		sum += float64(e)
	}
	inv := float32(1 / sum)
	for i := range dst {
		dst[i] *= inv
	}
}

func sigmoid32(v float32) float32 { return float32(1 / (1 + math.Exp(-float64(v)))) }

func growI(s []int32, n int) []int32 {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]int32, n)
}

func growInt(s []int, n int) []int {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]int, n)
}

func growBool(s []bool, n int) []bool {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]bool, n)
}
