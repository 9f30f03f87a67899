package cputime

import "time"

// rusageThread is Linux's RUSAGE_THREAD: the calling thread alone.
const rusageThread = 1

// Thread is the CPU time the calling OS thread has used: with a
// goroutine locked to its thread, what its work cost, apart from the
// collector's workers and the waits for a core.
func Thread() time.Duration { return usage(rusageThread) }
