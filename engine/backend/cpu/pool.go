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
// park on a channel when the model is idle. Jobs are claimed in chunks
// from an atomic counter and the caller waits only for claimed jobs to
// complete, never for a worker to show up: on a machine shared with other
// programs a worker's thread may not run for milliseconds, and the caller
// then simply does all the jobs itself.
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

// loop describes one parallel loop. t, n and chunk are written only while
// the caller holds the sole reference (refs == 1, epoch 0).
type loop struct {
	epoch    atomic.Uint64 // 0 while being rewritten
	refs     atomic.Int32  // the caller's one, plus workers inside
	next     atomic.Int64  // next job to claim
	finished atomic.Int64  // jobs completed
	t        task
	n, chunk int
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

// runJobs claims and runs chunks until none are left.
func (l *loop) runJobs(w int) {
	t, n, c := l.t, l.n, l.chunk
	for {
		lo := int(l.next.Add(int64(c))) - c
		if lo >= n {
			return
		}
		hi := min(n, lo+c)
		t.run(w, lo, hi)
		l.finished.Add(int64(hi - lo))
	}
}

// parallel runs t over jobs [0, n), chunk jobs per claim, on all workers
// including the caller, and returns when every job is done. Loops from
// different goroutines are serialised.
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
	for i := 0; l.refs.Load() != 1; i++ {
		// A worker that arrived late is still inside: wait for it to leave.
		if i%64 == 63 {
			runtime.Gosched()
		}
	}
	l.t, l.n, l.chunk = t, n, chunk
	l.next.Store(0)
	l.finished.Store(0)
	l.epoch.Store(e)
	p.cur.Store(l)
	p.epoch.Store(e)
	for w := 1; w < p.workers; w++ {
		if p.sleeping[w].CompareAndSwap(true, false) {
			p.wake[w] <- struct{}{}
		}
	}
	l.runJobs(0)
	for i := 0; l.finished.Load() != int64(n); i++ {
		if i%4096 == 4095 {
			runtime.Gosched()
		}
	}
	p.mu.Unlock()
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
