//go:build windows

package quantize

import (
	"errors"
	"syscall"
)

// Windows' codes for a full disk: ERROR_HANDLE_DISK_FULL and
// ERROR_DISK_FULL.
const (
	errorHandleDiskFull syscall.Errno = 39
	errorDiskFull       syscall.Errno = 112
)

// isDiskFull reports whether err says the disk is full.
func isDiskFull(err error) bool {
	return errors.Is(err, errorDiskFull) || errors.Is(err, errorHandleDiskFull) || errors.Is(err, syscall.ENOSPC)
}
