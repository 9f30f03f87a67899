package arch

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/models/synth"
)

// naiveGemma3 is the float64 oracle for gemma3, written from Gemma 3's
// equations and llama.cpp's reading of the file's keys, and sharing no
// code with the engine beyond dequantizing weights and F16 rounding. It
// reads every hyperparameter from the file itself, not from the model's
// Config, so a misread key shows. The one concession to ggml is GELU:
// ggml's CPU looks it up in an F16 table, so the oracle rounds its input
// and output to F16 the same way (and computes the rest in float64).
func naiveGemma3(t *testing.T, f *gguf.File, tokens []int32) []float64 {
	t.Helper()
	get := func(name string) []float64 { return naiveTensor(t, f, name) }
	u := func(key string, def int) int {
		if v, ok := f.Uint("gemma3." + key); ok {
			return int(v)
		}
		return def
	}
	fl := func(key string, def float64) float64 {
		if v, ok := f.Float("gemma3." + key); ok {
			return v
		}
		return def
	}
	E := u("embedding_length", 0)
	L := u("block_count", 0)
	nh := u("attention.head_count", 0)
	nkv := u("attention.head_count_kv", nh)
	hd := u("attention.key_length", E/nh)
	ff := u("feed_forward_length", 0)
	eps := fl("attention.layer_norm_rms_epsilon", 1e-6)
	window := u("attention.sliding_window", 0)
	period := u("attention.sliding_window_pattern", 6)
	baseGlobal := fl("rope.freq_base", 10000)
	baseLocal := fl("rope.freq_base_swa", 10000)
	scaleGlobal := 1.0
	if st, _ := f.String("gemma3.rope.scaling.type"); st == "linear" {
		scaleGlobal = 1 / fl("rope.scaling.factor", 1)
	}
	softCap := fl("final_logit_softcapping", 0)
	qScale := 1 / math.Sqrt(float64(hd))
	if L == 62 {
		qScale = 1 / math.Sqrt(float64(E/nh))
	}

	matvec := naiveMatVec
	rmsnorm := func(x, w []float64) []float64 { return naiveRMSNorm(x, w, eps) }
	// NeoX rotation: dimension k pairs with k + hd/2.
	rope := func(x []float64, heads, pos int, base, scale float64) {
		for h := range heads {
			v := x[h*hd : (h+1)*hd]
			for k := 0; k < hd/2; k++ {
				theta := float64(pos) * scale * math.Pow(base, -2*float64(k)/float64(hd))
				a, b := v[k], v[k+hd/2]
				v[k] = a*math.Cos(theta) - b*math.Sin(theta)
				v[k+hd/2] = a*math.Sin(theta) + b*math.Cos(theta)
			}
		}
	}
	f16 := func(x float64) float64 { return float64(quant.FP16ToFP32(quant.FP32ToFP16(float32(x)))) }
	gelu := func(x float64) float64 {
		switch {
		case x <= -10:
			return 0
		case x >= 10:
			return x
		}
		x = f16(x)
		return f16(0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x))))
	}

	embd := get("token_embd.weight")
	output := get("output.weight")
	if output == nil {
		output = embd
	}
	vocab := len(embd) / E
	keys := make([][][]float64, L)
	vals := make([][][]float64, L)
	var logits []float64
	for p, tok := range tokens {
		x := make([]float64, E)
		for i := range x {
			x[i] = embd[int(tok)*E+i] * math.Sqrt(float64(E))
		}
		for l := range L {
			pre := fmt.Sprintf("blk.%d.", l)
			local := window > 0 && (period == 0 || l%period < period-1)
			xn := rmsnorm(x, get(pre+"attn_norm.weight"))
			q := matvec(get(pre+"attn_q.weight"), xn, nh*hd)
			k := matvec(get(pre+"attn_k.weight"), xn, nkv*hd)
			v := matvec(get(pre+"attn_v.weight"), xn, nkv*hd)
			qn, kn := get(pre+"attn_q_norm.weight"), get(pre+"attn_k_norm.weight")
			for h := range nh {
				copy(q[h*hd:], rmsnorm(q[h*hd:(h+1)*hd], qn))
			}
			for h := range nkv {
				copy(k[h*hd:], rmsnorm(k[h*hd:(h+1)*hd], kn))
			}
			base, scale := baseGlobal, scaleGlobal
			if local {
				base, scale = baseLocal, 1
			}
			rope(q, nh, p, base, scale)
			rope(k, nkv, p, base, scale)
			keys[l] = append(keys[l], k)
			vals[l] = append(vals[l], v)
			first := 0
			if local {
				first = max(0, p-window+1)
			}
			att := make([]float64, nh*hd)
			for h := range nh {
				g := h / (nh / nkv)
				sc := make([]float64, p+1-first)
				mx := math.Inf(-1)
				for s := first; s <= p; s++ {
					var d float64
					for j := range hd {
						d += q[h*hd+j] * qScale * keys[l][s][g*hd+j]
					}
					sc[s-first] = d
					mx = math.Max(mx, d)
				}
				var sum float64
				for i := range sc {
					sc[i] = math.Exp(sc[i] - mx)
					sum += sc[i]
				}
				for i := range sc {
					for j := range hd {
						att[h*hd+j] += sc[i] / sum * vals[l][first+i][g*hd+j]
					}
				}
			}
			o := rmsnorm(matvec(get(pre+"attn_output.weight"), att, E), get(pre+"post_attention_norm.weight"))
			for i := range x {
				x[i] += o[i]
			}
			xn = rmsnorm(x, get(pre+"ffn_norm.weight"))
			gate := matvec(get(pre+"ffn_gate.weight"), xn, ff)
			up := matvec(get(pre+"ffn_up.weight"), xn, ff)
			hid := make([]float64, ff)
			for i := range hid {
				hid[i] = gelu(gate[i]) * up[i]
			}
			d := rmsnorm(matvec(get(pre+"ffn_down.weight"), hid, E), get(pre+"post_ffw_norm.weight"))
			for i := range x {
				x[i] += d[i]
			}
		}
		row := matvec(output, rmsnorm(x, get("output_norm.weight")), vocab)
		if softCap > 0 {
			for i, v := range row {
				row[i] = softCap * math.Tanh(v/softCap)
			}
		}
		logits = append(logits, row...)
	}
	return logits
}

// gemma3Spec is a small gemma3 of every feature: heads wider than
// embd/heads, a window shorter than the test prompt, linear scaling on
// the global layers.
func gemma3Spec() synth.Spec {
	return synth.Spec{Arch: "gemma3", Embd: 64, Layers: 4, Heads: 4, KVHeads: 2, FF: 96, Vocab: 320,
		Context: 256, Type: quant.F32, Std: 0.08, Seed: 3, RopeBase: 1000000, RopeScaling: "linear", RopeFactor: 8,
		HeadDim: 32, SlidingWindow: 4, RopeBaseSWA: 10000, Gemma3: synth.Gemma3{SWAPattern: 2}}
}

// TestGemma3MatchesNaive checks the gemma3 forward pass against the
// float64 oracle on random models of several shapes, with the prompt fed
// in one batch and in pieces (the window is shorter than the prompt, so
// pieces attend across what earlier batches stored).
func TestGemma3MatchesNaive(t *testing.T) {
	tokens := []int32{1, 300, 17, 299, 5, 260, 261, 42, 100, 7, 3, 250, 8}
	for _, tc := range []struct {
		name string
		spec func() synth.Spec
	}{
		{"base", gemma3Spec},
		{"default-pattern", func() synth.Spec {
			// No pattern key: layers 0–4 local, 5 global, 6 local.
			s := gemma3Spec()
			s.Layers, s.SWAPattern, s.RopeBaseSWA = 7, 0, 0
			return s
		}},
		{"no-window", func() synth.Spec {
			s := gemma3Spec()
			s.SlidingWindow = 0
			return s
		}},
		{"softcap-untied-odd", func() synth.Spec {
			s := gemma3Spec()
			s.Embd, s.Heads, s.KVHeads, s.HeadDim, s.FF = 48, 3, 1, 20, 72
			s.SlidingWindow, s.SWAPattern, s.LogitSoftCap = 5, 3, 3
			s.Tied, s.RopeScaling = false, ""
			return s
		}},
		{"27b-scale", func() synth.Spec {
			// 62 layers switch the query scale to 1/√(embd/heads).
			s := gemma3Spec()
			s.Embd, s.Heads, s.KVHeads, s.HeadDim, s.FF, s.Layers = 32, 2, 1, 8, 32, 62
			return s
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oracle := func(f *gguf.File, _ Model) []float64 { return naiveGemma3(t, f, tokens) }
			// Rows agree to ~1e-6, but looser than llama's 1e-4: a float32
			// gate landing on the other side of an F16 rounding boundary
			// than the float64 one moves that GELU by an F16 step (seen:
			// 7e-4 once in 62 layers). A misread key or a skipped norm
			// moves logits by 0.1 and more.
			matchNaive(t, tc.spec(), tokens, oracle, [][]int{nil, {1, 1, 1}, {4, 3}, {6}}, 1e-3)
		})
	}
}

// TestGemma3RefusesUnknownTensors: a tensor gemma3 does not apply (a
// Llama bias, an embedding model's dense projection) fails the load and
// is named.
func TestGemma3RefusesUnknownTensors(t *testing.T) {
	for _, extra := range []string{"blk.0.attn_q.bias", "dense_2_out.weight", "rope_freqs.weight"} {
		t.Run(extra, func(t *testing.T) {
			w, err := synth.Build(gemma3Spec())
			if err != nil {
				t.Fatal(err)
			}
			n := 64
			if extra == "rope_freqs.weight" {
				n = 16
			}
			if err := w.AddTensor(extra, quant.F32, []uint64{uint64(n)}, make([]byte, 4*n)); err != nil {
				t.Fatal(err)
			}
			_, err = buildWritten(t, w)
			if err == nil || !strings.Contains(err.Error(), extra) {
				t.Fatalf("Build: %v, want an error naming %s", err, extra)
			}
		})
	}
}

// TestGemma3Pattern reads which layers slide as llama.cpp's
// load_swa_pattern: a per-layer bool array, a period (0: all local), six
// by default, none without a window.
func TestGemma3Pattern(t *testing.T) {
	for _, tc := range []struct {
		name    string
		window  int
		pattern any // nil: no key
		want    string
	}{
		{"default", 4, nil, "LLLLLGLL"},
		{"period-3", 4, uint32(3), "LLGLLGLL"},
		{"period-0", 4, uint32(0), "LLLLLLLL"},
		{"array", 4, []bool{true, false, false, true, true, false, true, false}, "LGGLLGLG"},
		{"no-window", 0, uint32(3), "GGGGGGGG"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := gguf.NewWriter()
			if tc.pattern != nil {
				if err := w.SetKV("gemma3.attention.sliding_window_pattern", tc.pattern); err != nil {
					t.Fatal(err)
				}
			}
			local, err := gemma3Pattern(openWritten(t, w), "gemma3", 8, tc.window)
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for _, l := range local {
				got.WriteString(map[bool]string{true: "L", false: "G"}[l])
			}
			if got.String() != tc.want {
				t.Errorf("layers %s, want %s", got.String(), tc.want)
			}
		})
	}
	// A bool array of the wrong length is refused.
	w := gguf.NewWriter()
	if err := w.SetKV("gemma3.attention.sliding_window_pattern", []bool{true, false}); err != nil {
		t.Fatal(err)
	}
	if _, err := gemma3Pattern(openWritten(t, w), "gemma3", 8, 4); err == nil {
		t.Error("a pattern of 2 bools for 8 layers was accepted")
	}
}
