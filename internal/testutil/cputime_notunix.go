//go:build !unix

package testutil

import "time"

func processNow() time.Duration { return time.Since(wallStart) }
