//go:build !unix

package gguf

import (
	"errors"
	"os"
)

// mapFile is not implemented here: Open reads the file into memory instead.
func mapFile(fd *os.File, size int) ([]byte, func() error, error) {
	return nil, nil, errors.New("mmap not supported on this platform")
}
