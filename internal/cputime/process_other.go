//go:build !unix

package cputime

import "time"

func processClock() time.Duration { return time.Since(wallStart) }
