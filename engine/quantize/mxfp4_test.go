package quantize

import (
	"testing"

	"github.com/churon/churon/engine/quant"
)

// TestPlanMXFP4MoE checks llama.cpp's MXFP4_MOE recipe on a gpt-oss
// layout: experts in MXFP4, the router kept exact, everything else (the
// output and an untied embedding included) in Q8_0, and rows that are
// not whole blocks in F16.
func TestPlanMXFP4MoE(t *testing.T) {
	ts := []Tensor{
		{"token_embd.weight", []uint64{64, 100}, quant.F32},
		{"output.weight", []uint64{64, 100}, quant.F32},
		{"blk.0.attn_q.weight", []uint64{64, 64}, quant.F32},
		{"blk.0.attn_q.bias", []uint64{64}, quant.F32},
		{"blk.0.attn_sinks.weight", []uint64{4}, quant.F32},
		{"blk.0.ffn_gate_inp.weight", []uint64{64, 4}, quant.F32},
		{"blk.0.ffn_up_exps.weight", []uint64{64, 96, 4}, quant.F32},
		{"blk.0.ffn_up_exps.bias", []uint64{96, 4}, quant.F32},
		{"blk.0.ffn_down_exps.weight", []uint64{96, 64, 4}, quant.F32},
		{"blk.0.ffn_gate_exps.weight", []uint64{72, 64, 4}, quant.F32},  // 72: not whole blocks
		{"blk.0.ffn_down_exps1.weight", []uint64{96, 64, 1}, quant.F32}, // one expert: not 3-D to ggml
	}
	want := []quant.Type{quant.Q8_0, quant.Q8_0, quant.Q8_0, quant.F32, quant.F32, quant.F32,
		quant.MXFP4, quant.F32, quant.MXFP4, quant.F16, quant.Q8_0}
	ft, err := ParseType("mxfp4_moe")
	if err != nil || ft.ID != 38 || ft.Base != quant.MXFP4 {
		t.Fatalf("ParseType(mxfp4_moe) = %+v, %v", ft, err)
	}
	cs, err := Plan(ft, Model{Arch: "gpt-oss", Layers: 1, Heads: 4, KVHeads: 1, Experts: 4}, ts, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cs {
		if c.Type != want[i] {
			t.Errorf("%s: %v, want %v", ts[i].Name, c.Type, want[i])
		}
	}
	if cs[9].Wanted != quant.MXFP4 {
		t.Errorf("72-wide experts: wanted %v, want MXFP4 before the fallback", cs[9].Wanted)
	}
}
