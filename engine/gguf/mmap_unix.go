//go:build unix

package gguf

import (
	"os"
	"syscall"
)

// mapFile maps size bytes of fd read-only and shared, so that pages come
// from the page cache and several processes share one copy of the weights.
func mapFile(fd *os.File, size int) ([]byte, func() error, error) {
	b, err := syscall.Mmap(int(fd.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return syscall.Munmap(b) }, nil
}
