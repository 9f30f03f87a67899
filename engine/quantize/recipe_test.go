package quantize

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/churon/churon/engine/quant"
)

// shape builds the tensor list of a dense Llama-family model in file
// order (layer by layer, as converters write them).
func shape(embd, layers, heads, kvHeads, ff, vocab int, tied, bias bool) []Tensor {
	u := func(xs ...int) []uint64 {
		out := make([]uint64, len(xs))
		for i, x := range xs {
			out[i] = uint64(x)
		}
		return out
	}
	kv := embd / heads * kvHeads
	ts := []Tensor{{"token_embd.weight", u(embd, vocab), quant.F16}, {"output_norm.weight", u(embd), quant.F32}}
	if !tied {
		ts = append(ts, Tensor{"output.weight", u(embd, vocab), quant.F16})
	}
	for l := range layers {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts,
			Tensor{p + "attn_norm.weight", u(embd), quant.F32},
			Tensor{p + "attn_q.weight", u(embd, embd), quant.F16},
			Tensor{p + "attn_k.weight", u(embd, kv), quant.F16},
			Tensor{p + "attn_v.weight", u(embd, kv), quant.F16})
		if bias {
			ts = append(ts, Tensor{p + "attn_q.bias", u(embd), quant.F32})
		}
		ts = append(ts,
			Tensor{p + "attn_output.weight", u(embd, embd), quant.F16},
			Tensor{p + "ffn_norm.weight", u(embd), quant.F32},
			Tensor{p + "ffn_gate.weight", u(embd, ff), quant.F16},
			Tensor{p + "ffn_up.weight", u(embd, ff), quant.F16},
			Tensor{p + "ffn_down.weight", u(ff, embd), quant.F16})
	}
	return ts
}

func plan(t *testing.T, ftName string, m Model, ts []Tensor) map[string]Choice {
	t.Helper()
	ft, err := ParseType(ftName)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := Plan(ft, m, ts, false)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Choice{}
	for i, c := range cs {
		out[ts[i].Name] = c
	}
	return out
}

// TestPlan checks llama_tensor_get_type's rules, fallbacks included, on
// the shapes where they matter.
func TestPlan(t *testing.T) {
	// Qwen2.5-0.5B: tied embedding, GQA 7, rows of 896 (not whole 256
	// blocks) except ffn_down's 4864.
	qwen := shape(896, 24, 14, 2, 4864, 1000, true, true)
	qm := Model{Arch: "qwen2", Layers: 24, Heads: 14, KVHeads: 2}
	// A Llama with whole blocks everywhere, untied, GQA 2.
	llama := shape(256, 16, 4, 2, 512, 512, false, false)
	lm := Model{Arch: "llama", Layers: 16, Heads: 4, KVHeads: 2}
	// A Llama 70B's layout (80 layers, GQA 8), narrowed.
	big := shape(256, 80, 8, 1, 512, 512, false, false)
	bm := Model{Arch: "llama", Layers: 80, Heads: 8, KVHeads: 1}

	tests := []struct {
		ft     string
		model  Model
		ts     []Tensor
		tensor string
		want   quant.Type
		wanted quant.Type // the recipe's type before the fallback; 0 = same as want
	}{
		// Tied embedding is treated as the output: 896 % 256 != 0 → Q8_0.
		{"Q4_K_M", qm, qwen, "token_embd.weight", quant.Q8_0, 0},
		{"Q4_0", qm, qwen, "token_embd.weight", quant.Q8_0, quant.Q6_K},
		{"Q8_0", qm, qwen, "token_embd.weight", quant.Q8_0, 0},
		{"Q4_K_M", qm, qwen, "blk.0.attn_q.weight", quant.Q5_0, quant.Q4_K},
		{"Q4_K_M", qm, qwen, "blk.0.attn_v.weight", quant.Q8_0, quant.Q6_K},
		{"Q4_K_M", qm, qwen, "blk.3.attn_v.weight", quant.Q5_0, quant.Q4_K},
		{"Q4_K_M", qm, qwen, "blk.5.attn_v.weight", quant.Q8_0, quant.Q6_K},
		{"Q4_K_M", qm, qwen, "blk.5.ffn_down.weight", quant.Q6_K, 0},
		{"Q4_K_M", qm, qwen, "blk.4.ffn_down.weight", quant.Q4_K, 0},
		{"Q4_K_M", qm, qwen, "blk.23.ffn_down.weight", quant.Q6_K, 0},
		{"Q4_K_M", qm, qwen, "blk.0.attn_norm.weight", quant.F32, 0},
		{"Q4_K_M", qm, qwen, "blk.0.attn_q.bias", quant.F32, 0},
		{"Q5_K_M", qm, qwen, "blk.0.attn_q.weight", quant.Q5_1, quant.Q5_K},
		{"Q5_K_M", qm, qwen, "blk.2.ffn_down.weight", quant.Q6_K, 0},
		{"Q5_K_S", qm, qwen, "blk.2.ffn_down.weight", quant.Q5_K, 0},
		{"Q4_K_S", qm, qwen, "blk.3.attn_v.weight", quant.Q5_1, quant.Q5_K},
		{"Q4_K_S", qm, qwen, "blk.4.attn_v.weight", quant.Q5_0, quant.Q4_K},
		{"Q4_K_S", qm, qwen, "blk.2.ffn_down.weight", quant.Q5_K, 0},
		{"Q4_K_S", qm, qwen, "blk.3.ffn_down.weight", quant.Q4_K, 0},
		{"Q6_K", qm, qwen, "blk.0.ffn_up.weight", quant.Q8_0, quant.Q6_K},
		{"Q3_K_M", qm, qwen, "blk.0.attn_q.weight", quant.IQ4_NL, quant.Q3_K},
		{"Q3_K_M", qm, qwen, "blk.1.attn_v.weight", quant.Q5_1, quant.Q5_K},
		{"Q3_K_M", qm, qwen, "blk.2.attn_v.weight", quant.Q5_0, quant.Q4_K},
		{"Q3_K_M", qm, qwen, "blk.0.attn_output.weight", quant.Q5_0, quant.Q4_K},
		{"Q3_K_M", qm, qwen, "blk.0.ffn_down.weight", quant.Q5_K, 0},
		{"Q3_K_M", qm, qwen, "blk.1.ffn_down.weight", quant.Q4_K, 0},
		{"Q3_K_L", qm, qwen, "blk.9.ffn_down.weight", quant.Q5_K, 0},
		{"Q3_K_S", qm, qwen, "blk.9.ffn_down.weight", quant.Q3_K, 0},
		{"Q2_K", qm, qwen, "blk.0.attn_v.weight", quant.Q5_0, quant.Q4_K},
		{"Q2_K", qm, qwen, "blk.0.ffn_down.weight", quant.Q3_K, 0},
		{"Q2_K", qm, qwen, "blk.0.attn_output.weight", quant.IQ4_NL, quant.Q3_K},
		{"IQ4_NL", qm, qwen, "blk.7.attn_v.weight", quant.Q5_1, quant.Q5_K},
		{"IQ4_NL", qm, qwen, "blk.2.ffn_down.weight", quant.Q5_K, 0},
		{"IQ4_NL", qm, qwen, "blk.3.ffn_down.weight", quant.IQ4_NL, 0},
		{"IQ4_XS", qm, qwen, "blk.3.attn_q.weight", quant.IQ4_NL, quant.IQ4_XS},
		{"F16", qm, qwen, "blk.0.attn_q.weight", quant.F16, 0},
		{"BF16", qm, qwen, "token_embd.weight", quant.BF16, 0},

		// Untied: the embedding keeps the base type, the output gets Q6_K.
		{"Q4_K_M", lm, llama, "token_embd.weight", quant.Q4_K, 0},
		{"Q4_K_M", lm, llama, "output.weight", quant.Q6_K, 0},
		{"Q8_0", lm, llama, "output.weight", quant.Q8_0, 0},
		{"Q4_0", lm, llama, "output.weight", quant.Q6_K, 0},
		{"Q2_K", lm, llama, "blk.0.attn_v.weight", quant.Q3_K, 0}, // GQA 2 < 4
		{"IQ4_XS", lm, llama, "blk.0.attn_v.weight", quant.IQ4_XS, 0},
		{"Q4_K_M", lm, llama, "blk.1.attn_v.weight", quant.Q6_K, 0}, // first eighth
		{"Q4_K_M", lm, llama, "blk.2.attn_v.weight", quant.Q4_K, 0},
		{"Q4_K_M", lm, llama, "blk.4.attn_v.weight", quant.Q6_K, 0},
		{"Q4_K_M", lm, llama, "blk.14.attn_v.weight", quant.Q6_K, 0},

		// 70B: attn_v's Q3_K/Q4_K become Q5_K.
		{"Q4_K_M", bm, big, "blk.11.attn_v.weight", quant.Q5_K, 0},
		{"Q4_K_M", bm, big, "blk.12.attn_v.weight", quant.Q6_K, 0},
		{"Q3_K_S", bm, big, "blk.11.attn_v.weight", quant.Q5_K, 0},
		{"Q4_K_M", bm, big, "blk.11.attn_q.weight", quant.Q4_K, 0},

		// Falcon's output is always Q8_0.
		{"Q4_K_M", Model{Arch: "falcon", Layers: 16, Heads: 4, KVHeads: 2}, llama, "output.weight", quant.Q8_0, 0},
		{"Q3_K_L", Model{Arch: "falcon", Layers: 16, Heads: 4, KVHeads: 2}, llama, "blk.3.attn_output.weight", quant.Q4_K, 0},
		// Eight experts: attention V and K get Q8_0.
		{"Q4_K_M", Model{Arch: "llama", Layers: 16, Heads: 4, KVHeads: 2, Experts: 8}, llama, "blk.3.attn_k.weight", quant.Q8_0, 0},
		{"Q4_K_M", Model{Arch: "llama", Layers: 16, Heads: 4, KVHeads: 2, Experts: 8}, llama, "blk.3.attn_output.weight", quant.Q5_K, 0},
	}
	for _, tc := range tests {
		t.Run(tc.ft+" "+tc.model.Arch+" "+tc.tensor, func(t *testing.T) {
			c, ok := plan(t, tc.ft, tc.model, tc.ts)[tc.tensor]
			if !ok {
				t.Fatalf("no tensor %s", tc.tensor)
			}
			wanted := tc.wanted
			if wanted == 0 {
				wanted = tc.want
			}
			if c.Type != tc.want || c.Wanted != wanted {
				t.Errorf("%v (recipe %v), want %v (recipe %v)", c.Type, c.Wanted, tc.want, wanted)
			}
			src := quant.F16
			if tc.want == quant.F32 {
				src = quant.F32
			}
			if c.Convert != (c.Type != src) {
				t.Errorf("Convert %v for %v → %v", c.Convert, src, c.Type)
			}
		})
	}
}

// TestPlanOrder: the recipe counts attn_v and ffn_down tensors in
// llama.cpp's order (by layer number), not in file order, so a file whose
// tensors are shuffled gets the same types.
func TestPlanOrder(t *testing.T) {
	ts := shape(256, 12, 4, 2, 512, 512, false, false)
	m := Model{Arch: "llama", Layers: 12, Heads: 4, KVHeads: 2}
	want := plan(t, "Q4_K_M", m, ts)
	shuffled := append([]Tensor(nil), ts...)
	rand.New(rand.NewSource(1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if got := plan(t, "Q4_K_M", m, shuffled); !reflect.DeepEqual(got, want) {
		t.Error("shuffled tensors planned differently")
	}
	var names []string
	for _, i := range Order([]Tensor{{Name: "blk.10.a.weight"}, {Name: "blk.9.b.weight"}, {Name: "token_embd.weight"},
		{Name: "blk.9.a.weight"}, {Name: "output.weight"}, {Name: "blk.2.z.weight"}}) {
		names = append(names, []string{"blk.10.a.weight", "blk.9.b.weight", "token_embd.weight", "blk.9.a.weight", "output.weight", "blk.2.z.weight"}[i])
	}
	wantOrder := []string{"output.weight", "token_embd.weight", "blk.2.z.weight", "blk.9.a.weight", "blk.9.b.weight", "blk.10.a.weight"}
	if !reflect.DeepEqual(names, wantOrder) {
		t.Errorf("order %v, want %v", names, wantOrder)
	}
}

// TestPlanErrors: --pure has no fallbacks, so rows that are not whole
// blocks are an error, as they are in llama.cpp; an expert tensor without
// a layer number is too.
func TestPlanErrors(t *testing.T) {
	qwen := shape(896, 2, 14, 2, 4864, 1000, true, true)
	ft, _ := ParseType("Q4_K")
	if _, err := Plan(ft, Model{Arch: "qwen2", Layers: 2, Heads: 14, KVHeads: 2}, qwen, true); err == nil {
		t.Error("pure Q4_K of 896-wide rows planned")
	}
	if ft.Name != "Q4_K_M" {
		t.Errorf("alias Q4_K is %s", ft.Name)
	}
	moe := []Tensor{{"ffn_down_exps.weight", []uint64{256, 256, 8}, quant.F16}}
	if _, err := Plan(ft, Model{Arch: "llama", Layers: 2, Experts: 8}, moe, false); err == nil {
		t.Error("expert tensor without a layer planned")
	}
	moe[0].Name = "blk.1.ffn_down_exps.weight"
	if _, err := Plan(ft, Model{Arch: "llama", Layers: 2, Experts: 8}, moe, false); err != nil {
		t.Error(err)
	}
}

func TestLayerOf(t *testing.T) {
	for name, want := range map[string]int{
		"blk.0.attn_q.weight": 0, "blk.17.ffn_up.weight": 17, "token_embd.weight": -1,
		"blk.x.weight": -1, "blk.": -1, "blk.-3.w": -3, "blk. 4.w": 4,
	} {
		if got := layerOf(name); got != want {
			t.Errorf("layerOf(%q) = %d, want %d", name, got, want)
		}
	}
}
