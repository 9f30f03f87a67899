package testutil

import (
	"runtime"
	"time"
)

// Tests that bound how long something takes measure CPU time, not the
// wall clock: on a loaded machine (CI shares its cores) a long call is
// preempted many times and a short one often not at all, which skews a
// wall-clock figure, or a ratio of two, far beyond any slack. CPU time
// counts the work only. Where the system gives no CPU clock (ThreadCPU
// off Linux, ProcessCPU off Unix) they fall back to the wall clock.

// ThreadCPU is the CPU time f took on the calling goroutine's thread
// (which f runs on throughout): work that f hands to other goroutines is
// not counted, the runtime's garbage-collection assists on its behalf are.
func ThreadCPU(f func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadNow()
	f()
	return threadNow() - start
}

// ProcessCPU is the CPU time, user and system, the whole process has
// used so far: the difference of two readings is what every goroutine
// and the runtime did between them.
func ProcessCPU() time.Duration { return processNow() }

// wallStart anchors the wall-clock fallbacks.
var wallStart = time.Now()
