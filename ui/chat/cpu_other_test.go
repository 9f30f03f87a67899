//go:build !unix

package chat

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }
