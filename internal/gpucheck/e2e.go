// Package gpucheck holds the end-to-end checks of an accelerator backend
// against the CPU: the engine runs the same model on the CPU alone and
// with layers on the accelerator, and their logits must agree. The CUDA
// backend's tests run it under the emulated driver; tools/gpucheck runs
// it on a real GPU, and measures speed.
package gpucheck

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/sample"
)

// Bars an accelerator's logits must meet against the CPU's, by what the
// model's weights are.
//
// Where every product is exact or rounds its input finely — K-quants,
// whose products the GPU computes in the CPU's order, F32, F16 — the bar
// is 0.99999. Weights of the 32-value block types and BF16 round each
// product's input to 8 bits (Q8_0, Q8_1, BF16 activations), and on
// random-weight models (the quant zoo) a last-bit difference of a sum
// anywhere flips such a rounding and grows from layer to layer: the CPU's
// own vector kernels and its plain Go ones, which sum in different
// orders, agree only to a cosine of 0.99986 on zoo-Q5_0 and 0.99988 on
// zoo-Q4_0 in this check's scenario. Their bar is 0.9998.
const (
	MinCosine        = 0.99999
	MinCosineRounded = 0.9998
)

// roundedTypes are the weight types whose products round their input to
// 8 bits of mantissa or less in blocks the GPU does not sum in the CPU's
// order.
var roundedTypes = map[string]bool{"Q4_0": true, "Q4_1": true, "Q5_0": true, "Q5_1": true, "Q8_0": true, "BF16": true,
	"IQ4_NL": true, "MXFP4": true}

// Bar is the cosine bar for a model with weights of these types
// (engine.Info.QuantMix).
func Bar(mix map[string]int) float64 {
	for t := range mix {
		if roundedTypes[t] {
			return MinCosineRounded
		}
	}
	return MinCosine
}

// Level is one offload level of a model's check.
type Level struct {
	GPULayers int    // as LoadOptions.GPULayers
	Backend   string // what ran where
	Rows      int    // logit rows compared
	MinCosine float64
	MaxAbs    float64
	// ArgmaxDiff counts rows whose largest logit differs from the CPU's
	// where the CPU's top two are further apart than twice the row's
	// largest difference; Ties those where they are not, which the
	// differences can flip (random-weight models have many).
	ArgmaxDiff, Ties int
	// Restore is the worst cosine of a sequence snapshotted here and
	// continued on the CPU, against the CPU's own continuation.
	Restore float64
	Bar     float64 // the cosine bar
	Err     error
}

// OK reports whether the level meets the bars.
func (l *Level) OK() bool {
	return l.Err == nil && l.MinCosine >= l.Bar && l.ArgmaxDiff == 0 && l.Restore >= l.Bar
}

func (l *Level) String() string {
	if l.Err != nil {
		return fmt.Sprintf("-ngl %d: %v", l.GPULayers, l.Err)
	}
	verdict := "ok"
	if !l.OK() {
		verdict = "FAIL"
	}
	return fmt.Sprintf("-ngl %-3d %-4s %4d rows, min cosine %.7f (bar %g), max |Δ| %.2g, argmax %d differ (%d near ties), restored on CPU %.7f  [%s]",
		l.GPULayers, verdict, l.Rows, l.MinCosine, l.Bar, l.MaxAbs, l.ArgmaxDiff, l.Ties, l.Restore, l.Backend)
}

// Levels are llama.cpp's -ngl values that cover every crossing: none,
// the last layer, half, every layer (the head back on the CPU), and
// everything.
func Levels(layers int) []int {
	var out []int
	for _, n := range []int{engine.OffloadNone, 1, layers / 2, layers, layers + 1} {
		if n != 0 && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// run is what one model's scenario saw: every logits row, in order, the
// tokens it chose, and the continuation of a snapshot.
type run struct {
	rows   [][]float32
	chosen []int32
	snap   []byte
}

// scenario exercises every path of a pass, as the engine's offload
// tests do: a 40-token prompt with every position's logits, greedy
// decode steps, two sequences batched (a prompt and a step, then three
// steps together), and a snapshot of the first sequence at its end. The
// decode steps feed the tokens ref chose when it is given (the CPU's
// run), so that both runs see the same inputs even where a near tie
// makes their argmax differ.
func scenario(ctx context.Context, m *engine.Model, kv engine.KVType, ref *run) (*run, error) {
	vocab := m.Info().VocabSize
	prompt := tokens(40, vocab, 7)
	r := &run{}
	choose := func(l []float32) int32 {
		t := argmax(l)
		if ref != nil && len(r.chosen) < len(ref.chosen) {
			t = ref.chosen[len(r.chosen)]
		}
		r.chosen = append(r.chosen, t)
		return t
	}
	add := func(l []float32, n int) {
		for i := range n {
			r.rows = append(r.rows, append([]float32(nil), l[i*vocab:(i+1)*vocab]...))
		}
	}
	a, err := m.NewSequence(engine.SequenceOptions{Context: 128, KVType: kv, Batch: 16})
	if err != nil {
		return nil, err
	}
	defer a.Close()
	all, err := a.FeedAll(ctx, prompt)
	if err != nil {
		return nil, err
	}
	add(all, len(prompt))
	for range 5 {
		if err := a.Feed(ctx, []int32{choose(a.Logits())}); err != nil {
			return nil, err
		}
		add(a.Logits(), 1)
	}
	b, err := m.NewSequence(engine.SequenceOptions{Context: 128, KVType: kv})
	if err != nil {
		return nil, err
	}
	defer b.Close()
	if err := m.FeedBatch(ctx, []*engine.Sequence{a, b}, [][]int32{{3, 4}, prompt[:21]}); err != nil {
		return nil, err
	}
	for range 3 {
		toks := []int32{choose(a.Logits()), choose(b.Logits())}
		if err := m.DecodeBatch(ctx, []*engine.Sequence{a, b}, toks); err != nil {
			return nil, err
		}
		add(a.Logits(), 1)
		add(b.Logits(), 1)
	}
	var snap bytes.Buffer
	if err := a.WriteSnapshot(&snap); err != nil {
		return nil, err
	}
	r.snap = snap.Bytes()
	return r, nil
}

// continueOn restores a snapshot on m and returns the logits of three
// more tokens.
func continueOn(ctx context.Context, m *engine.Model, snap []byte, kv engine.KVType) ([][]float32, error) {
	s, err := m.ReadSnapshot(bytes.NewReader(snap), engine.SequenceOptions{Context: 128, KVType: kv})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var out [][]float32
	for _, tok := range []int32{9, 10, 11} {
		if err := s.Feed(ctx, []int32{tok}); err != nil {
			return nil, err
		}
		out = append(out, append([]float32(nil), s.Logits()...))
	}
	return out, nil
}

// Options say how to load the model with the accelerator and on the CPU.
type Options struct {
	Device  string // the accelerator's backend name ("cuda")
	Threads int
	KV      engine.KVType
	// OnLevel, when set, is called with each level as it is done.
	OnLevel func(Level)
	// Levels, when set, picks some of Levels' offload levels by the
	// number of layers (the CUDA tests do, to save time under emulation).
	Levels func(layers int) []int
}

// Compare runs the scenario on the CPU alone and at each offload level,
// and compares each level's logits with the CPU's.
func Compare(ctx context.Context, path string, opt Options) ([]Level, error) {
	load := func(o engine.LoadOptions) (*engine.Model, error) {
		o.Threads = opt.Threads
		return engine.Load(ctx, path, o)
	}
	cpu, err := load(engine.LoadOptions{Device: "cpu"})
	if err != nil {
		return nil, err
	}
	defer cpu.Close()
	want, err := scenario(ctx, cpu, opt.KV, nil)
	if err != nil {
		return nil, fmt.Errorf("on the CPU: %w", err)
	}
	wantCont, err := continueOn(ctx, cpu, want.snap, opt.KV)
	if err != nil {
		return nil, fmt.Errorf("on the CPU: %w", err)
	}
	bar := Bar(cpu.Info().QuantMix)
	var out []Level
	levels := Levels
	if opt.Levels != nil {
		levels = opt.Levels
	}
	for _, n := range levels(cpu.Info().Layers) {
		l := Level{GPULayers: n, Bar: bar}
		func() {
			m, err := load(engine.LoadOptions{Device: opt.Device, GPULayers: n})
			if err != nil {
				l.Err = err
				return
			}
			defer m.Close()
			in := m.Info()
			l.Backend = in.Backend
			if n > 0 && in.OffloadedLayers == 0 && !in.OffloadedOutput {
				l.Err = fmt.Errorf("nothing offloaded (%s; %s)", in.Backend, strings.Join(in.DeviceNotes, "; "))
				return
			}
			got, err := scenario(ctx, m, opt.KV, want)
			if err != nil {
				l.Err = err
				return
			}
			l.compare(got.rows, want.rows)
			cont, err := continueOn(ctx, cpu, got.snap, opt.KV)
			if err != nil {
				l.Err = fmt.Errorf("restoring its snapshot on the CPU: %w", err)
				return
			}
			l.Restore = 1
			for i := range cont {
				l.Restore = min(l.Restore, cosine(cont[i], wantCont[i]))
			}
		}()
		if opt.OnLevel != nil {
			opt.OnLevel(l)
		}
		out = append(out, l)
	}
	return out, nil
}

func (l *Level) compare(got, want [][]float32) {
	l.MinCosine = 1
	if len(got) != len(want) {
		l.Err = fmt.Errorf("%d logit rows, the CPU gave %d", len(got), len(want))
		return
	}
	l.Rows = len(want)
	for i := range want {
		g, w := got[i], want[i]
		l.MinCosine = min(l.MinCosine, cosine(g, w))
		var row float64
		for j := range w {
			row = max(row, math.Abs(float64(g[j])-float64(w[j])))
		}
		l.MaxAbs = max(l.MaxAbs, row)
		if argmax(g) != argmax(w) {
			if gap(w) <= 2*row {
				l.Ties++
			} else {
				l.ArgmaxDiff++
			}
		}
	}
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	if aa == 0 || bb == 0 {
		if aa == bb {
			return 1
		}
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

func argmax(l []float32) int32 {
	best := 0
	for i, v := range l {
		if v > l[best] {
			best = i
		}
	}
	return int32(best)
}

// gap is the distance between the two largest values.
func gap(l []float32) float64 {
	a, b := math.Inf(-1), math.Inf(-1)
	for _, v := range l {
		f := float64(v)
		if f > a {
			a, b = f, a
		} else if f > b {
			b = f
		}
	}
	return a - b
}

// tokens is a deterministic prompt of n ids in [1, vocab).
func tokens(n, vocab int, seed uint64) []int32 {
	r := rand.New(rand.NewPCG(seed, 7))
	t := make([]int32, n)
	for i := range t {
		t[i] = int32(1 + r.IntN(vocab-1))
	}
	return t
}

// Greedy answers with argmax sampling, for the fallback check.
var Greedy = sample.Greedy()
