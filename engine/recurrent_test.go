package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/churon/churon/models/synth"
)

// recurrentModel loads a small qwen35 (three Gated DeltaNet layers and
// one attention layer).
func recurrentModel(t *testing.T, shape string) *Model {
	t.Helper()
	s, err := synth.Preset(shape, "F16", 3)
	if err != nil {
		t.Fatal(err)
	}
	return loadModel(t, synthFile(t, shape+".gguf", s))
}

// coldLogits feeds toks to a fresh sequence and returns its logits.
func coldLogits(t *testing.T, m *Model, toks []int32) []float32 {
	t.Helper()
	s, err := m.NewSequence(SequenceOptions{Context: 512})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Feed(context.Background(), toks); err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), s.Logits()...)
}

// TestRecurrentTruncate: after a 100-token prompt, cutting a qwen35
// sequence anywhere and feeding on gives the logits of a cold prefill of
// the same tokens, bit for bit — a follow-up (no cut), a regeneration (a
// cut just before the prompt's last token, a turn boundary), cuts on and
// between checkpoints, before the first one (no checkpoint: the states
// start from zero) and to nothing — and runs again only the tokens after
// the checkpoint it resumes from, as Reused says.
func TestRecurrentTruncate(t *testing.T) {
	m := recurrentModel(t, "qwen35-test")
	ctx := context.Background()
	prompt := snapTokens(100, m.Info().VocabSize, 5)
	more := snapTokens(10, m.Info().VocabSize, 6)
	for _, tc := range []struct{ cut, reused int }{
		{100, 100}, {99, 99}, {64, 64}, {57, 48}, {16, 16}, {15, 0}, {3, 0}, {0, 0},
	} {
		t.Run(fmt.Sprint(tc.cut), func(t *testing.T) {
			s, err := m.NewSequence(SequenceOptions{Context: 512, Batch: 24, CheckpointEvery: 16})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Feed(ctx, prompt); err != nil {
				t.Fatal(err)
			}
			if err := s.Truncate(tc.cut); err != nil {
				t.Fatal(err)
			}
			if got := s.Reused(); got != tc.reused {
				t.Errorf("Reused() = %d after a cut to %d, want %d", got, tc.cut, tc.reused)
			}
			if s.Refills() != (tc.cut < len(prompt)) {
				t.Errorf("Refills() = %v after a cut to %d of %d", s.Refills(), tc.cut, len(prompt))
			}
			before := m.rowsRun
			if err := s.Feed(ctx, more); err != nil {
				t.Fatal(err)
			}
			if ran, want := m.rowsRun-before, int64(tc.cut-tc.reused+len(more)); ran != want {
				t.Errorf("the feed after a cut to %d ran %d rows, want %d (from the checkpoint at %d)", tc.cut, ran, want, tc.reused)
			}
			want := coldLogits(t, m, append(append([]int32(nil), prompt[:tc.cut]...), more...))
			sameFloats(t, fmt.Sprintf("cut to %d, then 10 tokens", tc.cut), s.Logits(), want)
			// Cut again after the feed: the checkpoints taken on the way
			// serve as well.
			if err := s.Truncate(tc.cut + 5); err != nil {
				t.Fatal(err)
			}
			if err := s.Feed(ctx, more[:3]); err != nil {
				t.Fatal(err)
			}
			want = coldLogits(t, m, append(append(append([]int32(nil), prompt[:tc.cut]...), more[:5]...), more[:3]...))
			sameFloats(t, fmt.Sprintf("cut to %d, 10 tokens, cut to %d, 3 tokens", tc.cut, tc.cut+5), s.Logits(), want)
		})
	}
}

// TestRecurrentStreams: batched Step on a qwen35 sequence that was cut
// back (its stream rewinds to a checkpoint and feeds the rest as the
// start of its prompt) beside a fresh one, and a further cut into what
// Step generated (checkpointed on the way), give exactly the answers of
// cold sequences.
func TestRecurrentStreams(t *testing.T) {
	m := recurrentModel(t, "qwen35-test")
	ctx := context.Background()
	vocab := m.Info().VocabSize
	prompt, more, other := snapTokens(50, vocab, 1), snapTokens(5, vocab, 2), snapTokens(30, vocab, 3)
	opt := GenerateOptions{MaxTokens: 20, Sampling: greedy, IgnoreEOS: true}
	cold := func(toks []int32) Result {
		s := must(m.NewSequence(SequenceOptions{Context: 512}))
		defer s.Close()
		res, err := s.Generate(ctx, toks, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a := must(m.NewSequence(SequenceOptions{Context: 512, Batch: 7, CheckpointEvery: 16}))
	b := must(m.NewSequence(SequenceOptions{Context: 512, Batch: 7, CheckpointEvery: 16}))
	if err := a.Feed(ctx, prompt); err != nil {
		t.Fatal(err)
	}
	if err := a.Truncate(40); err != nil {
		t.Fatal(err)
	}
	sa := must(a.NewStream(more, opt, nil))
	sb := must(b.NewStream(other, opt, nil))
	for step := 0; !sa.Done() || !sb.Done(); step++ {
		if step > 200 {
			t.Fatal("the streams did not end")
		}
		if err := m.Step([]*Stream{sa, sb}, 6); err != nil {
			t.Fatal(err)
		}
	}
	head := append(append([]int32(nil), prompt[:40]...), more...)
	for i, c := range []struct {
		st     *Stream
		prompt []int32
	}{{sa, head}, {sb, other}} {
		got, err := c.st.Result()
		if err != nil {
			t.Fatal(err)
		}
		if want := cold(c.prompt); !slices.Equal(got.Tokens, want.Tokens) {
			t.Errorf("stream %d: %v, cold %v", i, got.Tokens, want.Tokens)
		}
	}
	// Cut into the answer: positions 45 … 64 were generated, 48 and 64
	// checkpointed while decoding.
	res, _ := sa.Result()
	if err := a.Truncate(52); err != nil {
		t.Fatal(err)
	}
	if got := a.Reused(); got != 48 {
		t.Errorf("Reused() = %d after a cut to 52 into a generated answer, want 48", got)
	}
	again := append(append([]int32(nil), head...), res.Tokens[:52-len(head)]...)
	got, err := a.Generate(ctx, nil, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := cold(again); !slices.Equal(got.Tokens, want.Tokens) {
		t.Errorf("after a cut into the answer: %v, cold %v", got.Tokens, want.Tokens)
	}
}
