package cpu

import (
	"runtime"
	"sync"
)

// pool is a fixed set of worker goroutines that live as long as the
// backend, so a matrix product costs a few channel operations instead of
// spawning goroutines per call.
type pool struct {
	workers int
	jobs    chan job
	once    sync.Once
}

type job struct {
	fn     func(lo, hi int)
	lo, hi int
	wg     *sync.WaitGroup
}

func newPool(workers int) *pool {
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	p := &pool{workers: workers, jobs: make(chan job, workers*4)}
	// The calling goroutine takes a share of every loop, so n-1 helpers.
	for range workers - 1 {
		go func() {
			for j := range p.jobs {
				j.fn(j.lo, j.hi)
				j.wg.Done()
			}
		}()
	}
	return p
}

// parallelFor calls fn over [0,n) split into contiguous chunks, at least
// grain items each, and returns when all are done.
func (p *pool) parallelFor(n, grain int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	if grain < 1 {
		grain = 1
	}
	chunks := min(p.workers, (n+grain-1)/grain)
	if chunks <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + chunks - 1) / chunks
	wg.Add(chunks - 1)
	for c := 1; c < chunks; c++ {
		lo := c * step
		hi := min(n, lo+step)
		if lo >= hi {
			wg.Done()
			continue
		}
		p.jobs <- job{fn: fn, lo: lo, hi: hi, wg: &wg}
	}
	fn(0, min(n, step))
	wg.Wait()
}

func (p *pool) close() {
	p.once.Do(func() { close(p.jobs) })
}
