package synth

import "fmt"

// Gemma3 holds what a gemma3 file has beyond the common shape: llama.cpp's
// keys of the same names (src/models/gemma3.cpp). Its head width
// (Gemma's heads are 256 wide whatever the width), window and local RoPE
// base are Spec's HeadDim, SlidingWindow and RopeBaseSWA.
type Gemma3 struct {
	// SWAPattern, when > 0, writes attention.sliding_window_pattern: every
	// SWAPattern-th layer is global (llama.cpp assumes 6 without it).
	SWAPattern int
	// LogitSoftCap, when > 0, writes final_logit_softcapping.
	LogitSoftCap float32
}

// gemma3Metadata writes the keys only gemma3 files have.
func (s Spec) gemma3Metadata(kv func(string, any)) {
	a := s.Arch
	if s.SWAPattern > 0 {
		kv(a+".attention.sliding_window_pattern", uint32(s.SWAPattern))
	}
	if s.RopeBaseSWA > 0 {
		kv(a+".rope.freq_base_swa", s.RopeBaseSWA)
	}
	if s.LogitSoftCap > 0 {
		kv(a+".final_logit_softcapping", s.LogitSoftCap)
	}
}

// gemma3Tensors lists a gemma3 model's tensors in llama.cpp's order. Every
// norm is near one (the file stores Gemma's 1 + w) so a pass that skipped
// one would show.
func (s Spec) gemma3Tensors(add func(kind int, name string, shape ...int)) {
	hd, qDim, kvDim := s.attnDims()
	s.addEnds(add, kindNearOne)
	for l := range s.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		add(kindNearOne, p+"attn_norm.weight", s.Embd)
		s.addQKV(add, p, qDim, kvDim)
		add(kindNearOne, p+"attn_q_norm.weight", hd)
		add(kindNearOne, p+"attn_k_norm.weight", hd)
		add(kindMatrix, p+"attn_output.weight", qDim, s.Embd)
		add(kindNearOne, p+"post_attention_norm.weight", s.Embd)
		add(kindNearOne, p+"ffn_norm.weight", s.Embd)
		add(kindMatrix, p+"ffn_gate.weight", s.Embd, s.FF)
		add(kindMatrix, p+"ffn_up.weight", s.Embd, s.FF)
		add(kindMatrix, p+"ffn_down.weight", s.FF, s.Embd)
		add(kindNearOne, p+"post_ffw_norm.weight", s.Embd)
	}
}
