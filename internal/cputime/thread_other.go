//go:build !linux

package cputime

import "time"

func threadClock() time.Duration { return time.Since(wallStart) }
