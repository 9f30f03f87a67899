package session

import (
	"context"
	"sync"
	"time"

	api "github.com/churon/churon/app/api/session"
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
// times as long, so that a long prompt does not double the others' time
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
	// Bursts in hand from the start: the first prompts to arrive while
	// others decode are served at once.
	b.cost.credit = BurstCap
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
	if err := b.queue(func() { b.joining = append(b.joining, r) }); err != nil {
		return nil, err
	}
	return r, nil
}

// queue runs add under the batch's lock, unless the batch is closed, and
// then wakes its loop.
func (b *Batch) queue(add func()) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return api.ErrClosed
	}
	add()
	b.mu.Unlock()
	b.poke()
	return nil
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
	if err := b.queue(func() { b.pauses = append(b.pauses, p) }); err != nil {
		return nil, err
	}
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
	var waiting []int
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
		live, waiting = live[:0], waiting[:0]
		decoding, prefills := 0, 0
		for _, r := range b.runs {
			live = append(live, r.stream)
			if r.stream.Decoding() {
				decoding++
			} else {
				prefills++
			}
			if left := r.stream.PromptLeft(); left > 0 {
				waiting = append(waiting, left)
			}
		}
		before := 0
		for _, left := range waiting {
			before += left
		}
		goal := b.chunk(decoding, before, waiting)
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
// answers decode, waiting prompt tokens wanting it, prompts the prompt
// tokens each waiting answer has left in the order Step feeds them (0: a
// whole pass, when none decodes).
func (b *Batch) chunk(decoding, waiting int, prompts []int) int {
	if decoding == 0 {
		return 0
	}
	if b.opt.Prefill > 0 {
		return b.opt.Prefill
	}
	if n := b.cost.short(decoding, prompts); n > 0 {
		return n
	}
	return b.cost.chunk(decoding, waiting)
}

// stepCost learns what a step that decodes costs, by the rows it runs
// (decode rows and prompt tokens together): a moving average of the
// seconds of the steps of each size. It sizes the prefill chunk as the
// most prompt tokens whose step was measured within PrefillSlack of the
// decode step alone, trying a little more now and then (a step of a new
// size is measured once it runs). A table, not a formula: the cost is no
// line — where decoding is bound by memory bandwidth a step's fixed part
// (reading the weights) dominates and chunks are long; where the CPU is
// the limit (a loaded machine) a prompt token costs about a decode row
// and chunks shrink to a token or two; and a pass of 16 rows or more may
// run on other kernels, cheaper a row, than one of 15.
type stepCost struct {
	secs  [maxStepRows + 1]float64 // moving average by the step's rows; 0: never seen
	steps int
	// credit earns BurstShare a decode step, up to BurstCap bursts: a
	// step that may take up to BurstSlack times a decode step (or feed
	// short prompts whole, see short), so that prompts arriving together
	// start at once instead of a token or two a step (on a loaded CPU),
	// while the others' time between tokens stays within PrefillSlack 98
	// times in 100 (their p95 untouched).
	credit float64
	// sinceLong counts the decode steps since the last burst of
	// BurstSlack for a long prompt: those come one in longBurstEvery at
	// most, whatever the credit (the bursts in hand are for short prompts
	// arriving together).
	sinceLong int
}

// longBurstEvery: a long prompt's bursts are at least this many decode
// steps apart (1/BurstShare).
const longBurstEvery = 50

// A burst: at most one step in 50 over time (so that the others'
// inter-token p95 keeps PrefillSlack), at most four times a decode step,
// or the whole of short prompts up to BurstTokens. A Batch starts with
// BurstCap bursts in hand and keeps at most that many: a few requests
// arriving together after a quiet spell each start at once (a level of
// the load benchmark: eight clients' prompts, while the first decodes).
const (
	BurstShare  = 1.0 / 50
	BurstSlack  = 4.0
	BurstCap    = 3.0
	BurstTokens = 2 * engine.DefaultBatch
)

// maxStepRows bounds the steps measured: a pass of prompt tokens beside
// the most answers at once.
const maxStepRows = engine.DefaultBatch + MaxAnswersLimit

// costWeight is the weight of the newest step in a size's average.
const costWeight = 0.25

// exploreEvery: every this many chunks, one tries twice the best size
// known, so that a size once measured in a busy second is measured again
// and a cheaper regime past a dear one is found.
const exploreEvery = 32

func (c *stepCost) observe(decoding, fed int, took time.Duration) {
	n := decoding + fed
	if decoding == 0 || n > maxStepRows {
		return // a prefill-only pass: nobody waits for its tokens between
	}
	c.secs[n] = ewma(c.secs[n], took.Seconds())
	c.credit = min(c.credit+BurstShare, BurstCap)
	c.sinceLong++
}

// short is the chunk of a burst that feeds waiting prompts whole, the
// earliest first, up to BurstTokens: prompts, each one's tokens left in
// the order Step feeds them, beside d decoding answers. A prompt that
// fits starts its answer this step rather than a chunk a step, for one
// slower step of the others (one in 50 over time, at most BurstCap in a
// row); 0 when no burst is in hand, the first prompt is long (chunked as
// usual, bursts of BurstSlack included), or a normal step takes it all.
func (c *stepCost) short(d int, prompts []int) int {
	if c.credit < 1 || len(prompts) == 0 {
		return 0
	}
	n := 0
	for _, p := range prompts {
		if n+p > BurstTokens {
			break
		}
		n += p
	}
	if n == 0 {
		return 0
	}
	d = min(d, maxStepRows-1)
	if base := c.base(d); base > 0 && n <= c.best(d, min(engine.DefaultBatch, maxStepRows-d), (1+PrefillSlack)*base) {
		return 0
	}
	c.credit--
	return n
}

// base is what a step of d decode rows costs: measured, else the least
// of the larger steps measured (a step costs no more than a larger one).
func (c *stepCost) base(d int) float64 {
	if t := c.secs[d]; t > 0 {
		return t
	}
	for n := d + 1; n <= maxStepRows; n++ {
		if t := c.secs[n]; t > 0 {
			return t
		}
	}
	return 0
}

func (c *stepCost) chunk(d, waiting int) int {
	d = min(d, maxStepRows-1)
	base := c.base(d)
	if base == 0 {
		return 4 // until measured
	}
	c.steps++
	room := min(engine.DefaultBatch, maxStepRows-d)
	n := c.normal(d, base, room)
	if waiting > n && c.credit >= 1 && c.sinceLong >= longBurstEvery {
		if b := c.burst(d, base, room); b > n {
			c.credit--
			c.sinceLong = 0
			return b
		}
	}
	return n
}

// best is the most prompt tokens beside d decode rows whose step was
// measured within limit.
func (c *stepCost) best(d, room int, limit float64) int {
	best := 0
	for k := 1; k <= room; k++ {
		if t := c.secs[d+k]; t > 0 && t <= limit {
			best = k
		}
	}
	return best
}

// burst is the chunk of a burst step: the most measured within
// BurstSlack, or what the dearest step measured so far says a token
// costs, whichever is more.
func (c *stepCost) burst(d int, base float64, room int) int {
	limit := BurstSlack * base
	best := c.best(d, room, limit)
	for k := room; k > 0; k-- {
		if t := c.secs[d+k]; t > base {
			perTok := (t - base) / float64(k)
			best = max(best, min(int((limit-base)/perTok), room))
			break
		}
	}
	return best
}

// normal is the chunk of a step within PrefillSlack, or a little more to
// measure a size not seen yet.
func (c *stepCost) normal(d int, base float64, room int) int {
	limit := (1 + PrefillSlack) * base
	best := c.best(d, room, limit)
	if c.steps%exploreEvery == 0 {
		return max(min(2*best+1, room), 1)
	}
	// A quarter more if it is not known to be too dear, else one more,
	// else stay.
	for _, try := range []int{best + max(1, best/4), best + 1} {
		if try <= room && c.secs[d+try] <= limit { // 0: not measured yet
			return try
		}
	}
	return max(best, 1)
}

func ewma(avg, x float64) float64 {
	if avg == 0 {
		return x
	}
	return avg + costWeight*(x-avg)
}
