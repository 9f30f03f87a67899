// Package e2etest holds what the GPU backends' end-to-end tests share:
// the models they check, the offload check of each through the engine
// (gpucheck.Compare) and the small runs of their fallback tests. Only
// those tests import it.
package e2etest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/churon/churon/engine"
	"github.com/churon/churon/internal/gpucheck"
	"github.com/churon/churon/internal/testdata"
	"github.com/churon/churon/models/synth"
)

// AllTypes are the quant zoo's files of every weight type the GPUs
// multiply, and the mixed Q4_K_M file.
var AllTypes = []string{"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K", "Q4_K_M-mixed"}

// Files are the models of an end-to-end check, by name: stories260K (real
// weights), the quant zoo's files of types ("zoo-" and the type), tiny
// synthetic models of archs ("synth-" and the arch; qwen2's with a tied
// output), gemma3 with odd sizes (its windows and soft caps) and the
// synthetic models of more.
func Files(t *testing.T, types, archs []string, more map[string]synth.Spec) map[string]string {
	dir := testdata.Dir(t)
	files := map[string]string{"stories260K": Stories(t)}
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
	for _, arch := range archs {
		s := synth.Tiny(arch)
		s.Tied = arch == "qwen2"
		write(arch, s)
	}
	g3, err := synth.Preset("gemma3-odd", "F16", 1)
	if err != nil {
		t.Fatal(err)
	}
	write("gemma3", g3)
	for name, s := range more {
		write(name, s)
	}
	return files
}

// Offload checks every file through the engine on device against the CPU
// (gpucheck.Compare, two threads, an F32 cache for stories260K and F16 for
// the rest), a subtest each, at the offload levels levels gives for the
// file (nil: gpucheck's own).
func Offload(t *testing.T, device string, files map[string]string, levels func(name string) func(layers int) []int) {
	for name, path := range files {
		t.Run(name, func(t *testing.T) {
			kv := engine.KVF16
			if name == "stories260K" {
				kv = engine.KVF32
			}
			got, err := gpucheck.Compare(context.Background(), path, gpucheck.Options{Device: device, Threads: 2, KV: kv, Levels: levels(name)})
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range got {
				t.Log(l.String())
				if !l.OK() {
					t.Error(l.String())
				}
			}
		})
	}
}

// LoadModel loads path with two threads, closed when t ends.
func LoadModel(t *testing.T, path string, opt engine.LoadOptions) *engine.Model {
	t.Helper()
	opt.Threads = 2
	m, err := engine.Load(context.Background(), path, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// Stories is the path of stories260K.
func Stories(t *testing.T) string {
	return filepath.Join(testdata.Dir(t), "models", "stories260K.gguf")
}

// GreedyTokens is m's greedy answer of n tokens to a fixed prompt.
func GreedyTokens(t *testing.T, m *engine.Model, n int) []int32 {
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
