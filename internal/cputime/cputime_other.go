//go:build !unix

package cputime

import "time"

// Process is not measured here.
func Process() time.Duration { return 0 }
