package session

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/sample"
)

func loadEngineModel(t *testing.T, path string) *engine.Model {
	t.Helper()
	m, err := engine.Load(context.Background(), path, engine.LoadOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestBatchEqualsAlone: answers run in one Batch — joining while others
// decode, their prompts fed a few tokens a step between the others'
// decode rows, greedy and sampled with their own seeds and stop strings —
// give exactly what each gives alone with Generate, and every token
// reaches its own callback.
func TestBatchEqualsAlone(t *testing.T) {
	ctx := context.Background()
	model := loadEngineModel(t, storiesPath(t))
	hot := sample.Params{Temperature: 0.8, TopK: 40, TopP: 0.95, RepeatPenalty: 1.1, PenaltyWindow: 64}
	cases := []struct {
		prompt string
		opt    engine.GenerateOptions
	}{
		{"Once upon a time", engine.GenerateOptions{MaxTokens: 40, Sampling: sample.Greedy()}},
		{"The little dog ran to the park and saw a big red ball", engine.GenerateOptions{MaxTokens: 30, Sampling: withSeed(hot, 3)}},
		{"Lily and Ben", engine.GenerateOptions{MaxTokens: 50, Sampling: sample.Greedy(), Stop: []string{"."}}},
		{"One day, a little girl named Sue went to", engine.GenerateOptions{MaxTokens: 25, Sampling: withSeed(hot, 11), FeedTail: true}},
	}
	var want []engine.Result
	for _, c := range cases {
		seq, err := model.NewSequence(engine.SequenceOptions{Context: 256})
		if err != nil {
			t.Fatal(err)
		}
		res, err := seq.Generate(ctx, model.TokenizePrompt(c.prompt, true, false), c.opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, res)
	}
	var steps, mixed atomic.Int32
	b := NewBatch(model, BatchOptions{Prefill: 3, OnStep: func(si StepInfo) {
		steps.Add(1)
		if si.Decoding > 0 && si.Prefill > 0 {
			mixed.Add(1)
		}
	}})
	defer b.Close()
	runs := make([]*Run, len(cases))
	texts := make([]string, len(cases))
	var mu sync.Mutex
	for i, c := range cases {
		seq, err := model.NewSequence(engine.SequenceOptions{Context: 256})
		if err != nil {
			t.Fatal(err)
		}
		if runs[i], err = b.Start(ctx, seq, model.TokenizePrompt(c.prompt, true, false), c.opt, func(tok engine.Token) error {
			mu.Lock()
			texts[i] += tok.Text
			mu.Unlock()
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		// The next joins while this one decodes (answer 0 alone takes 40
		// steps).
		for deadline := time.Now().Add(waitLimit); steps.Load() < int32(4*(i+1)) && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	for i, r := range runs {
		got, err := r.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Tokens, want[i].Tokens) || got.Text != want[i].Text || got.Finish != want[i].Finish {
			t.Errorf("answer %d in the batch: %v %q %s; alone %v %q %s", i, got.Tokens, got.Text, got.Finish, want[i].Tokens, want[i].Text, want[i].Finish)
		}
		mu.Lock()
		if texts[i] != got.Text {
			t.Errorf("answer %d: streamed %q, result %q", i, texts[i], got.Text)
		}
		mu.Unlock()
	}
	if mixed.Load() == 0 {
		t.Errorf("no step fed a prompt chunk beside decode rows: the prompts did not interleave")
	}
}

func withSeed(p sample.Params, seed uint64) sample.Params {
	p.Seed = seed
	return p
}

// TestBatchCancelAndPause: a cancelled answer leaves the batch within one
// token while the others go on; a paused batch runs no step until it is
// resumed, and answers started meanwhile wait.
func TestBatchCancelAndPause(t *testing.T) {
	model := loadEngineModel(t, storiesPath(t))
	var steps atomic.Int32
	b := NewBatch(model, BatchOptions{OnStep: func(StepInfo) { steps.Add(1) }})
	defer b.Close()
	opt := engine.GenerateOptions{Sampling: sample.Greedy(), IgnoreEOS: true}
	prompt := model.TokenizePrompt("Once upon a time", true, false)
	newSeq := func() *engine.Sequence {
		seq, err := model.NewSequence(engine.SequenceOptions{Context: 2048})
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	ctx, cancel := context.WithCancel(context.Background())
	generated := 0
	cut, err := b.Start(ctx, newSeq(), prompt, opt, func(tok engine.Token) error {
		if tok.ID >= 0 {
			if generated++; generated == 5 {
				cancel() // from the batch's goroutine: no token can slip by
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	long, err := b.Start(context.Background(), newSeq(), prompt, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := cut.Wait()
	if res.Finish != engine.FinishCancelled || len(res.Tokens) != 5 {
		t.Fatalf("cancelled at token 5: %s after %d tokens", res.Finish, len(res.Tokens))
	}
	select {
	case <-long.Done():
		t.Fatal("the other answer ended with the cancelled one")
	default:
	}

	resume, err := b.Pause(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	held := steps.Load()
	queued, err := b.Start(context.Background(), newSeq(), prompt, engine.GenerateOptions{MaxTokens: 3, Sampling: sample.Greedy()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if n := steps.Load(); n != held {
		t.Fatalf("%d steps ran while paused", n-held)
	}
	resume()
	if r, err := queued.Wait(); err != nil || len(r.Tokens) != 3 {
		t.Fatalf("after resuming: %v, %d tokens", err, len(r.Tokens))
	}
	b.Close() // cancels the long answer
	if r, _ := long.Wait(); r.Finish != engine.FinishCancelled {
		t.Fatalf("closing the batch ended the long answer with %s", r.Finish)
	}
}

// TestStepCost: the prefill chunk follows the fitted cost of a step —
// long where a step's cost is mostly its fixed part (reading the
// weights), a token or two where every row costs as much — and keeps a
// step with a chunk within PrefillSlack of one without.
func TestStepCost(t *testing.T) {
	var c stepCost
	if n := c.chunk(3); n != 4 {
		t.Fatalf("unmeasured chunk %d", n)
	}
	feed := func(c *stepCost, fixed, perRow time.Duration, decoding int) {
		for i := range 60 {
			fed := []int{0, 2, 8, 16, 4}[i%5]
			c.observe(decoding, fed, fixed+time.Duration(decoding+fed)*perRow)
		}
	}
	// Memory-bound: 40 ms to read the weights, 1 ms a row.
	var mem stepCost
	feed(&mem, 40*time.Millisecond, time.Millisecond, 3)
	if n := mem.chunk(3); n < 30 || n > 34 {
		t.Fatalf("40 ms + 1 ms a row, 3 decoding: chunk %d, want 32 (0.75 × 43 ms)", n)
	}
	// Compute-bound: every row 38 ms.
	var cpu stepCost
	feed(&cpu, 0, 38*time.Millisecond, 3)
	if n := cpu.chunk(3); n != 2 {
		t.Fatalf("38 ms a row, 3 decoding: chunk %d, want 2", n)
	}
	if n := cpu.chunk(1); n != 1 {
		t.Fatalf("38 ms a row, 1 decoding: chunk %d, want the floor 1", n)
	}
	// A prefill-only pass says nothing about a decode step's cost.
	before := mem.chunk(3)
	mem.observe(0, 256, time.Second)
	if n := mem.chunk(3); n != before {
		t.Fatalf("after a prefill-only pass: chunk %d, was %d", n, before)
	}
	// Steps whose rows never vary: all cost per row, short chunks.
	var flat stepCost
	for range 20 {
		flat.observe(4, 0, 80*time.Millisecond)
	}
	if n := flat.chunk(4); n != 3 {
		t.Fatalf("only 4-row steps of 80 ms: chunk %d, want 3 (0.75 × 4 rows)", n)
	}
}
