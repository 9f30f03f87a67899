package arch

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/cpu"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/internal/synth"
)

func writeModel(t *testing.T, s synth.Spec) *gguf.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), s.Arch+".gguf")
	if err := synth.Write(path, s); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// runForward feeds tokens one batch at a time and returns every row's logits.
func runForward(t *testing.T, m Model, tokens []int32, batches ...int) []float32 {
	t.Helper()
	c := m.Config()
	kv, err := backend.NewKVCache(quant.F32, c.Layers, 64, c.KVDim())
	if err != nil {
		t.Fatal(err)
	}
	b := cpu.New(2)
	defer b.Close()
	var s Scratch
	out := make([]float32, len(tokens)*c.Vocab)
	done := 0
	for _, n := range append(batches, len(tokens)) {
		n = min(n, len(tokens)-done)
		if n <= 0 {
			break
		}
		pos := make([]int32, n)
		rows := make([]int, n)
		for i := range pos {
			pos[i] = int32(done + i)
			rows[i] = i
		}
		if err := m.Forward(b, kv, &s, tokens[done:done+n], pos, rows, out[done*c.Vocab:]); err != nil {
			t.Fatal(err)
		}
		done += n
	}
	return out
}

// TestForwardMatchesNaive checks every architecture against a plain
// float64 implementation written from the papers' equations, on a random
// model, with prompts fed in one batch and in pieces.
func TestForwardMatchesNaive(t *testing.T) {
	tokens := []int32{1, 300, 17, 299, 5, 260, 261, 42, 100, 7, 3}
	for _, tc := range []struct {
		name string
		spec func() synth.Spec
	}{
		{"llama", func() synth.Spec { return synth.Tiny("llama") }},
		{"llama-tied", func() synth.Spec { s := synth.Tiny("llama"); s.Tied = true; return s }},
		{"llama-mha", func() synth.Spec { s := synth.Tiny("llama"); s.KVHeads = s.Heads; return s }},
		{"llama-linear-rope", func() synth.Spec {
			s := synth.Tiny("llama")
			s.RopeScaling, s.RopeFactor = "linear", 4
			return s
		}},
		{"qwen2", func() synth.Spec { return synth.Tiny("qwen2") }},
		{"qwen3", func() synth.Spec { return synth.Tiny("qwen3") }},
		{"phi3", func() synth.Spec { return synth.Tiny("phi3") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := writeModel(t, tc.spec())
			m, err := Build(f)
			if err != nil {
				t.Fatal(err)
			}
			want := naiveForward(t, f, m.Config(), tokens)
			for _, batches := range [][]int{nil, {1, 1, 1}, {4, 3}} {
				got := runForward(t, m, tokens, batches...)
				v := m.Config().Vocab
				for r := range tokens {
					g, w := got[r*v:(r+1)*v], want[r*v:(r+1)*v]
					var maxDiff float64
					for i := range g {
						maxDiff = math.Max(maxDiff, math.Abs(float64(g[i])-w[i]))
					}
					if maxDiff > 1e-4 {
						t.Fatalf("batches %v row %d: max |diff| %.2e vs the naive forward", batches, r, maxDiff)
					}
				}
			}
		})
	}
}

// TestPhi3EqualsQwen2 checks fused projections against split ones: a
// Phi-3 model whose fused matrices are the concatenation of a bias-free
// Qwen2 model's matrices must give the same logits.
func TestPhi3EqualsQwen2(t *testing.T) {
	pf := writeModel(t, synth.Tiny("phi3"))
	phi, err := Build(pf)
	if err != nil {
		t.Fatal(err)
	}
	// Split phi3's fused tensors into a qwen2-shaped model in memory.
	pm := phi.(*transformer)
	q := *pm
	q.v = variant{rope: backend.RopeNeoX}
	q.layers = make([]layer, len(pm.layers))
	c := pm.cfg
	qDim, kvDim := c.Heads*c.HeadDim, c.KVDim()
	rowBytes := 4 * c.Embd
	for i, ly := range pm.layers {
		nl := ly
		nl.qkv = nil
		d := ly.qkv.Data
		nl.q = &backend.Tensor{Name: "q", Type: quant.F32, Ne: [4]int{c.Embd, qDim, 1, 1}, Data: d[:qDim*rowBytes]}
		nl.k = &backend.Tensor{Name: "k", Type: quant.F32, Ne: [4]int{c.Embd, kvDim, 1, 1}, Data: d[qDim*rowBytes : (qDim+kvDim)*rowBytes]}
		nl.v = &backend.Tensor{Name: "v", Type: quant.F32, Ne: [4]int{c.Embd, kvDim, 1, 1}, Data: d[(qDim+kvDim)*rowBytes:]}
		u := ly.up.Data
		nl.gate = &backend.Tensor{Name: "gate", Type: quant.F32, Ne: [4]int{c.Embd, c.FF, 1, 1}, Data: u[:c.FF*rowBytes]}
		nl.up = &backend.Tensor{Name: "up", Type: quant.F32, Ne: [4]int{c.Embd, c.FF, 1, 1}, Data: u[c.FF*rowBytes:]}
		q.layers[i] = nl
	}
	tokens := []int32{1, 2, 3, 200, 300}
	a, b := runForward(t, phi, tokens), runForward(t, &q, tokens)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("logit %d: fused %v, split %v", i, a[i], b[i])
		}
	}
}

func TestBuildErrors(t *testing.T) {
	t.Run("unknown architecture", func(t *testing.T) {
		w := gguf.NewWriter()
		if err := w.SetKV("general.architecture", "mamba9"); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "m.gguf")
		if err := w.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		_, err = Build(f)
		if !errors.Is(err, ErrUnknownArchitecture) || !strings.Contains(err.Error(), `"mamba9"`) {
			t.Fatalf("err = %v, want unknown architecture naming mamba9", err)
		}
	})
	t.Run("missing tensor", func(t *testing.T) {
		s := synth.Tiny("qwen3")
		w, err := synth.Build(s)
		if err != nil {
			t.Fatal(err)
		}
		if !w.RemoveTensor("blk.1.attn_k_norm.weight") {
			t.Fatal("fixture lacks the tensor to remove")
		}
		path := filepath.Join(t.TempDir(), "m.gguf")
		if err := w.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		_, err = Build(f)
		if err == nil || !strings.Contains(err.Error(), "blk.1.attn_k_norm.weight") {
			t.Fatalf("err = %v, want one naming the missing tensor", err)
		}
	})
}
