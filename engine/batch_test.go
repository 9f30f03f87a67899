package engine

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/engine/sample"
	"github.com/churon/churon/models/synth"
)

// batchSpecs are small models whose matrices go through different dot
// product kernels, with grouped-query attention.
func batchSpecs() map[string]synth.Spec {
	q8 := synth.Tiny("qwen2")
	q8.Type = quant.Q8_0
	k4 := synth.Tiny("llama")
	k4.Embd, k4.FF, k4.Heads, k4.KVHeads = 256, 512, 8, 2
	k4.FileType = "Q4_K_M"
	// gemma3 with a feed-forward wide enough that a batched step's GeGLU
	// splits over threads, and a window the prompts cross.
	g3, _ := synth.Preset("gemma3-odd", "F16", 1)
	g3.FF = 6144
	moe := synth.Tiny("qwen3moe")
	moe.Type = quant.Q8_0
	// gpt-oss: MXFP4 experts, sinks, a window shorter than the prompts
	oss := synth.Tiny("gpt-oss")
	oss.FileType = "MXFP4_MOE"
	// qwen35 and qwen35moe: Gated DeltaNet layers with a state per
	// sequence, checkpointed every 256 positions and at turn boundaries.
	q35, _ := synth.Preset("qwen35-odd", "Q8_0", 1)
	q35moe, _ := synth.Preset("qwen35moe-test", "F16", 1)
	return map[string]synth.Spec{"qwen2-Q8_0": q8, "llama-Q4_K_M": k4, "gemma3-F16": g3,
		"qwen3moe-Q8_0": moe, "gpt-oss-MXFP4_MOE": oss, "qwen35-Q8_0": q35, "qwen35moe-F16": q35moe}
}

func sameFloats(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: value %d = %v, want %v (bit-identical)", what, i, got[i], want[i])
		}
	}
}

// TestDecodeBatchEqualsSingle: stepping several sequences in one pass
// gives exactly the logits of stepping each alone, prompts fed together
// (in passes smaller than the prompts) equal prompts fed alone, and the
// tokens land in the right caches.
func TestDecodeBatchEqualsSingle(t *testing.T) {
	ctx := context.Background()
	prompts := [][]int32{{1, 300, 17, 299, 5}, {1, 42}, {1, 260, 261, 7, 8, 9, 10, 11, 12}}
	steps := [][]int32{{7, 100, 3}, {260, 5, 5}, {9, 301, 17}}
	for name, spec := range batchSpecs() {
		t.Run(name, func(t *testing.T) {
			m := synthModel(t, spec)
			// Reference: each sequence alone.
			var want [][][]float32
			for i, p := range prompts {
				seq, err := m.NewSequence(SequenceOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if err := seq.Feed(ctx, p); err != nil {
					t.Fatal(err)
				}
				rows := [][]float32{append([]float32(nil), seq.Logits()...)}
				for _, tok := range steps[i] {
					if err := seq.Feed(ctx, []int32{tok}); err != nil {
						t.Fatal(err)
					}
					rows = append(rows, append([]float32(nil), seq.Logits()...))
				}
				want = append(want, rows)
			}
			seqs := make([]*Sequence, len(prompts))
			for i := range seqs {
				var err error
				// A batch of 4 rows splits the prompts across passes.
				seqs[i], err = m.NewSequence(SequenceOptions{Batch: 4})
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := m.FeedBatch(ctx, seqs, prompts); err != nil {
				t.Fatal(err)
			}
			for i, s := range seqs {
				sameFloats(t, "prompt logits", s.Logits(), want[i][0])
				if !slices.Equal(s.Tokens(), prompts[i]) {
					t.Fatalf("sequence %d holds %v, want %v", i, s.Tokens(), prompts[i])
				}
			}
			for step := range steps[0] {
				toks := make([]int32, len(seqs))
				for i := range seqs {
					toks[i] = steps[i][step]
				}
				if err := m.DecodeBatch(ctx, seqs, toks); err != nil {
					t.Fatal(err)
				}
				for i, s := range seqs {
					sameFloats(t, "decode logits", s.Logits(), want[i][step+1])
				}
			}
			// A sub-batch in another order.
			if err := m.DecodeBatch(ctx, []*Sequence{seqs[2], seqs[0]}, []int32{4, 4}); err != nil {
				t.Fatal(err)
			}
			if seqs[0].Len() != len(prompts[0])+4 || seqs[1].Len() != len(prompts[1])+3 || seqs[2].Len() != len(prompts[2])+4 {
				t.Errorf("lengths %d %d %d after the sub-batch", seqs[0].Len(), seqs[1].Len(), seqs[2].Len())
			}
		})
	}
}

// TestGenerateBatchEqualsGenerate: a batch of completions produces what
// each completion produces alone, with its own stopping point.
func TestGenerateBatchEqualsGenerate(t *testing.T) {
	ctx := context.Background()
	m := synthModel(t, batchSpecs()["qwen2-Q8_0"])
	prompts := [][]int32{{1, 300, 17}, {1, 42, 43, 44, 45, 46}, {1, 300, 17}, {1, 7}}
	for _, sp := range []sample.Params{greedy, {Temperature: 0.9, TopK: 40, TopP: 0.95, RepeatPenalty: 1.1, PenaltyWindow: 64, Seed: 7}} {
		opt := GenerateOptions{MaxTokens: 12, Sampling: sp, IgnoreEOS: true}
		var want []Result
		for _, p := range prompts {
			seq, _ := m.NewSequence(SequenceOptions{})
			res, err := seq.Generate(ctx, p, opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, res)
		}
		seqs := make([]*Sequence, len(prompts))
		for i := range seqs {
			seqs[i], _ = m.NewSequence(SequenceOptions{})
		}
		streamed := make([]int, len(prompts))
		br, err := m.GenerateBatch(ctx, seqs, prompts, opt, func(i int, tok Token) error {
			if tok.ID >= 0 {
				streamed[i]++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for i, r := range br.Results {
			if !slices.Equal(r.Tokens, want[i].Tokens) || r.Text != want[i].Text || r.Finish != want[i].Finish {
				t.Errorf("temp %v sequence %d: %v %q %s, alone %v %q %s", sp.Temperature, i, r.Tokens, r.Text, r.Finish, want[i].Tokens, want[i].Text, want[i].Finish)
			}
			if streamed[i] != len(r.Tokens) {
				t.Errorf("sequence %d: %d tokens streamed, %d generated", i, streamed[i], len(r.Tokens))
			}
			total += len(r.Tokens) - 1
		}
		if br.GenTokens != total || br.GenTPS <= 0 || br.PromptTokens != 3+6+3+2 {
			t.Errorf("batch stats %+v", br)
		}
	}

	// Different stopping points: one sequence has less context left.
	short, _ := m.NewSequence(SequenceOptions{Context: 8})
	long, _ := m.NewSequence(SequenceOptions{})
	br, err := m.GenerateBatch(ctx, []*Sequence{short, long}, [][]int32{{1, 2, 3}, {1, 2, 3}},
		GenerateOptions{MaxTokens: 10, Sampling: greedy, IgnoreEOS: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if br.Results[0].Finish != FinishContext || br.Results[1].Finish != FinishLength || len(br.Results[1].Tokens) != 10 {
		t.Errorf("finishes %s (%d tokens), %s (%d tokens)", br.Results[0].Finish, len(br.Results[0].Tokens),
			br.Results[1].Finish, len(br.Results[1].Tokens))
	}

	// Cancellation stops every sequence without an error.
	cctx, cancel := context.WithCancel(ctx)
	seqs := []*Sequence{must(m.NewSequence(SequenceOptions{})), must(m.NewSequence(SequenceOptions{}))}
	br, err = m.GenerateBatch(cctx, seqs, [][]int32{{1, 5}, {1, 6}}, GenerateOptions{Sampling: greedy, IgnoreEOS: true},
		func(i int, tok Token) error {
			if i == 1 && tok.ID >= 0 {
				cancel()
			}
			return nil
		})
	if err != nil || br.Results[0].Finish != FinishCancelled || br.Results[1].Finish != FinishCancelled {
		t.Errorf("cancelled batch: %v, %+v", err, br.Results)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestBatchErrors(t *testing.T) {
	ctx := context.Background()
	m := synthModel(t, synth.Tiny("llama"))
	other := synthModel(t, synth.Tiny("qwen2"))
	a, _ := m.NewSequence(SequenceOptions{})
	b, _ := m.NewSequence(SequenceOptions{})
	x, _ := other.NewSequence(SequenceOptions{})
	small, _ := m.NewSequence(SequenceOptions{Context: 2})
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"twice", m.DecodeBatch(ctx, []*Sequence{a, a}, []int32{1, 1}), ErrBatch},
		{"other model", m.DecodeBatch(ctx, []*Sequence{a, x}, []int32{1, 1}), ErrBatch},
		{"lengths", m.DecodeBatch(ctx, []*Sequence{a, b}, []int32{1}), ErrBatch},
		{"feed lengths", m.FeedBatch(ctx, []*Sequence{a, b}, [][]int32{{1}}), ErrBatch},
		{"full", m.FeedBatch(ctx, []*Sequence{a, small}, [][]int32{{1}, {1, 2, 3}}), ErrContextFull},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if err := m.DecodeBatch(ctx, []*Sequence{a, b}, []int32{1, 99999}); err == nil {
		t.Error("token outside the vocabulary accepted")
	}
	if a.Len() != 0 || b.Len() != 0 {
		t.Errorf("failed batches changed the sequences: %d, %d tokens", a.Len(), b.Len())
	}
	if err := m.DecodeBatch(ctx, nil, nil); err != nil {
		t.Errorf("empty batch: %v", err)
	}
}

// TestDecodeAllocations: once warm, a decode step allocates nothing —
// neither a single sequence's Feed nor a batched step.
func TestDecodeAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	ctx := context.Background()
	for name, spec := range batchSpecs() {
		t.Run(name, func(t *testing.T) {
			m := synthModel(t, spec)
			seq, _ := m.NewSequence(SequenceOptions{Context: 512})
			if err := seq.Feed(ctx, []int32{1, 300, 17}); err != nil {
				t.Fatal(err)
			}
			tok := []int32{42}
			if n := testing.AllocsPerRun(50, func() {
				if err := seq.Feed(ctx, tok); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("Sequence.Feed of one token: %v allocations", n)
			}
			seqs := []*Sequence{seq, must(m.NewSequence(SequenceOptions{Context: 512})), must(m.NewSequence(SequenceOptions{Context: 512}))}
			toks := []int32{5, 6, 7}
			if err := m.DecodeBatch(ctx, seqs, toks); err != nil {
				t.Fatal(err)
			}
			if n := testing.AllocsPerRun(50, func() {
				if err := m.DecodeBatch(ctx, seqs, toks); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("DecodeBatch of 3: %v allocations", n)
			}
		})
	}
}

// TestStepBytes: a step reads every weight but the embedding table,
// unless the output shares it, and of a mixture of experts only its
// experts' share of the expert tensors.
func TestStepBytes(t *testing.T) {
	for _, tc := range []struct {
		arch string
		tied bool
	}{{"llama", false}, {"llama", true}, {"qwen3moe", false}} {
		s := synth.Tiny(tc.arch)
		s.Tied = tc.tied
		m := synthModel(t, s)
		ts, err := s.Tensors()
		if err != nil {
			t.Fatal(err)
		}
		var want int64
		for _, x := range ts {
			switch {
			case x.Name == "token_embd.weight" && !tc.tied:
			case len(x.Shape) == 3: // experts: [cols, rows, experts]
				want += x.Bytes() / int64(s.Experts) * int64(s.ExpertsUsed)
			default:
				want += x.Bytes()
			}
		}
		if got := m.StepBytes(); got != want {
			t.Errorf("%s tied %v: StepBytes %d, want %d", tc.arch, tc.tied, got, want)
		}
	}
}
