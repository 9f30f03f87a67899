//go:build !windows

package quantize

import (
	"errors"
	"syscall"
)

// isDiskFull reports whether err says the file system is full (or the
// user's quota is spent).
func isDiskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
