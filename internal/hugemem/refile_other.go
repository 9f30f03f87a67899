//go:build !linux

package hugemem

import "os"

// AllocFile is Alloc where pages cannot be given back to a file.
func AllocFile(_ *os.File, size int) ([]byte, func() error) { return Alloc(size) }

// Refile gives nothing back on this system.
func Refile([]byte) bool { return false }
