//go:build !linux

package cputime

import "time"

// Thread is not measured here.
func Thread() time.Duration { return 0 }
