//go:build linux || darwin

package metal

import (
	"runtime"
	"testing"

	"github.com/churon/churon/internal/gpucheck/e2etest"
)

// e2eFiles are the models of the end-to-end check (e2etest.Files):
// stories260K (real weights), quant-zoo files of the weight types the
// kernels multiply, and synthetic models of architectures with the
// optional parts (biases, q/k norms, a tied output, sliding windows and
// soft caps, sinks and clamped SwiGLU, a mixture of experts). Under the
// emulator, which is slow, a subset; on a Mac, every type.
func e2eFiles(t *testing.T) map[string]string {
	if runtime.GOOS == "darwin" {
		return e2etest.Files(t, e2etest.AllTypes, []string{"qwen2", "gpt-oss", "qwen3", "phi3", "qwen3moe"}, nil)
	}
	return e2etest.Files(t, []string{"Q4_0", "Q8_0", "Q4_K_M-mixed"}, []string{"qwen2", "gpt-oss"}, nil)
}

// TestEngineOffload: through the engine, at offload levels that cover
// every crossing (stories260K) or with everything on Metal (the rest),
// every logit row of a prompt, decode steps and two sequences batched
// agrees with the CPU's (internal/gpucheck's bars: cosine ≥ 0.99999, or
// 0.9998 for weights whose products round their input to 8 bits; the
// same argmax), and a snapshot taken on Metal continues on the CPU as the
// CPU's own. Under the emulator the large weights are wrapped in place,
// as a Mac wraps a mapped model file.
func TestEngineOffload(t *testing.T) {
	useTestBackend(t)
	e2etest.Offload(t, "metal", e2eFiles(t), func(name string) func(int) []int {
		switch {
		case runtime.GOOS == "darwin":
			return nil
		case name == "stories260K":
			// Emulated kernels are slow: stories260K at the levels of
			// every kind of crossing (a layer in the middle, every layer
			// with the head on the CPU, everything), the other files with
			// everything on Metal.
			return func(l int) []int { return []int{l / 2, l, l + 1} }
		}
		return func(l int) []int { return []int{l + 1} }
	})
}
