package arch

import (
	"math"
	"sort"
)

// naiveExperts is one layer's mixture of experts as float64 values, for
// the oracle: weights in ggml order (row-major rows×cols per expert).
type naiveExperts struct {
	spec               MoESpec
	n, k, ff           int
	router, routerB    []float64  // [n×embd], [n]
	selB               []float64  // [n]
	gate, up, down     []float64  // [n×ff×embd], [n×ff×embd], [n×embd×ff]
	gateUp             []float64  // [n×2ff×embd]
	gateB, upB, downB  []float64  // [n×ff], [n×ff], [n×embd]
	gateS, upS, downS  []float64  // [n]
	shGate, shUp, shDn []float64  // shared expert
	shInp              []float64  // [embd]
	shS                [3]float64 // shared gate, up, down scales (0: none)
	shFF               int
}

// naiveMoE is the mixture of experts written from its definition, in
// float64, sharing nothing with moe.go: every expert's output is
// computed and the chosen ones summed.
func naiveMoE(m naiveExperts, x []float64) []float64 {
	embd := len(x)
	dot := func(w []float64, off int) float64 {
		var s float64
		for j := range embd {
			s += w[off+j] * x[j]
		}
		return s
	}
	logits := make([]float64, m.n)
	for e := range logits {
		logits[e] = dot(m.router, e*embd)
		if m.routerB != nil {
			logits[e] += m.routerB[e]
		}
	}
	probs := make([]float64, m.n)
	switch m.spec.Gating {
	case GateSoftmax:
		copy(probs, naiveSoftmax(logits))
	case GateSigmoid:
		for e, v := range logits {
			probs[e] = 1 / (1 + math.Exp(-v))
		}
	default:
		copy(probs, logits)
	}
	order := make([]int, m.n)
	for i := range order {
		order[i] = i
	}
	score := func(e int) float64 {
		if m.selB != nil {
			return probs[e] + m.selB[e]
		}
		return probs[e]
	}
	sort.SliceStable(order, func(a, b int) bool { return score(order[a]) > score(order[b]) })
	chosen := order[:m.k]
	w := make([]float64, m.k)
	for j, e := range chosen {
		w[j] = probs[e]
	}
	if m.spec.Gating == GateSoftmaxSelected {
		w = naiveSoftmax(w)
	}
	if m.spec.NormWeights {
		var s float64
		for _, v := range w {
			s += v
		}
		for j := range w {
			w[j] /= s
		}
	}
	if sc := float64(m.spec.WeightScale); sc != 0 && sc != 1 {
		for j := range w {
			w[j] *= sc
		}
	}
	act := func(g, u float64) float64 {
		if m.spec.Act.Kind == ActSwiGLUClamped {
			lim, a := float64(m.spec.Act.Limit), float64(m.spec.Act.Alpha)
			g = math.Min(g, lim)
			u = math.Max(-lim, math.Min(u, lim))
			return g / (1 + math.Exp(-a*g)) * (u + 1)
		}
		return g / (1 + math.Exp(-g)) * u
	}
	out := make([]float64, embd)
	for j, e := range chosen {
		h := make([]float64, m.ff)
		for r := range m.ff {
			var g, u float64
			if m.gateUp != nil {
				g = dot(m.gateUp, (e*2*m.ff+r)*embd)
				u = dot(m.gateUp, (e*2*m.ff+m.ff+r)*embd)
			} else {
				g = dot(m.gate, (e*m.ff+r)*embd)
				u = dot(m.up, (e*m.ff+r)*embd)
				if m.gateS != nil {
					g *= m.gateS[e]
				}
				if m.upS != nil {
					u *= m.upS[e]
				}
			}
			if m.gateB != nil {
				g += m.gateB[e*m.ff+r]
			}
			if m.upB != nil {
				u += m.upB[e*m.ff+r]
			}
			h[r] = act(g, u)
		}
		for i := range embd {
			var y float64
			for r := range m.ff {
				y += m.down[(e*embd+i)*m.ff+r] * h[r]
			}
			if m.downS != nil {
				y *= m.downS[e]
			}
			if m.downB != nil {
				y += m.downB[e*embd+i]
			}
			out[i] += w[j] * y
		}
	}
	if m.shUp != nil {
		gw := 1.0
		if m.shInp != nil {
			gw = 1 / (1 + math.Exp(-dot(m.shInp, 0)))
		}
		h := make([]float64, m.shFF)
		sc := func(i int) float64 {
			if m.shS[i] == 0 {
				return 1
			}
			return m.shS[i]
		}
		for r := range h {
			g, u := dot(m.shGate, r*embd)*sc(0), dot(m.shUp, r*embd)*sc(1)
			h[r] = g / (1 + math.Exp(-g)) * u
		}
		for i := range embd {
			var y float64
			for r := range h {
				y += m.shDn[i*m.shFF+r] * h[r]
			}
			out[i] += gw * y * sc(2)
		}
	}
	return out
}

func naiveSoftmax(x []float64) []float64 {
	mx := math.Inf(-1)
	for _, v := range x {
		mx = math.Max(mx, v)
	}
	out := make([]float64, len(x))
	var s float64
	for i, v := range x {
		out[i] = math.Exp(v - mx)
		s += out[i]
	}
	for i := range out {
		out[i] /= s
	}
	return out
}
