package arch

import "github.com/churon/churon/engine/backend"

// extras are the optional tensors llama.cpp applies to a block of the
// Llama family whenever a file has them, whatever the architecture's
// usual layout: biases on the attention output and the feed-forward
// (some Llama conversions carry them), a bias on a fused q/k/v
// projection, and per-tensor scales (a product is multiplied by its
// weight's "<name>.scale" value and its bias added, in llama.cpp's
// order: scale first on the attention, bias first on the feed-forward
// (build_lora_mm against build_ffn). A file's tensor
// that nothing reads is refused by loader.finish, so reading them here
// is what lets such files load, and applying them is what keeps them
// right.
type extras struct {
	qkvB, ob, gateB, upB, downB *weight
	// 0 means no scale
	qS, kS, vS, qkvS, oS, gateS, upS, downS float32
}

// readExtras reads the optional tensors of the block whose names start
// with p; qkvRows and upRows are the output widths of the fused q/k/v
// and of ffn_up (2·ff when it holds the gate too).
func readExtras(l *loader, p string, ly *layer, embd, qkvRows, upRows, ff int) {
	x := &ly.extras
	scale := func(w *weight, name string) float32 {
		if w == nil {
			return 0
		}
		if v := l.hostVector(p+name+".scale", true, 1); v != nil {
			return v[0]
		}
		return 0
	}
	if ly.qkv != nil {
		x.qkvB = l.vector(p+"attn_qkv.bias", true, qkvRows)
	}
	x.qkvS = scale(ly.qkv, "attn_qkv")
	x.qS, x.kS, x.vS = scale(ly.q, "attn_q"), scale(ly.k, "attn_k"), scale(ly.v, "attn_v")
	x.ob = l.vector(p+"attn_output.bias", true, embd)
	x.oS = scale(ly.o, "attn_output")
	if ly.moe != nil {
		return
	}
	if ly.gate != nil {
		x.gateB = l.vector(p+"ffn_gate.bias", true, ff)
	}
	x.upB = l.vector(p+"ffn_up.bias", true, upRows)
	x.downB = l.vector(p+"ffn_down.bias", true, embd)
	x.gateS, x.upS, x.downS = scale(ly.gate, "ffn_gate"), scale(ly.up, "ffn_up"), scale(ly.down, "ffn_down")
}

// post applies a product's optional scale, then its optional bias, as
// llama.cpp's build_lora_mm does for the attention's projections.
func post(dev backend.Device, dst backend.Buf, scale float32, bias *weight) {
	if scale != 0 {
		dev.Scale(dst, scale)
	}
	if bias != nil {
		dev.AddBias(dst, bias.on)
	}
}

// postFFN applies a feed-forward product's optional bias, then its
// optional scale, as llama.cpp's build_ffn does.
func postFFN(dev backend.Device, dst backend.Buf, scale float32, bias *weight) {
	if bias != nil {
		dev.AddBias(dst, bias.on)
	}
	if scale != 0 {
		dev.Scale(dst, scale)
	}
}
