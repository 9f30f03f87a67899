// Package cputime reads the CPU time the process, a thread, or one call
// has used. Benchmarks and tests that bound how long something takes
// measure CPU time, not the wall clock: on a loaded machine (CI and the
// development machines share their cores) a long call is preempted many
// times and a short one often not at all, which skews a wall-clock
// figure, or a ratio of two, far beyond any slack. CPU time counts the
// work only. Where the system gives no CPU clock (Thread off Linux,
// Process off Unix) they fall back to the wall clock.
package cputime

import (
	"runtime"
	"time"
)

// Process is the CPU time, user and system, the whole process has used
// so far: the difference of two readings is what every goroutine and the
// runtime did between them.
func Process() time.Duration { return processClock() }

// Thread is the CPU time the calling OS thread has used so far: with a
// goroutine locked to its thread, the difference of two readings is
// what its work cost, apart from the collector's workers and the waits
// for a core.
func Thread() time.Duration { return threadClock() }

// Of is the CPU time f took on the calling goroutine's thread (which f
// runs on throughout): work that f hands to other goroutines is not
// counted, the runtime's garbage-collection assists on its behalf are.
func Of(f func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadClock()
	f()
	return threadClock() - start
}

// wallStart anchors the wall-clock fallbacks.
var wallStart = time.Now()
