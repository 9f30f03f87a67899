package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// task is one parallel loop: run does jobs [lo, hi) on behalf of worker w
// (0 is the calling goroutine), so per-worker scratch needs no locking.
// Tasks are long-lived values owned by the backend: passing a pointer in
// an interface does not allocate, where a fresh closure per call would.
type task interface {
	run(w, lo, hi int)
}

// pool is a fixed set of worker goroutines that live as long as the
// backend.
//
// A loop is published as a descriptor; workers spin on the epoch counter
// for a short while (a decode step starts a new loop every few tens of
// microseconds, and waking a parked thread costs about that much) and
// park on a channel when the model is idle.
//
// Each worker owns a contiguous share of a loop's jobs and claims chunks
// from its front; one that runs out takes chunks from the back of the
// others' shares. So in a decode step each core reads one run of weight
// rows per product, which its prefetchers follow from job to job (claims
// from one shared counter interleave the cores' jobs and break every
// core's stream at every job), and a claim touches only the claimer's own
// cache line (between the two cores of the EPYC this was measured on, a
// line's round trip takes 335 ns). The caller waits only for claimed jobs
// to complete, never for a worker to show up: on a machine shared with
// other programs a worker's thread may not run for milliseconds, and the
// caller then takes its whole share.
//
// A worker that arrives late may still hold a descriptor the caller has
// moved past, so descriptors are reference-counted and reused only once
// no late worker holds them: the caller invalidates a descriptor's epoch
// before checking its count, and a worker checks the epoch after taking
// its reference, so one of the two always sees the other.
type pool struct {
	workers int // including the calling goroutine

	mu    sync.Mutex // one loop at a time
	epoch atomic.Uint64
	cur   atomic.Pointer[loop]
	ring  [4]loop
	quit  atomic.Bool

	sleeping []atomic.Bool
	wake     []chan struct{}
	done     sync.WaitGroup
}

// loop describes one parallel loop. t, n, chunk and the shares are
// written only while the caller holds the sole reference (refs == 1,
// epoch 0).
type loop struct {
	epoch  atomic.Uint64 // 0 while being rewritten
	refs   atomic.Int32  // the caller's one, plus workers inside
	t      task
	n      int
	chunk  int
	shares []share // one per worker
}

// share is one worker's part of a loop's jobs, alone on its cache lines
// so that its owner's claims and counts do not contend with the others'.
type share struct {
	// span packs the jobs not yet claimed, [lo, hi): lo in the low 32
	// bits, hi in the high. The owner claims from lo, others from hi.
	span atomic.Uint64
	// done counts the jobs this worker completed, of any share.
	done atomic.Int64
	_    [cacheLine - 16]byte
}

// cacheLine is the span shares are padded to: two lines, as the adjacent
// line prefetcher of x86 cores pulls pairs.
const cacheLine = 128

func packSpan(lo, hi int) uint64 { return uint64(hi)<<32 | uint64(uint32(lo)) }

func unpackSpan(s uint64) (lo, hi int) { return int(uint32(s)), int(s >> 32) }

// claimFront takes up to c jobs from the front of the share.
func (sh *share) claimFront(c int) (lo, hi int, ok bool) {
	for {
		s := sh.span.Load()
		lo, end := unpackSpan(s)
		if lo >= end {
			return 0, 0, false
		}
		hi := min(end, lo+c)
		if sh.span.CompareAndSwap(s, packSpan(hi, end)) {
			return lo, hi, true
		}
	}
}

// claimBack takes up to c jobs from the back of the share.
func (sh *share) claimBack(c int) (lo, hi int, ok bool) {
	for {
		s := sh.span.Load()
		start, hi := unpackSpan(s)
		if start >= hi {
			return 0, 0, false
		}
		lo := max(start, hi-c)
		if sh.span.CompareAndSwap(s, packSpan(start, lo)) {
			return lo, hi, true
		}
	}
}

// spinFor is how long an idle worker polls for the next loop before it
// parks.
const spinFor = 200 * time.Microsecond

func newPool(workers int) *pool {
	if workers <= 0 {
		workers = DefaultThreads()
	}
	p := &pool{workers: workers}
	for i := range p.ring {
		p.ring[i].refs.Store(1)
		p.ring[i].shares = make([]share, workers)
	}
	p.sleeping = make([]atomic.Bool, workers)
	p.wake = make([]chan struct{}, workers)
	for w := 1; w < workers; w++ {
		p.wake[w] = make(chan struct{}, 1)
		p.done.Add(1)
		go p.worker(w)
	}
	return p
}

func (p *pool) worker(w int) {
	defer p.done.Done()
	var seen uint64
	for {
		e := p.waitEpoch(w, seen)
		if p.quit.Load() {
			return
		}
		seen = e
		l := p.cur.Load()
		if l == nil {
			continue
		}
		l.refs.Add(1)
		if l.epoch.Load() == e {
			l.runJobs(w)
		}
		l.refs.Add(-1)
	}
}

// waitEpoch returns once the epoch moves past seen: first spinning, then
// parked until parallel wakes it.
func (p *pool) waitEpoch(w int, seen uint64) uint64 {
	deadline := time.Now().Add(spinFor)
	for i := 0; ; i++ {
		if e := p.epoch.Load(); e != seen || p.quit.Load() {
			return e
		}
		// Checking the clock and yielding cost far more than a load of
		// the epoch, so do them rarely. (Gosched takes the scheduler lock.)
		if i%1024 == 1023 {
			if time.Now().After(deadline) {
				break
			}
			if i%16384 == 16383 {
				runtime.Gosched()
			}
		}
	}
	for {
		p.sleeping[w].Store(true)
		if e := p.epoch.Load(); e != seen || p.quit.Load() {
			if p.sleeping[w].CompareAndSwap(true, false) {
				return e
			}
			// A waker claimed us and is sending: take its token.
			<-p.wake[w]
			return p.epoch.Load()
		}
		<-p.wake[w]
		if e := p.epoch.Load(); e != seen || p.quit.Load() {
			return e
		}
	}
}

// runJobs runs worker w's share, then what is left of the others', from
// their backs, until no job is unclaimed.
// It returns the number of jobs it ran.
func (l *loop) runJobs(w int) int {
	t, c, k := l.t, l.chunk, len(l.shares)
	own := &l.shares[w]
	ran := 0
	for {
		lo, hi, ok := own.claimFront(c)
		if !ok {
			break
		}
		t.run(w, lo, hi)
		own.done.Add(int64(hi - lo))
		ran += hi - lo
	}
	for i := 1; i < k; i++ {
		victim := &l.shares[(w+i)%k]
		for {
			lo, hi, ok := victim.claimBack(c)
			if !ok {
				break
			}
			t.run(w, lo, hi)
			own.done.Add(int64(hi - lo))
			ran += hi - lo
		}
	}
	return ran
}

// finished reports whether all n jobs are done.
func (l *loop) finished() bool {
	done := int64(0)
	for i := range l.shares {
		done += l.shares[i].done.Load()
	}
	return done == int64(l.n)
}

// parallel runs t over jobs [0, n), chunk jobs per claim, on all workers
// including the caller, and returns when every job is done. Loops from
// different goroutines are serialised. n must fit 31 bits.
func (p *pool) parallel(t task, n, chunk int) {
	if n <= 0 {
		return
	}
	chunk = max(1, chunk)
	if p.workers == 1 || n <= chunk {
		t.run(0, 0, n)
		return
	}
	p.mu.Lock()
	e := p.epoch.Load() + 1
	l := &p.ring[e%uint64(len(p.ring))]
	l.epoch.Store(0)
	late := newPatience(minPatience)
	for l.refs.Load() != 1 {
		// A worker that arrived late is still inside: wait for it to leave.
		late.wait()
	}
	l.t, l.n, l.chunk = t, n, chunk
	for w := range l.shares {
		// Whole chunks, so the claims of one share never straddle two.
		lo, hi := shareOf(w, p.workers, n, chunk)
		l.shares[w].span.Store(packSpan(lo, hi))
		l.shares[w].done.Store(0)
	}
	l.epoch.Store(e)
	p.cur.Store(l)
	p.epoch.Store(e)
	for w := 1; w < p.workers; w++ {
		if p.sleeping[w].CompareAndSwap(true, false) {
			p.wake[w] <- struct{}{}
		}
	}
	start := time.Now()
	ran := l.runJobs(0)
	// What is left is at most a job a worker is running, which should end
	// within one of the caller's own jobs' time.
	claimed := newPatience(time.Since(start) / time.Duration(max(1, ran)))
	for !l.finished() {
		claimed.wait()
	}
	p.mu.Unlock()
}

// shareOf is worker w's share of n jobs among workers: contiguous, whole
// chunks of them, the shares' sizes differing by at most a chunk.
func shareOf(w, workers, n, chunk int) (lo, hi int) {
	chunks := (n + chunk - 1) / chunk
	lo = min(n, chunks*w/workers*chunk)
	hi = min(n, chunks*(w+1)/workers*chunk)
	return lo, hi
}

// patience is the caller's spin-wait for workers inside a loop. The jobs
// it waits for are running on a worker (claimed, or a late worker leaving
// a descriptor), so they should end within about a job's time: spinning
// that long is cheaper than yielding where the caller is locked to its OS
// thread, as the churon binary's main goroutine is (Fyne locks it), since
// Gosched then hands the P to another thread and back, two futex wakes and
// thread switches. A wait that outlasts that time means the worker is not
// running: its thread descheduled on a loaded machine, maybe onto this
// core, or its goroutine without a P (the collector, GOMAXPROCS below the
// workers). Then the caller yields, which for a locked thread also gives
// its core to the kernel's scheduler, every 1024 turns.
type patience struct {
	turns    int
	budget   time.Duration
	deadline time.Time
}

// minPatience is the least a caller spins before yielding: a few cache
// line round trips between cores, and the clock's resolution.
const minPatience = 5 * time.Microsecond

func newPatience(budget time.Duration) patience {
	return patience{budget: max(budget, minPatience)}
}

// wait is one turn of the spin; the clock, dearer than the load being
// waited on, is read every 1024 turns.
func (pa *patience) wait() {
	pa.turns++
	if pa.turns%1024 != 0 {
		return
	}
	now := time.Now()
	switch {
	case pa.deadline.IsZero():
		pa.deadline = now.Add(pa.budget)
	case now.After(pa.deadline):
		runtime.Gosched()
	}
}

func (p *pool) close() {
	if p.quit.Swap(true) {
		return
	}
	for w := 1; w < p.workers; w++ {
		if p.sleeping[w].CompareAndSwap(true, false) {
			p.wake[w] <- struct{}{}
		}
	}
	p.done.Wait()
}
