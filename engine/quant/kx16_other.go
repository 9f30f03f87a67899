//go:build !amd64 || noasm

package quant

// kx16Fast: no interleave kernel on this build; the Go twin runs.
func kx16Fast([]byte, int, []byte, int, []float32) bool { return false }
