//go:build !unix

package main

import "time"

// cpuTime is not measured here: the per-CPU figures stay 0.
func cpuTime() time.Duration { return 0 }
