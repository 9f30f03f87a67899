//go:build linux || windows

package cuda

import (
	"runtime"
	"sync"
)

// executor runs every driver call of one context on one goroutine locked
// to its OS thread: the current context is a property of the thread, and
// goroutines move between threads. It is shared by the devices of that
// context.
type executor struct {
	jobs chan job
	once sync.Once
}

type job struct {
	f    func()
	done chan struct{}
}

var donePool = sync.Pool{New: func() any { return make(chan struct{}, 1) }}

func newExecutor() *executor {
	e := &executor{jobs: make(chan job)}
	go e.loop()
	return e
}

func (e *executor) loop() {
	runtime.LockOSThread()
	for j := range e.jobs {
		j.f()
		j.done <- struct{}{}
	}
	// Unlock rather than let the thread end with the goroutine: ending a
	// thread that holds the driver's thread-local state can crash some
	// drivers.
	runtime.UnlockOSThread()
}

// do runs f on the executor's thread and returns when it has.
func (e *executor) do(f func()) {
	done := donePool.Get().(chan struct{})
	e.jobs <- job{f: f, done: done}
	<-done
	donePool.Put(done)
}

// stop ends the executor once its last job has run.
func (e *executor) stop() { e.once.Do(func() { close(e.jobs) }) }
