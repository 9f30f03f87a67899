package arch

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/quant"
)

// naiveForward is an independent, deliberately plain float64 transformer
// used as the oracle for the architectures: it recomputes attention over
// the whole prefix for every token and shares no code with the engine
// beyond dequantizing the weights.
func naiveForward(t *testing.T, f *gguf.File, c *Config, tokens []int32) []float64 {
	t.Helper()
	get := func(name string) []float64 { return naiveTensor(t, f, name) }
	matvec := naiveMatVec
	rmsnorm := func(x, w []float64) []float64 { return naiveRMSNorm(x, w, float64(c.RMSEps)) }
	hd, nh, nkv := c.HeadDim, c.Heads, c.KVHeads
	// gpt-oss's banded layers (the even ones) may rotate with a base of
	// their own.
	baseSWA, ok := f.Float(c.Arch + ".rope.freq_base_swa")
	if !ok {
		baseSWA = float64(c.Rope.FreqBase)
	}
	rope := func(x []float64, heads, pos int, base float64) {
		for h := range heads {
			v := x[h*hd : (h+1)*hd]
			for k := 0; k < c.Rope.Dims/2; k++ {
				theta := float64(pos) * float64(c.Rope.FreqScale) * math.Pow(base, -2*float64(k)/float64(c.Rope.Dims))
				i, j := 2*k, 2*k+1
				// Only Llama's GGUF conversion permutes q and k for adjacent
				// pairs; the others rotate the two halves of each head.
				if c.Arch != "llama" {
					i, j = k, k+c.Rope.Dims/2
				}
				a, b := v[i], v[j]
				v[i] = a*math.Cos(theta) - b*math.Sin(theta)
				v[j] = a*math.Sin(theta) + b*math.Cos(theta)
			}
		}
	}
	// affine applies a product's optional ".scale" and ".bias" tensors:
	// llama.cpp scales the attention's products before their bias, the
	// feed-forward's after.
	affine := func(y []float64, name string) []float64 {
		sc, b := get(name+".scale"), get(name+".bias")
		biasFirst := strings.Contains(name, "ffn_")
		if b != nil && biasFirst {
			for i := range y {
				y[i] += b[i]
			}
		}
		if sc != nil {
			for i := range y {
				y[i] *= sc[0]
			}
		}
		if b != nil && !biasFirst {
			for i := range y {
				y[i] += b[i]
			}
		}
		return y
	}
	embd := get("token_embd.weight")
	output := get("output.weight")
	if output == nil {
		output = embd
	}
	E := c.Embd
	keys := make([][][]float64, c.Layers) // [layer][pos] → kvDim
	vals := make([][][]float64, c.Layers)
	var logits []float64
	for p, tok := range tokens {
		x := append([]float64(nil), embd[int(tok)*E:(int(tok)+1)*E]...)
		for l := range c.Layers {
			pre := fmt.Sprintf("blk.%d.", l)
			xn := rmsnorm(x, get(pre+"attn_norm.weight"))
			var q, k, v []float64
			if qkv := get(pre + "attn_qkv.weight"); qkv != nil {
				all := matvec(qkv, xn, nh*hd+2*nkv*hd)
				q, k, v = all[:nh*hd], all[nh*hd:nh*hd+nkv*hd], all[nh*hd+nkv*hd:]
			} else {
				q = affine(matvec(get(pre+"attn_q.weight"), xn, nh*hd), pre+"attn_q")
				k = affine(matvec(get(pre+"attn_k.weight"), xn, nkv*hd), pre+"attn_k")
				v = affine(matvec(get(pre+"attn_v.weight"), xn, nkv*hd), pre+"attn_v")
			}
			if qn := get(pre + "attn_q_norm.weight"); qn != nil {
				kn := get(pre + "attn_k_norm.weight")
				for h := range nh {
					copy(q[h*hd:], rmsnorm(q[h*hd:(h+1)*hd], qn))
				}
				for h := range nkv {
					copy(k[h*hd:], rmsnorm(k[h*hd:(h+1)*hd], kn))
				}
			}
			// gpt-oss: the even layers see the last window positions, and
			// every head's sink logit joins its softmax's denominator.
			first, base := 0, float64(c.Rope.FreqBase)
			if w, ok := f.Uint(c.Arch + ".attention.sliding_window"); ok && l%2 == 0 {
				first, base = max(0, p-int(w)+1), baseSWA
			}
			rope(q, nh, p, base)
			rope(k, nkv, p, base)
			keys[l] = append(keys[l], k)
			vals[l] = append(vals[l], v)
			att := make([]float64, nh*hd)
			sinks := get(pre + "attn_sinks.weight")
			for h := range nh {
				g := h / (nh / nkv)
				sc := make([]float64, p+1)
				mx := math.Inf(-1)
				if sinks != nil {
					mx = sinks[h]
				}
				for s := first; s <= p; s++ {
					var d float64
					for j := range hd {
						d += q[h*hd+j] * keys[l][s][g*hd+j]
					}
					sc[s] = d / math.Sqrt(float64(hd))
					mx = math.Max(mx, sc[s])
				}
				var sum float64
				if sinks != nil {
					sum = math.Exp(sinks[h] - mx)
				}
				for s := first; s <= p; s++ {
					sc[s] = math.Exp(sc[s] - mx)
					sum += sc[s]
				}
				for s := first; s <= p; s++ {
					for j := range hd {
						att[h*hd+j] += sc[s] / sum * vals[l][s][g*hd+j]
					}
				}
			}
			o := affine(matvec(get(pre+"attn_output.weight"), att, E), pre+"attn_output")
			for i := range x {
				x[i] += o[i]
			}
			ffnNorm := get(pre + "ffn_norm.weight")
			if ffnNorm == nil {
				ffnNorm = get(pre + "post_attention_norm.weight") // gpt-oss
			}
			xn = rmsnorm(x, ffnNorm)
			if router := get(pre + "ffn_gate_inp.weight"); router != nil {
				spec := MoESpec{Gating: GateSoftmax, NormWeights: true}
				if c.Arch == "gpt-oss" {
					// top k of the raw logits, a softmax over those, the
					// clamped SwiGLU
					spec = MoESpec{Gating: GateSoftmaxSelected, Act: Activation{Kind: ActSwiGLUClamped, Alpha: 1.702, Limit: 7}}
				}
				d := naiveMoE(naiveExperts{
					router: router, gate: get(pre + "ffn_gate_exps.weight"), up: get(pre + "ffn_up_exps.weight"),
					down: get(pre + "ffn_down_exps.weight"), n: c.Experts, k: c.ExpertsUsed, ff: c.ExpertFF,
					routerB: get(pre + "ffn_gate_inp.bias"), gateB: get(pre + "ffn_gate_exps.bias"),
					upB: get(pre + "ffn_up_exps.bias"), downB: get(pre + "ffn_down_exps.bias"),
					spec: spec,
				}, xn)
				for i := range x {
					x[i] += d[i]
				}
				continue
			}
			var gate, up []float64
			if g := get(pre + "ffn_gate.weight"); g != nil {
				gate = affine(matvec(g, xn, c.FF), pre+"ffn_gate")
				up = affine(matvec(get(pre+"ffn_up.weight"), xn, c.FF), pre+"ffn_up")
			} else {
				gu := matvec(get(pre+"ffn_up.weight"), xn, 2*c.FF)
				gate, up = gu[:c.FF], gu[c.FF:]
			}
			h := make([]float64, c.FF)
			for i := range h {
				h[i] = gate[i] / (1 + math.Exp(-gate[i])) * up[i]
			}
			d := affine(matvec(get(pre+"ffn_down.weight"), h, E), pre+"ffn_down")
			for i := range x {
				x[i] += d[i]
			}
		}
		logits = append(logits, affine(matvec(output, rmsnorm(x, get("output_norm.weight")), c.Vocab), "output")...)
	}
	return logits
}

// naiveTensor is the named tensor of f dequantized to float64, nil where
// f has none: the oracles' one use of the engine (dequantizing).
func naiveTensor(t *testing.T, f *gguf.File, name string) []float64 {
	t.Helper()
	ti, ok := f.Tensor(name)
	if !ok {
		return nil
	}
	data, err := f.TensorData(ti)
	if err != nil {
		t.Fatal(err)
	}
	n := 1
	for _, d := range ti.Shape {
		n *= int(d)
	}
	v := make([]float32, n)
	if err := quant.Dequantize(ti.Type, data, v); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, n)
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// naiveMatVec is w·x, w rows×len(x) row-major (ggml ne = [cols, rows]).
func naiveMatVec(w, x []float64, rows int) []float64 {
	cols := len(x)
	y := make([]float64, rows)
	for r := range rows {
		var s float64
		for j := range cols {
			s += w[r*cols+j] * x[j]
		}
		y[r] = s
	}
	return y
}

// naiveRMSNorm is x / rms(x) · w, eps inside the root.
func naiveRMSNorm(x, w []float64, eps float64) []float64 {
	var ss float64
	for _, v := range x {
		ss += v * v
	}
	sc := 1 / math.Sqrt(ss/float64(len(x))+eps)
	y := make([]float64, len(x))
	for i := range x {
		y[i] = x[i] * sc * w[i]
	}
	return y
}
