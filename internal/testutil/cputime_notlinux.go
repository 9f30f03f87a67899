//go:build !linux

package testutil

import "time"

func threadNow() time.Duration { return time.Since(wallStart) }
