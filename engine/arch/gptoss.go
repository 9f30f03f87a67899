package arch

import (
	"fmt"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/quant"
)

// gpt-oss (OpenAI's open-weight mixture of experts; llama.cpp's
// openai-moe) is the Llama block with:
//   - biases on q, k, v and the attention output;
//   - a learned sink logit per head in every softmax's denominator;
//   - banded attention (attention.sliding_window positions) on the even
//     layers, full attention on the odd ones (llama.cpp's SWA pattern of
//     period 2, layer 0 banded);
//   - post_attention_norm as the norm before the experts;
//   - experts routed by a biased router, top k of the raw logits then a
//     softmax over those k, each expert biased, with the clamped SwiGLU
//     (alpha 1.702, limit 7, as llama.cpp hard-codes for it);
//   - NeoX RoPE, usually YaRN-scaled; the banded layers with
//     rope.freq_base_swa as their base when the file has one (scaling as
//     the others', as llama.cpp's rope_freq_{base,scale}_train_swa).
//
// Its experts ship in MXFP4 (engine/quant).
var gptoss = MoESpec{Gating: GateSoftmaxSelected, Act: Activation{Kind: ActSwiGLUClamped, Alpha: 1.702, Limit: 7}}

func init() {
	Register("gpt-oss", func(f *gguf.File) (Model, error) {
		if n, _ := f.Uint("gpt-oss.expert_count"); n == 0 {
			return nil, fmt.Errorf("metadata gpt-oss.expert_count: missing or zero (a mixture of experts needs experts)")
		}
		return buildTransformer(f, "gpt-oss", variant{rope: backend.RopeNeoX, qkvBias: true, moe: &gptoss,
			sinks: true, swa: true, ffnNorm: "post_attention_norm.weight", expertsOnly: true})
	})
	windowReaders["gpt-oss"] = func(l *loader, layers int) ([]int, error) {
		window, swa, err := swaLayers(l, layers)
		return windowsOf(window, swa), err
	}
}

// readSWA sets m's banded layers and their attention from the file
// (swaLayers).
func readSWA(l *loader, m *transformer) error {
	window, swa, err := swaLayers(l, m.cfg.Layers)
	if err != nil {
		return err
	}
	m.swa = swa
	m.attSWA = m.att
	m.attSWA.Window = window
	return nil
}

// swaLayers reads a banded architecture's window and which of its layers
// it bands: attention.sliding_window, and the pattern llama.cpp's
// load_swa_pattern reads — a period (layer i banded when i mod n < n−1;
// default 2) or one flag per layer.
func swaLayers(l *loader, layers int) (int, []bool, error) {
	window := l.uint("attention.sliding_window", -1)
	if l.err != nil {
		return 0, nil, l.err
	}
	if window == 0 {
		return 0, nil, fmt.Errorf("metadata %s.attention.sliding_window: zero", l.arch)
	}
	key := l.arch + ".attention.sliding_window_pattern"
	swa := make([]bool, layers)
	if v, ok := l.f.Lookup(key); ok {
		arr, _ := v.V.(gguf.Array)
		if flags, isArr := arr.Values.([]bool); isArr {
			if len(flags) != layers {
				return 0, nil, fmt.Errorf("metadata %s: %d flags for %d layers", key, len(flags), layers)
			}
			copy(swa, flags)
		} else if n, ok := l.f.Uint(key); ok {
			setSWAPeriod(swa, int(n))
		} else {
			return 0, nil, fmt.Errorf("metadata %s: neither a period nor one flag per layer", key)
		}
	} else {
		setSWAPeriod(swa, 2)
	}
	return window, swa, nil
}

// setSWAPeriod is llama.cpp's set_swa_pattern: layer i is banded when
// i mod n < n−1 (n = 0: every layer).
func setSWAPeriod(swa []bool, n int) {
	for i := range swa {
		swa[i] = n == 0 || i%n < n-1
	}
}

// sinkVector reads an attention sinks tensor: one F32 logit per head,
// which Attend reads as they are.
func (l *loader) sinkVector(name string, heads int) *weight {
	t := l.vectorTensor(name, false, heads)
	if t == nil {
		return nil
	}
	if t.Type != quant.F32 {
		l.fail("tensor %s: type %v, want F32", name, t.Type)
		return nil
	}
	return l.add(t)
}
