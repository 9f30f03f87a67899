package arch

import (
	"encoding/binary"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/cpu"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/models/synth"
)

func writeModel(t *testing.T, s synth.Spec) *gguf.File {
	t.Helper()
	w, err := synth.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	return openWritten(t, w)
}

// runForward feeds tokens one batch at a time and returns every row's logits.
func runForward(t *testing.T, m Model, tokens []int32, batches ...int) []float32 {
	t.Helper()
	c := m.Config()
	d := cpu.NewDevice(2)
	defer d.Close()
	plan := backend.Single(d, c.Layers)
	if err := m.Place(plan); err != nil {
		t.Fatal(err)
	}
	cache, err := backend.NewCache(plan, m.CacheSpec(quant.F32, 64))
	if err != nil {
		t.Fatal(err)
	}
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
		bt := &Batch{Tokens: tokens[done : done+n], Pos: pos, OutRows: rows, Groups: []Group{{Start: 0, End: n, Cache: cache}}}
		if err := m.Forward(&s, bt, out[done*c.Vocab:]); err != nil {
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
		{"qwen3moe", func() synth.Spec { return synth.Tiny("qwen3moe") }},
		{"qwen3moe-odd", func() synth.Spec {
			s := synth.Tiny("qwen3moe")
			s.Embd, s.Heads, s.KVHeads, s.HeadDim, s.Experts, s.ExpertsUsed, s.ExpertFF, s.Layers = 96, 3, 1, 34, 7, 3, 160, 3
			return s
		}},
		{"gpt-oss", func() synth.Spec { return synth.Tiny("gpt-oss") }},
		{"gpt-oss-odd", func() synth.Spec {
			s := synth.Tiny("gpt-oss")
			s.Embd, s.Heads, s.KVHeads, s.Experts, s.ExpertsUsed, s.ExpertFF, s.Layers, s.SlidingWindow = 96, 5, 1, 7, 3, 96, 3, 3
			return s
		}},
		{"gpt-oss-ropeswa", func() synth.Spec {
			s := synth.Tiny("gpt-oss")
			s.Layers, s.SlidingWindow, s.RopeBaseSWA = 3, 4, 500 // far from the full layers' 10 000
			return s
		}},
		{"llama-biases-scales", func() synth.Spec { s := synth.Tiny("llama"); s.Biases, s.Scales = true, true; return s }},
		{"llama-moe", func() synth.Spec {
			s := synth.Tiny("llama")
			s.Experts, s.ExpertsUsed, s.ExpertFF = 4, 2, s.FF
			return s
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oracle := func(f *gguf.File, m Model) []float64 { return naiveForward(t, f, m.Config(), tokens) }
			matchNaive(t, tc.spec(), tokens, oracle, [][]int{nil, {1, 1, 1}, {4, 3}}, 1e-4)
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
	q := &transformer{cfg: pm.cfg, v: variant{rope: backend.RopeNeoX}, att: pm.att}
	c := pm.cfg
	qDim, kvDim := c.Heads*c.HeadDim, c.KVDim()
	rowBytes := 4 * c.Embd
	// keep makes a weight of the split model: the same tensor, or a slice
	// of a fused one.
	keep := func(w *weight) *weight {
		if w == nil {
			return nil
		}
		nw := &weight{t: w.t, part: w.part}
		q.weights = append(q.weights, nw)
		return nw
	}
	part := func(w *weight, name string, rows, r0 int) *weight {
		t := &backend.Tensor{Name: name, Type: quant.F32, Ne: [4]int{c.Embd, rows, 1, 1}, Data: w.t.Data[r0*rowBytes : (r0+rows)*rowBytes]}
		return keep(&weight{t: t, part: w.part})
	}
	q.embd, q.outNorm, q.output = keep(pm.embd), keep(pm.outNorm), keep(pm.output)
	q.layers = make([]layer, len(pm.layers))
	for i, ly := range pm.layers {
		q.layers[i] = layer{
			attnNorm: keep(ly.attnNorm), o: keep(ly.o), ffnNorm: keep(ly.ffnNorm), down: keep(ly.down),
			q: part(ly.qkv, "q", qDim, 0), k: part(ly.qkv, "k", kvDim, qDim), v: part(ly.qkv, "v", kvDim, qDim+kvDim),
			gate: part(ly.up, "gate", c.FF, 0), up: part(ly.up, "up", c.FF, c.FF),
		}
	}
	tokens := []int32{1, 2, 3, 200, 300}
	a, b := runForward(t, phi, tokens), runForward(t, q, tokens)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("logit %d: fused %v, split %v", i, a[i], b[i])
		}
	}
}

// buildWritten writes w to a file and builds the architecture it holds.
func buildWritten(t *testing.T, w *gguf.Writer) (Model, error) {
	t.Helper()
	return Build(openWritten(t, w))
}

// openWritten writes w to a file and opens it, closed when the test ends.
func openWritten(t *testing.T, w *gguf.Writer) *gguf.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// matchNaive builds the model spec describes, feeds it tokens in each
// of splits (batch sizes, runForward's) and checks every row's logits
// against the oracle's to within tol.
func matchNaive(t *testing.T, spec synth.Spec, tokens []int32, oracle func(*gguf.File, Model) []float64, splits [][]int, tol float64) {
	t.Helper()
	f := writeModel(t, spec)
	m, err := Build(f)
	if err != nil {
		t.Fatal(err)
	}
	want := oracle(f, m)
	for _, batches := range splits {
		checkRows(t, runForward(t, m, tokens, batches...), want, len(tokens), m.Config().Vocab, tol, batches)
	}
}

// checkRows fails the test where a row of got (float32 logits, v a row)
// is further than tol from the oracle's want at any entry.
func checkRows(t *testing.T, got []float32, want []float64, rows, v int, tol float64, batches []int) {
	t.Helper()
	for r := range rows {
		g, w := got[r*v:(r+1)*v], want[r*v:(r+1)*v]
		var maxDiff float64
		for i := range g {
			maxDiff = math.Max(maxDiff, math.Abs(float64(g[i])-w[i]))
		}
		if maxDiff > tol {
			t.Fatalf("batches %v row %d: max |diff| %.2e vs the naive forward", batches, r, maxDiff)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	t.Run("unknown architecture", func(t *testing.T) {
		w := gguf.NewWriter()
		if err := w.SetKV("general.architecture", "mamba9"); err != nil {
			t.Fatal(err)
		}
		_, err := buildWritten(t, w)
		if !errors.Is(err, ErrUnknownArchitecture) || !strings.Contains(err.Error(), `"mamba9"`) {
			t.Fatalf("err = %v, want unknown architecture naming mamba9", err)
		}
		var ue *UnknownArchitectureError
		if !errors.As(err, &ue) || ue.Name != "mamba9" || !slices.Equal(ue.Supported, Names()) {
			t.Fatalf("err = %#v; want an UnknownArchitectureError for mamba9 listing %v", err, Names())
		}
	})
	t.Run("tensor not applied", func(t *testing.T) {
		for _, tc := range []struct {
			arch, tensor string
			refused      bool
		}{
			{"llama", "blk.0.attn_gate.weight", true},
			{"qwen2", "blk.1.ffn_gate_inp.weight", true},
			// llama.cpp reads output.scale only beside an NVFP4 output
			{"llama", "output.scale", true},
			// a shared expert's gate without the rest of it
			{"qwen3moe", "blk.0.ffn_gate_shexp.weight", true},
			{"qwen3moe", "blk.1.ffn_gate.weight", true},
			// Phi-3's long RoPE factors are known, for contexts it does not
			// run at.
			{"phi3", "rope_factors_long.weight", false},
		} {
			w, err := synth.Build(synth.Tiny(tc.arch))
			if err != nil {
				t.Fatal(err)
			}
			if err := w.AddTensor(tc.tensor, quant.F32, []uint64{8}, make([]byte, 32)); err != nil {
				t.Fatal(err)
			}
			_, err = buildWritten(t, w)
			if tc.refused && (err == nil || !strings.Contains(err.Error(), tc.tensor) || !strings.Contains(err.Error(), "not applied")) {
				t.Errorf("%s with %s: err = %v, want a refusal naming the tensor", tc.arch, tc.tensor, err)
			}
			if !tc.refused && err != nil {
				t.Errorf("%s with %s: %v", tc.arch, tc.tensor, err)
			}
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
		_, err = buildWritten(t, w)
		if err == nil || !strings.Contains(err.Error(), "blk.1.attn_k_norm.weight") {
			t.Fatalf("err = %v, want one naming the missing tensor", err)
		}
	})
}

// TestOptionalTensorsApplied checks that optional tensors llama.cpp
// applies change the answer here too: an output bias (Qwen2 files may
// carry one) and, through the float64 oracle, every bias and scale of a
// Llama block.
func TestOptionalTensorsApplied(t *testing.T) {
	w, err := synth.Build(synth.Tiny("qwen2"))
	if err != nil {
		t.Fatal(err)
	}
	const vocab = 320
	bias := make([]byte, 4*vocab)
	for i := range vocab {
		// a large bias on a few ids: the argmax moves if it is applied
		v := float32(0)
		if i%37 == 5 {
			v = 9
		}
		binary.LittleEndian.PutUint32(bias[4*i:], math.Float32bits(v))
	}
	if err := w.AddTensor("output.bias", quant.F32, []uint64{vocab}, bias); err != nil {
		t.Fatal(err)
	}
	f := openWritten(t, w)
	m, err := Build(f)
	if err != nil {
		t.Fatal(err)
	}
	tokens := []int32{1, 300, 17, 42}
	want := naiveForward(t, f, m.Config(), tokens)
	got := runForward(t, m, tokens)
	for i := range got {
		if d := math.Abs(float64(got[i]) - want[i]); d > 1e-4 {
			t.Fatalf("logit %d: %v, oracle %v", i, got[i], want[i])
		}
	}
	if got[5] < 5 {
		t.Fatalf("logit 5 is %v: the output bias of 9 was not applied", got[5])
	}
}
