//go:build linux || darwin

package metal

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/churon/churon/engine"
	"github.com/churon/churon/internal/gpucheck"
	"github.com/churon/churon/internal/testdata"
	"github.com/churon/churon/models/synth"
)

// e2eFiles are the models of the end-to-end check: stories260K (real
// weights), quant-zoo files of the weight types the kernels multiply, and
// synthetic models of architectures with the optional parts (biases, q/k
// norms, sliding windows and soft caps, sinks and clamped SwiGLU, a
// mixture of experts). Under the emulator, which is slow, a subset; on a
// Mac, every type.
func e2eFiles(t *testing.T) map[string]string {
	dir := testdata.Dir(t)
	files := map[string]string{"stories260K": filepath.Join(dir, "models", "stories260K.gguf")}
	types := []string{"Q4_0", "Q8_0", "Q4_K_M-mixed"}
	if runtime.GOOS == "darwin" {
		types = []string{"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K", "Q4_K_M-mixed"}
	}
	for _, ty := range types {
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
	archs := []string{"qwen2", "gpt-oss"}
	if runtime.GOOS == "darwin" {
		archs = append(archs, "qwen3", "phi3", "qwen3moe")
	}
	for _, arch := range archs {
		write(arch, synth.Tiny(arch))
	}
	g3, err := synth.Preset("gemma3-odd", "F16", 1)
	if err != nil {
		t.Fatal(err)
	}
	write("gemma3", g3)
	return files
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
	for name, path := range e2eFiles(t) {
		t.Run(name, func(t *testing.T) {
			kv := engine.KVF16
			if name == "stories260K" {
				kv = engine.KVF32
			}
			opt := gpucheck.Options{Device: "metal", Threads: 2, KV: kv}
			if runtime.GOOS != "darwin" {
				// Emulated kernels are slow: stories260K at the levels of
				// every kind of crossing (a layer in the middle, every
				// layer with the head on the CPU, everything), the other
				// files with everything on Metal.
				opt.Levels = func(l int) []int { return []int{l + 1} }
				if name == "stories260K" {
					opt.Levels = func(l int) []int { return []int{l / 2, l, l + 1} }
				}
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
