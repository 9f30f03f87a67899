//go:build linux || windows

package cuda_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/backend/cuda"
	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/internal/gpucheck/e2etest"
	"github.com/churon/churon/models/synth"
)

// e2eFiles are the models of the end-to-end check (e2etest.Files):
// stories260K, the quant zoo's files of every type the GPU multiplies and
// the mixed Q4_K_M file, and synthetic models of the other architectures
// and variants (biases, q/k norms, fused projections, a tied output, a
// mixture of experts, gemma3's windows and soft caps, gpt-oss's sinks,
// bands and clamped SwiGLU, every optional bias and scale).
func e2eFiles(t *testing.T) map[string]string {
	moe := synth.Tiny("qwen3moe")
	moe.Type = quant.Q8_0
	extras := synth.Tiny("llama")
	extras.Biases, extras.Scales = true, true
	return e2etest.Files(t, e2etest.AllTypes, []string{"qwen2", "qwen3", "phi3", "qwen3moe", "gpt-oss"},
		map[string]synth.Spec{"qwen3moe-q8_0": moe, "llama-extras": extras})
}

// allLevels are the files checked at every offload level (every kind of
// crossing) under the emulator: real weights, the mix of K-quants, a
// 32-value block type, a mixture of experts, gemma3. The GPU check runs
// every file at every level.
var allLevels = map[string]bool{"stories260K": true, "zoo-Q4_K_M-mixed": true, "zoo-Q4_0": true,
	"synth-qwen3moe": true, "synth-gemma3": true}

// TestEngineOffload: through the engine, with 0, 1, L/2, L and L+1
// layers on the GPU (the emulated one here), every logit row of prompts,
// decode steps and two sequences batched agrees with the CPU's (cosine
// ≥ 0.99999, the same argmax), and a snapshot taken with layers on the
// GPU continues on the CPU as the CPU's own.
func TestEngineOffload(t *testing.T) {
	cuda.UseTestDriver(t)
	e2etest.Offload(t, "cuda", e2eFiles(t), func(name string) func(int) []int {
		if allLevels[name] {
			return nil
		}
		// Emulated kernels are slow: the other files run with everything
		// offloaded (where each kernel of the file runs) and no layer (the
		// CPU's own baseline).
		return func(l int) []int { return []int{engine.OffloadNone, l + 1} }
	})
}

// TestEngineFaultMidAnswer: a kernel fault in the middle of an answer
// (the emulated driver's sticky CUDA_ERROR_ILLEGAL_ADDRESS) costs time
// only: the answer finishes on the CPU with the CPU's tokens, the reason
// reaches OnFallback and the model's notes, and the model stays on the
// CPU.
func TestEngineFaultMidAnswer(t *testing.T) {
	cuda.UseTestDriver(t)
	if os.Getenv("CHURON_CUDA_REAL") == "1" {
		t.Skip("injects a fault in the emulated driver")
	}
	want := e2etest.GreedyTokens(t, e2etest.LoadModel(t, e2etest.Stories(t), engine.LoadOptions{Device: "cpu"}), 24)
	for _, at := range []string{"40", "700"} { // in the prompt; a few tokens in
		t.Run("fault at launch "+at, func(t *testing.T) {
			t.Setenv("CHURON_FAKECUDA_FAULT_AFTER", at)
			var reasons []error
			m := e2etest.LoadModel(t, e2etest.Stories(t), engine.LoadOptions{Device: "cuda", GPULayers: 100, OnFallback: func(err error) { reasons = append(reasons, err) }})
			if in := m.Info(); in.OffloadedLayers != in.Layers {
				t.Fatalf("before the fault: %s", in.Backend)
			}
			got := e2etest.GreedyTokens(t, m, 24)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("tokens %v, on the CPU alone %v", got, want)
			}
			if len(reasons) != 1 || !strings.Contains(reasons[0].Error(), "CUDA_ERROR_ILLEGAL_ADDRESS") || !strings.Contains(reasons[0].Error(), "runs on the CPU now") {
				t.Fatalf("OnFallback got %v", reasons)
			}
			in := m.Info()
			if in.Accelerator != "" || !strings.HasPrefix(in.Backend, "CPU") {
				t.Fatalf("after the fault: %q", in.Backend)
			}
			if n := in.DeviceNotes; len(n) == 0 || !strings.Contains(n[len(n)-1], "CUDA · Churon emulated GPU") {
				t.Fatalf("device notes %q do not say what failed", n)
			}
		})
	}
}

// TestEngineNoGPU: with no driver, or no room on the GPU, the model runs
// on the CPU and says why in one line.
func TestEngineNoGPU(t *testing.T) {
	t.Run("no driver", func(t *testing.T) {
		t.Setenv("CHURON_CUDA_LIBRARY", filepath.Join(t.TempDir(), "libcuda.so.1"))
		m := e2etest.LoadModel(t, e2etest.Stories(t), engine.LoadOptions{})
		in := m.Info()
		if in.Accelerator != "" || len(in.DeviceNotes) != 1 || !strings.HasPrefix(in.DeviceNotes[0], "cuda: no NVIDIA driver found: ") {
			t.Fatalf("backend %q, notes %q", in.Backend, in.DeviceNotes)
		}
		var found bool
		for _, r := range engine.Devices(1) {
			if r.Backend == "cuda" {
				found = r.Err != nil && strings.Contains(r.Err.Error(), "no NVIDIA driver found")
			}
		}
		if !found {
			t.Errorf("Devices does not report the missing driver: %+v", engine.Devices(1))
		}
	})
	t.Run("no room", func(t *testing.T) {
		cuda.UseTestDriver(t)
		if os.Getenv("CHURON_CUDA_REAL") == "1" {
			t.Skip("sizes the emulated GPU")
		}
		t.Setenv("CHURON_FAKECUDA_MEMORY", fmt.Sprint(600<<20))
		m := e2etest.LoadModel(t, e2etest.Stories(t), engine.LoadOptions{})
		in := m.Info()
		if in.Accelerator != "" || len(in.DeviceNotes) == 0 || !strings.Contains(in.DeviceNotes[0], "not one layer fits") {
			t.Fatalf("backend %q, notes %q", in.Backend, in.DeviceNotes)
		}
	})
	t.Run("auto fits", func(t *testing.T) {
		cuda.UseTestDriver(t)
		m := e2etest.LoadModel(t, e2etest.Stories(t), engine.LoadOptions{})
		if in := m.Info(); in.OffloadedLayers != in.Layers || !in.OffloadedOutput {
			t.Fatalf("automatic offload on a roomy GPU: %s, notes %q", in.Backend, in.DeviceNotes)
		}
	})
}
