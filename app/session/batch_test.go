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
	"github.com/churon/churon/internal/testdata"
)

// TestBatchEqualsAlone: answers run in one Batch — joining while others
// decode, their prompts fed a few tokens a step between the others'
// decode rows, greedy and sampled with their own seeds and stop strings —
// give exactly what each gives alone with Generate, and every token
// reaches its own callback.
func TestBatchEqualsAlone(t *testing.T) {
	ctx := context.Background()
	model := loadEngineModel(t, testdata.Stories260K(t))
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
	// Answer k joins after step 4k while answer 0 (40 steps) still
	// decodes: the batch holds at step 4k until the test has started k,
	// so a slow test goroutine (a loaded CI machine sleeps long) cannot
	// let answer 0 finish first and leave nothing to interleave with.
	started := make([]chan struct{}, len(cases))
	for i := range started {
		started[i] = make(chan struct{})
	}
	var steps, mixed atomic.Int32
	b := NewBatch(model, BatchOptions{Prefill: 3, OnStep: func(si StepInfo) {
		n := steps.Add(1)
		if si.Decoding > 0 && si.Prefill > 0 {
			mixed.Add(1)
		}
		if k := int(n / 4); n%4 == 0 && k < len(cases) {
			<-started[k] // Start never waits for the batch: no deadlock
		}
	}})
	defer b.Close()
	opened := 0
	defer func() { // a failed Start must not leave the batch held
		for _, c := range started[opened:] {
			close(c)
		}
	}()
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
		close(started[i])
		opened = i + 1
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
	model := loadEngineModel(t, testdata.Stories260K(t))
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

// TestStepCost: the prefill chunk settles where the measured steps
// say — long where a step's cost is mostly its fixed part (reading the
// weights), a token or two where every row costs as much, past a dear
// size to a cheaper regime beyond it — keeping a step with a chunk
// within PrefillSlack of the decode step alone.
func TestStepCost(t *testing.T) {
	var c stepCost
	if n := c.chunk(3, 100); n != 4 {
		t.Fatalf("unmeasured chunk %d", n)
	}
	// settle runs a batch whose steps cost cost(rows), d decoding, a
	// decode-only step every fifth, and returns the chunk it settles on
	// (the smallest of the last 40, beside the explorations).
	settle := func(cost func(rows int) time.Duration, d int) (low, high int) {
		var c stepCost
		low, high = 1<<30, 0
		for i := range 800 {
			k := 0
			if i%5 != 0 {
				k = c.chunk(d, 0) // no more waiting than a chunk: no bursts
			}
			c.observe(d, k, cost(d+k))
			if i >= 760 && k > 0 {
				low, high = min(low, k), max(high, k)
			}
		}
		return low, high
	}
	ms := func(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }
	// Memory-bound: 40 ms to read the weights, 1 ms a row; 3 decoding:
	// 1.75 × 43 ms allows 35 rows.
	if low, _ := settle(func(n int) time.Duration { return ms(40 + float64(n)) }, 3); low < 28 || low > 32 {
		t.Errorf("40 ms + 1 ms a row, 3 decoding: chunk %d, want about 32", low)
	}
	// Compute-bound: every row 38 ms; 1.75 × 3 rows allows 2 more.
	if low, _ := settle(func(n int) time.Duration { return ms(38 * float64(n)) }, 3); low != 2 {
		t.Errorf("38 ms a row, 3 decoding: chunk %d, want 2", low)
	}
	if low, _ := settle(func(n int) time.Duration { return ms(38 * float64(n)) }, 1); low != 1 {
		t.Errorf("38 ms a row, 1 decoding: chunk %d, want the floor 1", low)
	}
	// Kernels change at 16 rows: 10 + 10 ms a row below, 60 + 2 ms above.
	// With 8 decoding (90 ms, limit 157 ms) the small regime allows 6,
	// the wide one 40.
	tiles := func(n int) time.Duration {
		if n < 16 {
			return ms(10 + 10*float64(n))
		}
		return ms(60 + 2*float64(n))
	}
	if low, _ := settle(tiles, 8); low < 30 || low > 40 {
		t.Errorf("a cheaper regime from 16 rows, 8 decoding: chunk %d, want about 40", low)
	}
	// With long prompts waiting on a CPU where a row costs 38 ms, one step
	// in 50 at most is a burst, within 4× the decode step (3 rows: 456 ms,
	// so 9 more rows); the others keep the normal chunk.
	var burst stepCost
	bursts, steps := 0, 0
	for i := range 2000 {
		k := 0
		if i%5 != 0 {
			k = burst.chunk(3, 2000)
		}
		if k > 5 { // past the normal chunk and its exploration (2×2+1)
			if k > 9 {
				t.Fatalf("step %d: a burst of %d tokens, past 4× the decode step", i, k)
			}
			bursts++
		}
		steps++
		burst.observe(3, k, ms(38*float64(3+k)))
	}
	if bursts == 0 || bursts > steps/50+1 {
		t.Errorf("%d bursts in %d steps, want some, at most one in 50", bursts, steps)
	}

	// A prefill-only pass says nothing about a decode step's cost.
	c = stepCost{}
	c.observe(3, 0, 40*time.Millisecond)
	c.observe(0, 256, time.Second)
	if c.secs[256] != 0 {
		t.Error("a prefill-only pass was taken for a decode step")
	}
}

// TestShortBurst: short prompts arriving while others decode are fed
// whole, the earliest first and whole prompts only, up to BurstTokens —
// BurstCap times in a row from the start, then one step in 50 — and a
// long first prompt is left to the chunks; where a normal step takes the
// prompts anyway no burst is spent.
func TestShortBurst(t *testing.T) {
	ms := func(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }
	c := stepCost{credit: BurstCap}
	// Compute-bound: a row costs 38 ms, so a normal step takes a token or two.
	for k := range 4 {
		c.observe(3, k, ms(38*float64(3+k)))
	}
	for i := range int(BurstCap) {
		if n := c.short(3, []int{50, 60, BurstTokens}); n != 110 {
			t.Fatalf("burst %d: chunk %d, want the two short prompts whole (110)", i, n)
		}
	}
	if n := c.short(3, []int{50}); n != 0 {
		t.Fatalf("a burst past the %v in hand: chunk %d", BurstCap, n)
	}
	c.credit = 1
	if n := c.short(3, []int{BurstTokens + 1, 10}); n != 0 {
		t.Errorf("a long first prompt: burst of %d, want it chunked", n)
	}
	if n := c.short(3, []int{1}); n != 0 || c.credit != 1 {
		t.Errorf("a prompt a normal step takes: burst of %d, credit %v left", n, c.credit)
	}
	bursts := 0
	c.credit = 0
	for range 500 {
		if c.short(3, []int{40}) > 0 {
			bursts++
		}
		c.observe(3, 0, ms(38*3))
	}
	if bursts < 9 || bursts > 10 {
		t.Errorf("%d bursts in 500 steps, want one in 50", bursts)
	}
}

// TestLongBurstsApart: the bursts in hand are for short prompts; a long
// prompt's bursts stay at least longBurstEvery decode steps apart even
// with BurstCap of them in hand, so its chunks do not slow the others
// several steps in a row.
func TestLongBurstsApart(t *testing.T) {
	ms := func(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }
	c := stepCost{credit: BurstCap}
	apart := int(1 / BurstShare) // one burst in 50 over time
	last := -apart
	bursts := 0
	for i := range 300 {
		before := c.credit
		k := c.chunk(3, 2000)
		if c.credit < before { // a burst spends credit
			if i-last < apart {
				t.Fatalf("bursts at steps %d and %d", last, i)
			}
			last = i
			bursts++
		}
		c.observe(3, k, ms(38*float64(3+k)))
	}
	if bursts == 0 {
		t.Error("no burst for a long prompt in 300 steps")
	}
}
