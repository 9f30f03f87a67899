package arch

import (
	"fmt"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/gguf"
)

// qwen3moe is Qwen3's attention (QK-norm, NeoX RoPE) with every
// feed-forward a mixture of experts: a softmax router over all experts,
// the top k (8 of 128 in Qwen3-30B-A3B) with their weights normalised to
// sum to one, SwiGLU experts, no shared expert. Qwen3-30B-A3B-2507 and
// Qwen3-Coder-30B-A3B are this architecture.
var qwen3moe = MoESpec{Gating: GateSoftmax, NormWeights: true}

// mixtral is the mixture of experts of a llama file with experts
// (Mixtral), as llama.cpp runs it: the same routing as Qwen3-MoE.
var mixtral = MoESpec{Gating: GateSoftmax, NormWeights: true, DenseWidth: true}

func init() {
	Register("qwen3moe", func(f *gguf.File) (Model, error) {
		if n, _ := f.Uint("qwen3moe.expert_count"); n == 0 {
			return nil, fmt.Errorf("metadata qwen3moe.expert_count: missing or zero (a mixture of experts needs experts)")
		}
		return buildTransformer(f, "qwen3moe", variant{rope: backend.RopeNeoX, qkNorm: true, moe: &qwen3moe})
	})
}
