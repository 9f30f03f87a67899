package engine

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/churon/churon/engine/sample"
)

// TestStepEqualsGenerate: completions run by Step, joining at different
// steps, their prompts split into small chunks between the others'
// decode rows, produce exactly what each produces alone with Generate —
// tokens, text and finish — and end on their own; one cancelled mid-way
// ends at once; FeedTail leaves the whole answer in the cache.
func TestStepEqualsGenerate(t *testing.T) {
	ctx := context.Background()
	for name, spec := range batchSpecs() {
		t.Run(name, func(t *testing.T) {
			m := synthModel(t, spec)
			hot := sample.Params{Temperature: 0.9, TopK: 40, TopP: 0.95, RepeatPenalty: 1.1, PenaltyWindow: 64, Seed: 7}
			cases := []struct {
				prompt []int32
				opt    GenerateOptions
				join   int // the step it joins at
			}{
				{[]int32{1, 300, 17}, GenerateOptions{MaxTokens: 12, Sampling: greedy, IgnoreEOS: true, FeedTail: true}, 0},
				{[]int32{1, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51}, GenerateOptions{MaxTokens: 9, Sampling: hot, IgnoreEOS: true}, 0},
				{[]int32{1, 300, 17}, GenerateOptions{MaxTokens: 5, Sampling: hot, IgnoreEOS: true, FeedTail: true}, 3},
				{[]int32{1, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, GenerateOptions{MaxTokens: 10, Sampling: greedy, IgnoreEOS: true}, 4},
			}
			var want []Result
			for _, c := range cases {
				seq := must(m.NewSequence(SequenceOptions{}))
				res, err := seq.Generate(ctx, c.prompt, c.opt, nil)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, res)
			}
			streams := make([]*Stream, len(cases))
			streamed := make([]string, len(cases))
			var live []*Stream
			for step := 0; step < 200; step++ {
				for i, c := range cases {
					if c.join == step {
						seq := must(m.NewSequence(SequenceOptions{}))
						streams[i] = must(seq.NewStream(c.prompt, c.opt, func(tok Token) error {
							streamed[i] += tok.Text
							return nil
						}))
						live = append(live, streams[i])
					}
				}
				live = slices.DeleteFunc(live, (*Stream).Done)
				if len(live) == 0 && step > 4 {
					break
				}
				if err := m.Step(live, 3); err != nil {
					t.Fatal(err)
				}
			}
			for i, st := range streams {
				got, err := st.Result()
				if err != nil || !st.Done() {
					t.Fatalf("stream %d: done %v, %v", i, st.Done(), err)
				}
				if !slices.Equal(got.Tokens, want[i].Tokens) || got.Text != want[i].Text || got.Finish != want[i].Finish || streamed[i] != got.Text {
					t.Errorf("stream %d: %v %q %s, alone %v %q %s", i, got.Tokens, got.Text, got.Finish, want[i].Tokens, want[i].Text, want[i].Finish)
				}
				if got.TTFT <= 0 || got.PromptTokens != len(cases[i].prompt) {
					t.Errorf("stream %d: TTFT %v, %d prompt tokens", i, got.TTFT, got.PromptTokens)
				}
				n := len(cases[i].prompt) + len(got.Tokens)
				if !cases[i].opt.FeedTail {
					n--
				}
				if l := st.Sequence().Len(); l != n {
					t.Errorf("stream %d: the sequence holds %d tokens, want %d (FeedTail %v)", i, l, n, cases[i].opt.FeedTail)
				}
			}
		})
	}
}

// TestStepCancelAndErrors: a cancelled stream ends with what it had and
// leaves the others running; a prompt too long for its context is
// refused at once; two streams on one sequence are refused.
func TestStepCancelAndErrors(t *testing.T) {
	m := synthModel(t, batchSpecs()["qwen2-Q8_0"])
	opt := GenerateOptions{Sampling: greedy, IgnoreEOS: true}
	a := must(must(m.NewSequence(SequenceOptions{})).NewStream([]int32{1, 5}, opt, nil))
	b := must(must(m.NewSequence(SequenceOptions{})).NewStream([]int32{1, 6}, opt, nil))
	for range 4 {
		if err := m.Step([]*Stream{a, b}, 0); err != nil {
			t.Fatal(err)
		}
	}
	a.Cancel()
	if err := m.Step([]*Stream{a, b}, 0); err != nil {
		t.Fatal(err)
	}
	ra, _ := a.Result()
	rb, _ := b.Result()
	if !a.Done() || ra.Finish != FinishCancelled || len(ra.Tokens) != 4 || b.Done() || len(rb.Tokens) != 5 {
		t.Errorf("after cancelling a: a %s %d tokens, b done %v %d tokens", ra.Finish, len(ra.Tokens), b.Done(), len(rb.Tokens))
	}
	short := must(m.NewSequence(SequenceOptions{Context: 4}))
	if _, err := short.NewStream([]int32{1, 2, 3, 4, 5}, opt, nil); !errors.Is(err, ErrContextFull) {
		t.Errorf("a prompt longer than the context: %v", err)
	}
	seq := must(m.NewSequence(SequenceOptions{}))
	x, y := must(seq.NewStream([]int32{1}, opt, nil)), must(seq.NewStream([]int32{2}, opt, nil))
	if err := m.Step([]*Stream{x, y}, 0); !errors.Is(err, ErrBatch) {
		t.Errorf("two streams on one sequence: %v", err)
	}
	// A context that fills ends the stream with FinishContext.
	small := must(must(m.NewSequence(SequenceOptions{Context: 6})).NewStream([]int32{1, 2, 3}, opt, nil))
	for !small.Done() {
		if err := m.Step([]*Stream{small}, 0); err != nil {
			t.Fatal(err)
		}
	}
	if r, _ := small.Result(); r.Finish != FinishContext {
		t.Errorf("a full context ended the stream with %s", r.Finish)
	}
}

// TestLogprobs: each token's log-probability is that of the softmax of
// the raw logits, the top list is in order and, under greedy decoding,
// starts with the token itself.
func TestLogprobs(t *testing.T) {
	ctx := context.Background()
	m := synthModel(t, batchSpecs()["qwen2-Q8_0"])
	seq := must(m.NewSequence(SequenceOptions{}))
	var toks []Token
	check := must(m.NewSequence(SequenceOptions{}))
	prompt := []int32{1, 300, 17}
	if _, err := seq.Generate(ctx, prompt, GenerateOptions{MaxTokens: 4, Sampling: greedy, IgnoreEOS: true, Logprobs: true, TopLogprobs: 3},
		func(tok Token) error {
			if tok.ID >= 0 {
				toks = append(toks, tok)
			}
			return nil
		}); err != nil {
		t.Fatal(err)
	}
	if err := check.Feed(ctx, prompt); err != nil {
		t.Fatal(err)
	}
	for i, tok := range toks {
		logits := check.Logits()
		var sum float64
		for _, x := range logits {
			sum += math.Exp(float64(x))
		}
		want := float64(logits[tok.ID]) - math.Log(sum)
		if math.Abs(float64(tok.Logprob)-want) > 1e-4 {
			t.Errorf("token %d: logprob %v, want %v", i, tok.Logprob, want)
		}
		if len(tok.Top) != 3 || tok.Top[0].ID != tok.ID || tok.Top[0].Logprob < tok.Top[1].Logprob || tok.Top[1].Logprob < tok.Top[2].Logprob {
			t.Errorf("token %d (%d): top %+v", i, tok.ID, tok.Top)
		}
		if err := check.Feed(ctx, []int32{tok.ID}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStepAllocations: a steady decode step of three streams allocates
// only what each stream's token does in Generate too (the text piece its
// streaming decoder returns): the pass's buffers are the lead stream's,
// reused.
func TestStepAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	m := synthModel(t, batchSpecs()["qwen2-Q8_0"])
	opt := GenerateOptions{Sampling: greedy, IgnoreEOS: true}
	var streams []*Stream
	for _, p := range [][]int32{{1, 5}, {1, 6, 7}, {1, 8}} {
		streams = append(streams, must(must(m.NewSequence(SequenceOptions{Context: 512})).NewStream(p, opt, nil)))
	}
	for range 3 { // prompts in, buffers grown
		if err := m.Step(streams, 0); err != nil {
			t.Fatal(err)
		}
	}
	n := testing.AllocsPerRun(40, func() {
		if err := m.Step(streams, 0); err != nil {
			t.Fatal(err)
		}
	})
	// One a stream (its token's text), none per layer or row.
	if n > 3 {
		t.Errorf("a decode step of 3 streams: %v allocations", n)
	}
}
