//go:build linux || windows

package cuda_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/backend/cuda"
	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/internal/gpucheck"
	"github.com/churon/churon/internal/testdata"
	"github.com/churon/churon/models/synth"
)

// e2eFiles are the models of the end-to-end check: stories260K, the
// quant zoo's files of every type the GPU multiplies and the mixed
// Q4_K_M file, and synthetic models of the other architectures and
// variants (biases, q/k norms, fused projections, a tied output, a
// mixture of experts, gemma3's windows and soft caps, gpt-oss's sinks,
// bands and clamped SwiGLU, every optional bias and scale).
func e2eFiles(t *testing.T) map[string]string {
	dir := testdata.Dir(t)
	files := map[string]string{"stories260K": filepath.Join(dir, "models", "stories260K.gguf")}
	for _, ty := range []string{"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K", "Q4_K_M-mixed"} {
		files["zoo-"+ty] = filepath.Join(dir, "quantzoo", "zoo-"+ty+".gguf")
	}
	tmp := t.TempDir()
	write := func(name string, s synth.Spec) {
		p := filepath.Join(tmp, name+".gguf")
		if err := synth.Write(p, s); err != nil {
			t.Fatal(err)
		}
		files["synth-"+name] = p
	}
	for _, arch := range []string{"qwen2", "qwen3", "phi3", "qwen3moe", "gpt-oss"} {
		s := synth.Tiny(arch)
		s.Tied = arch == "qwen2"
		write(arch, s)
	}
	moe := synth.Tiny("qwen3moe")
	moe.Type = quant.Q8_0
	write("qwen3moe-q8_0", moe)
	g3, err := synth.Preset("gemma3-odd", "F16", 1)
	if err != nil {
		t.Fatal(err)
	}
	write("gemma3", g3)
	extras := synth.Tiny("llama")
	extras.Biases, extras.Scales = true, true
	write("llama-extras", extras)
	return files
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
	for name, path := range e2eFiles(t) {
		t.Run(name, func(t *testing.T) {
			kv := engine.KVF16
			if name == "stories260K" {
				kv = engine.KVF32
			}
			opt := gpucheck.Options{Device: "cuda", Threads: 2, KV: kv}
			if !allLevels[name] {
				// Emulated kernels are slow: the other files run with
				// everything offloaded (where each kernel of the file
				// runs) and no layer (the CPU's own baseline).
				opt.Levels = func(l int) []int { return []int{engine.OffloadNone, l + 1} }
			}
			levels, err := gpucheck.Compare(context.Background(), path, opt)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range levels {
				t.Log(l.String())
				if !l.OK() {
					t.Error(l.String())
				}
			}
		})
	}
}

func loadModel(t *testing.T, path string, opt engine.LoadOptions) *engine.Model {
	t.Helper()
	opt.Threads = 2
	m, err := engine.Load(context.Background(), path, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func stories(t *testing.T) string {
	return filepath.Join(testdata.Dir(t), "models", "stories260K.gguf")
}

func greedyTokens(t *testing.T, m *engine.Model, n int) []int32 {
	t.Helper()
	seq, err := m.NewSequence(engine.SequenceOptions{Context: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer seq.Close()
	prompt := []int32{1, 403, 407, 261, 378}
	res, err := seq.Generate(context.Background(), prompt, engine.GenerateOptions{MaxTokens: n, Sampling: gpucheck.Greedy, IgnoreEOS: true}, nil)
	if err != nil {
		t.Fatalf("the answer failed: %v", err)
	}
	return res.Tokens
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
	want := greedyTokens(t, loadModel(t, stories(t), engine.LoadOptions{Device: "cpu"}), 24)
	for _, at := range []string{"40", "700"} { // in the prompt; a few tokens in
		t.Run("fault at launch "+at, func(t *testing.T) {
			t.Setenv("CHURON_FAKECUDA_FAULT_AFTER", at)
			var reasons []error
			m := loadModel(t, stories(t), engine.LoadOptions{Device: "cuda", GPULayers: 100, OnFallback: func(err error) { reasons = append(reasons, err) }})
			if in := m.Info(); in.OffloadedLayers != in.Layers {
				t.Fatalf("before the fault: %s", in.Backend)
			}
			got := greedyTokens(t, m, 24)
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
		m := loadModel(t, stories(t), engine.LoadOptions{})
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
		m := loadModel(t, stories(t), engine.LoadOptions{})
		in := m.Info()
		if in.Accelerator != "" || len(in.DeviceNotes) == 0 || !strings.Contains(in.DeviceNotes[0], "not one layer fits") {
			t.Fatalf("backend %q, notes %q", in.Backend, in.DeviceNotes)
		}
	})
	t.Run("auto fits", func(t *testing.T) {
		cuda.UseTestDriver(t)
		m := loadModel(t, stories(t), engine.LoadOptions{})
		if in := m.Info(); in.OffloadedLayers != in.Layers || !in.OffloadedOutput {
			t.Fatalf("automatic offload on a roomy GPU: %s, notes %q", in.Backend, in.DeviceNotes)
		}
	})
}
