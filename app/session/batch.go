package session

import (
	"context"
	"sync"
	"time"

	"github.com/churon/churon/engine"
)

// Batch runs the answers of one loaded model together (continuous
// batching): one goroutine owns its forward passes, and each pass decodes
// one token for every answer that is generating and feeds a chunk of the
// prompts that are not processed yet, so that the weights are read once
// per step for all of them and a long prompt never holds the others up
// for more than a chunk. An answer joins at the next step and leaves the
// batch the step it ends (end of turn, stop string, its cap, its context,
// or its context cancelled: within one token). Sampling, stop strings,
// seeds and the KV cache stay each answer's own, and so do its tokens:
// an answer gives what it gives alone (engine.Model.Step says the one
// exception, CPUs with AMX).
//
// The Manager makes one for each model it loads and puts every answer
// through it; `churon generate` with several prompts uses one directly.
type Batch struct {
	model *engine.Model
	opt   BatchOptions

	mu      sync.Mutex
	joining []*Run
	pauses  []*pause
	closed  bool
	wake    chan struct{} // one pending wake-up is enough
	quit    chan struct{} // closed when the loop has exited

	// The loop's own state.
	runs []*Run
	cost stepCost
}

// BatchOptions tune a Batch.
type BatchOptions struct {
	// Prefill is how many prompt tokens a step feeds while other answers
	// decode; 0 chooses it from the measured cost of steps so that a step
	// with a prompt chunk takes at most PrefillSlack longer than one
	// without. A step in which nothing decodes feeds a
	// whole pass (the sequence's batch size) whatever it is.
	Prefill int
	// OnStep, when set, is called on the batch's goroutine after every
	// step with what it did (for measurements and tests).
	OnStep func(StepInfo)
}

// StepInfo is what one step did.
type StepInfo struct {
	Decoding  int // answers that decoded a token
	Prefill   int // prompt tokens fed
	Prefills  int // answers whose prompt is being processed
	Took      time.Duration
	ChunkGoal int // the prefill chunk the step was allowed
}

// PrefillSlack is how much longer than a decode-only step a step with a
// prompt chunk may take, when BatchOptions.Prefill is 0: at most 1.75
// times as long, so that a long prompt never doubles the others' time
// between tokens, yet always moves (at least a token a step).
const PrefillSlack = 0.75

// Run is one answer in a Batch.
type Run struct {
	ctx    context.Context
	stream *engine.Stream
	done   chan struct{}
	res    engine.Result
	err    error
	failed error // a step refused before its pass
}

type pause struct {
	held   chan struct{} // closed once the batch stands still
	resume chan struct{} // closed by the caller to let it go on
}

// NewBatch starts the batch goroutine of model. Close it before the model.
func NewBatch(model *engine.Model, opt BatchOptions) *Batch {
	b := &Batch{model: model, opt: opt, wake: make(chan struct{}, 1), quit: make(chan struct{})}
	go b.loop()
	return b
}

// Start adds an answer: prompt is fed to seq (which must belong to the
// batch's model and be left alone until Wait returns), then tokens are
// sampled with opt until the answer ends. onToken is called on the
// batch's goroutine for every token, as engine.Sequence.Generate calls it:
// it must return quickly and never wait for anything the batch does, or
// every answer waits with it. Cancelling ctx ends the answer within one
// token with engine.FinishCancelled. Start never blocks; an error is one
// Generate would have returned before its first pass.
func (b *Batch) Start(ctx context.Context, seq *engine.Sequence, prompt []int32, opt engine.GenerateOptions, onToken func(engine.Token) error) (*Run, error) {
	st, err := seq.NewStream(prompt, opt, onToken)
	if err != nil {
		return nil, err
	}
	r := &Run{ctx: ctx, stream: st, done: make(chan struct{})}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, ErrClosed
	}
	b.joining = append(b.joining, r)
	b.mu.Unlock()
	b.poke()
	return r, nil
}

// Wait returns the answer's result once it has ended, as Generate would
// return it: a cancelled answer has engine.FinishCancelled and no error.
func (r *Run) Wait() (engine.Result, error) {
	<-r.done
	return r.res, r.err
}

// Done is closed when the answer has ended.
func (r *Run) Done() <-chan struct{} { return r.done }

// Pause stops the batch after the step it is running, for someone who
// needs the machine to itself (the Compare page measuring): answers wait,
// new ones queue, and nothing runs until resume is called. It returns
// once the batch stands still, or with ctx's error.
func (b *Batch) Pause(ctx context.Context) (resume func(), err error) {
	p := &pause{held: make(chan struct{}), resume: make(chan struct{})}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, ErrClosed
	}
	b.pauses = append(b.pauses, p)
	b.mu.Unlock()
	b.poke()
	var once sync.Once
	resume = func() { once.Do(func() { close(p.resume) }) }
	select {
	case <-p.held:
		return resume, nil
	case <-ctx.Done():
		resume()
		return nil, ctx.Err()
	}
}

// Close cancels every answer (each ends as cancelled) and stops the
// batch's goroutine once they have ended.
func (b *Batch) Close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.poke()
	<-b.quit
}

func (b *Batch) poke() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (b *Batch) loop() {
	defer close(b.quit)
	var live []*engine.Stream
	for {
		b.mu.Lock()
		b.runs = append(b.runs, b.joining...)
		b.joining = b.joining[:0]
		pauses := b.pauses
		b.pauses = nil
		closed := b.closed
		b.mu.Unlock()
		for _, p := range pauses {
			close(p.held)
			<-p.resume
		}
		if len(pauses) > 0 {
			continue // what joined meanwhile joins now
		}
		// Cancelled answers leave before the step; what ended leaves after.
		for _, r := range b.runs {
			if closed || r.ctx.Err() != nil {
				r.stream.Cancel()
			}
		}
		b.runs = b.finish(b.runs)
		if len(b.runs) == 0 {
			if closed {
				return
			}
			<-b.wake
			continue
		}
		live = live[:0]
		decoding, prefills := 0, 0
		for _, r := range b.runs {
			live = append(live, r.stream)
			if r.stream.Decoding() {
				decoding++
			} else {
				prefills++
			}
		}
		goal := b.chunk(decoding)
		before := 0
		for _, st := range live {
			before += st.PromptLeft()
		}
		start := time.Now()
		err := b.model.Step(live, goal)
		took := time.Since(start)
		after := 0
		for _, st := range live {
			after += st.PromptLeft()
		}
		if err != nil {
			// Step ended every stream of the pass with the error; one it
			// refused before the pass (a closed model) ends here.
			for _, r := range b.runs {
				if !r.stream.Done() {
					r.stream.Cancel()
					r.failed = err
				}
			}
			b.runs = b.finish(b.runs)
			continue
		}
		b.cost.observe(decoding, before-after, took)
		if b.opt.OnStep != nil {
			b.opt.OnStep(StepInfo{Decoding: decoding, Prefill: before - after, Prefills: prefills, Took: took, ChunkGoal: goal})
		}
		b.runs = b.finish(b.runs)
	}
}

// finish reports the runs that have ended and returns the others.
func (b *Batch) finish(runs []*Run) []*Run {
	kept := runs[:0]
	for _, r := range runs {
		if !r.stream.Done() {
			kept = append(kept, r)
			continue
		}
		r.res, r.err = r.stream.Result()
		if r.failed != nil {
			r.res.Finish, r.err = engine.FinishError, r.failed
		}
		close(r.done)
	}
	clear(runs[len(kept):])
	return kept
}

// chunk is the prompt tokens the next step may feed while decoding
// answers decode (0: a whole pass, when none does).
func (b *Batch) chunk(decoding int) int {
	if decoding == 0 {
		return 0
	}
	if b.opt.Prefill > 0 {
		return b.opt.Prefill
	}
	return b.cost.chunk(decoding)
}

// stepCost learns what a step that decodes costs, as a line over the
// rows it runs — T = fixed + perRow × (decode rows + prompt tokens), a
// least-squares fit with exponential forgetting — and sizes the prefill
// chunk so that a step with one takes at most PrefillSlack longer than
// the decode step alone would. Where decoding is bound by memory
// bandwidth the fixed part (reading the weights) dominates and chunks
// are long; where the CPU is the limit (a loaded machine, many answers)
// a prompt token costs as much as a decode row and chunks shrink to a
// token or two: the prompt then gets its share of the machine, and the
// answers decoding theirs.
type stepCost struct {
	n                int     // steps seen
	mx, my, mxx, mxy float64 // weighted means of rows, seconds, rows², rows×seconds
}

// costWeight is the weight of the newest step in the running means.
const costWeight = 0.1

func (c *stepCost) observe(decoding, fed int, took time.Duration) {
	if decoding == 0 {
		return // a prefill-only pass runs in another regime (wide matrix products)
	}
	x, y := float64(decoding+fed), took.Seconds()
	if c.n == 0 {
		c.mx, c.my, c.mxx, c.mxy = x, y, x*x, x*y
	} else {
		w := costWeight
		c.mx += w * (x - c.mx)
		c.my += w * (y - c.my)
		c.mxx += w * (x*x - c.mxx)
		c.mxy += w * (x*y - c.mxy)
	}
	c.n++
}

// line is the fitted cost: seconds of a step of rows rows is
// fixed + perRow×rows. Until the rows have varied enough to tell the two
// apart, all of it is taken for per-row cost (the cautious guess: the
// shortest chunks).
func (c *stepCost) line() (fixed, perRow float64) {
	if c.n == 0 || c.mx <= 0 {
		return 0, 0
	}
	mean := c.my / c.mx
	v := c.mxx - c.mx*c.mx
	if c.n < 8 || v < 0.5 {
		return 0, mean
	}
	perRow = (c.mxy - c.mx*c.my) / v
	// Noise can tilt the line: a row costs at least a tenth of the mean.
	perRow = max(perRow, mean/10)
	fixed = max(c.my-perRow*c.mx, 0)
	return fixed, perRow
}

func (c *stepCost) chunk(decoding int) int {
	fixed, perRow := c.line()
	if perRow <= 0 {
		return 4 // until measured
	}
	n := int(PrefillSlack * (fixed + perRow*float64(decoding)) / perRow)
	return min(max(n, 1), engine.DefaultBatch)
}
