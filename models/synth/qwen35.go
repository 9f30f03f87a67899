package synth

import "fmt"

// Qwen35 holds what a qwen35 or qwen35moe file has beyond the common
// shape: llama.cpp's keys of the same names (src/models/qwen35.cpp). The
// attention layers' heads are Spec's Heads, KVHeads and HeadDim.
type Qwen35 struct {
	// The Gated DeltaNet layers: key heads (ssm.group_count), value heads
	// (ssm.time_step_rank), their width (ssm.state_size) and the
	// convolution's taps (ssm.conv_kernel, 4 when 0).
	SSMKHeads, SSMVHeads, SSMHeadDim, ConvKernel int
	// FullAttnInterval: every FullAttnInterval-th layer is full attention
	// (full_attention_interval; 4 when 0).
	FullAttnInterval int
	// RopeDims is rope.dimension_count, the rotated part of a head (a
	// quarter of it in Qwen 3.5); the head's width when 0.
	RopeDims int
	// SharedFF is the shared expert's width (qwen35moe;
	// expert_shared_feed_forward_length).
	SharedFF int
	// NextN adds that many multi-token-prediction layers after the trunk
	// (nextn_predict_layers), which a forward pass loads but does not run.
	NextN int
}

func (s Spec) isQwen35() bool { return s.Arch == "qwen35" || s.Arch == "qwen35moe" }

func (s Spec) convKernel() int {
	if s.ConvKernel > 0 {
		return s.ConvKernel
	}
	return 4
}

func (s Spec) fullAttnInterval() int {
	if s.FullAttnInterval > 0 {
		return s.FullAttnInterval
	}
	return 4
}

// ropeDims is the rotated dimensions per head.
func (s Spec) ropeDims() int {
	if s.RopeDims > 0 {
		return s.RopeDims
	}
	return s.headDim()
}

// qwen35Metadata writes the keys only qwen35 files have.
func (s Spec) qwen35Metadata(kv func(string, any)) {
	a := s.Arch
	kv(a+".ssm.conv_kernel", uint32(s.convKernel()))
	kv(a+".ssm.state_size", uint32(s.SSMHeadDim))
	kv(a+".ssm.group_count", uint32(s.SSMKHeads))
	kv(a+".ssm.time_step_rank", uint32(s.SSMVHeads))
	kv(a+".ssm.inner_size", uint32(s.SSMVHeads*s.SSMHeadDim))
	kv(a+".full_attention_interval", uint32(s.fullAttnInterval()))
	// IMROPE's sections: for text every pair rotates by the position, so
	// any split of the pairs among t, h and w that leaves none to the
	// fourth does (Qwen 3.5 has [11 11 10 0]).
	third := int32((s.ropeDims()/2 + 2) / 3)
	kv(a+".rope.dimension_sections", []int32{third, third, third, 0})
	if s.NextN > 0 {
		kv(a+".nextn_predict_layers", uint32(s.NextN))
	}
	if s.SharedFF > 0 {
		kv(a+".expert_shared_feed_forward_length", uint32(s.SharedFF))
	}
}

// qwen35Tensors lists a qwen35 model's tensors in llama.cpp's order.
func (s Spec) qwen35Tensors(add func(kind int, name string, shape ...int)) {
	hd, qDim, kvDim := s.attnDims()
	kd, vd := s.SSMKHeads*s.SSMHeadDim, s.SSMVHeads*s.SSMHeadDim
	s.addEnds(add, kindNearOne)
	for l := range s.Layers + s.NextN {
		p := fmt.Sprintf("blk.%d.", l)
		add(kindNearOne, p+"attn_norm.weight", s.Embd)
		add(kindNearOne, p+"post_attention_norm.weight", s.Embd)
		if l < s.Layers && (l+1)%s.fullAttnInterval() != 0 {
			add(kindMatrix, p+"attn_qkv.weight", s.Embd, 2*kd+vd)
			add(kindMatrix, p+"attn_gate.weight", s.Embd, vd)
			add(kindConv, p+"ssm_conv1d.weight", s.convKernel(), 2*kd+vd)
			add(kindDTBias, p+"ssm_dt.bias", s.SSMVHeads)
			add(kindDecay, p+"ssm_a", s.SSMVHeads)
			add(kindMatrix, p+"ssm_beta.weight", s.Embd, s.SSMVHeads)
			add(kindMatrix, p+"ssm_alpha.weight", s.Embd, s.SSMVHeads)
			add(kindNearOne, p+"ssm_norm.weight", s.SSMHeadDim)
			add(kindMatrix, p+"ssm_out.weight", vd, s.Embd)
		} else {
			add(kindMatrix, p+"attn_q.weight", s.Embd, 2*qDim)
			add(kindMatrix, p+"attn_k.weight", s.Embd, kvDim)
			add(kindMatrix, p+"attn_v.weight", s.Embd, kvDim)
			add(kindMatrix, p+"attn_output.weight", qDim, s.Embd)
			add(kindNearOne, p+"attn_q_norm.weight", hd)
			add(kindNearOne, p+"attn_k_norm.weight", hd)
		}
		if s.Experts > 0 {
			add(kindMatrix, p+"ffn_gate_inp.weight", s.Embd, s.Experts)
			add(kindMatrix, p+"ffn_down_exps.weight", s.ExpertFF, s.Embd, s.Experts)
			add(kindMatrix, p+"ffn_gate_exps.weight", s.Embd, s.ExpertFF, s.Experts)
			add(kindMatrix, p+"ffn_up_exps.weight", s.Embd, s.ExpertFF, s.Experts)
			sh := s.SharedFF
			if sh == 0 {
				sh = s.FF
			}
			add(kindNoise, p+"ffn_gate_inp_shexp.weight", s.Embd)
			add(kindMatrix, p+"ffn_gate_shexp.weight", s.Embd, sh)
			add(kindMatrix, p+"ffn_up_shexp.weight", s.Embd, sh)
			add(kindMatrix, p+"ffn_down_shexp.weight", sh, s.Embd)
		} else {
			add(kindMatrix, p+"ffn_gate.weight", s.Embd, s.FF)
			add(kindMatrix, p+"ffn_down.weight", s.FF, s.Embd)
			add(kindMatrix, p+"ffn_up.weight", s.Embd, s.FF)
		}
		if l >= s.Layers {
			add(kindMatrix, p+"nextn.eh_proj.weight", 2*s.Embd, s.Embd)
			add(kindNearOne, p+"nextn.enorm.weight", s.Embd)
			add(kindNearOne, p+"nextn.hnorm.weight", s.Embd)
		}
	}
}

func init() {
	// Real shapes for benchmarks, from the models' config.json (Qwen
	// 3.5's are a quarter of each 256-wide head rotated, base 10^7, a
	// vocabulary of 248320). The 35B-A3B's 40 layers take 20 GiB at
	// Q4_K_M: benchmarks on a small machine pass --layers.
	q35 := func(embd, layers, heads, kvHeads, ff, kHeads, vHeads int, tied bool) Spec {
		return Spec{Arch: "qwen35", Embd: embd, Layers: layers, Heads: heads, KVHeads: kvHeads, HeadDim: 256, FF: ff,
			Vocab: 248320, Context: 262144, Tied: tied, RopeBase: 10000000,
			Qwen35: Qwen35{SSMKHeads: kHeads, SSMVHeads: vHeads, SSMHeadDim: 128, RopeDims: 64}}
	}
	presets["qwen3.5-0.8b"] = q35(1024, 24, 8, 2, 3584, 16, 16, true)
	presets["qwen3.5-4b"] = q35(2560, 32, 16, 4, 9216, 16, 32, true)
	presets["qwen3.5-9b"] = q35(4096, 32, 16, 4, 12288, 16, 32, false)
	moe := q35(2048, 40, 16, 2, 512, 16, 32, false)
	moe.Arch, moe.Experts, moe.ExpertsUsed, moe.ExpertFF, moe.SharedFF = "qwen35moe", 256, 8, 512, 512
	presets["qwen3.5-35b-a3b"] = moe

	// Test shapes at a size llama.cpp runs in milliseconds: one in whole
	// quant blocks (three DeltaNet layers, then attention), one of odd
	// sizes (3 heads, 3 DeltaNet value heads on one key head, a convolution of 3 taps,
	// attention every third layer, a multi-token-prediction layer that
	// must be loaded and not run).
	presets["qwen35-test"] = Spec{Arch: "qwen35", Embd: 256, Layers: 4, Heads: 4, KVHeads: 2, HeadDim: 64, FF: 512,
		Vocab: 320, Context: 4096, Tied: true, RopeBase: 10000000,
		Qwen35: Qwen35{SSMKHeads: 2, SSMVHeads: 4, SSMHeadDim: 32, RopeDims: 16}}
	presets["qwen35-odd"] = Spec{Arch: "qwen35", Embd: 96, Layers: 6, Heads: 3, KVHeads: 1, HeadDim: 32, FF: 160,
		Vocab: 333, Context: 4096, RopeBase: 1000000,
		Qwen35: Qwen35{SSMKHeads: 1, SSMVHeads: 3, SSMHeadDim: 32, ConvKernel: 3, FullAttnInterval: 3, RopeDims: 8, NextN: 1}}
	presets["qwen35moe-test"] = Spec{Arch: "qwen35moe", Embd: 256, Layers: 4, Heads: 4, KVHeads: 2, HeadDim: 64, FF: 512,
		Experts: 8, ExpertsUsed: 2, ExpertFF: 128, Vocab: 320, Context: 4096, RopeBase: 10000000,
		Qwen35: Qwen35{SSMKHeads: 2, SSMVHeads: 4, SSMHeadDim: 32, RopeDims: 16, SharedFF: 256}}
	presets["qwen35moe-odd"] = Spec{Arch: "qwen35moe", Embd: 96, Layers: 3, Heads: 3, KVHeads: 1, HeadDim: 32, FF: 96,
		Experts: 7, ExpertsUsed: 3, ExpertFF: 160, Vocab: 333, Context: 4096, RopeBase: 1000000,
		Qwen35: Qwen35{SSMKHeads: 1, SSMVHeads: 3, SSMHeadDim: 32, ConvKernel: 3, FullAttnInterval: 3, RopeDims: 8, SharedFF: 96}}
}
