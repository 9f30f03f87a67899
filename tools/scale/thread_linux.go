package main

import (
	"syscall"
	"time"
)

// rusageThread is Linux's RUSAGE_THREAD: the calling thread alone.
const rusageThread = 1

// threadCPU is the CPU time the calling OS thread has used: with the
// window's goroutine locked to its thread, what a frame cost it, apart
// from the collector's workers and the waits for a core.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
