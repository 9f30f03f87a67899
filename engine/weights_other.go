//go:build !linux

package engine

// weightBuffer returns size bytes of zeroed memory for weights read into
// memory, on the Go heap (no release needed).
func weightBuffer(size int) ([]byte, func() error) { return make([]byte, size), nil }
