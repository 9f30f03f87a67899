//go:build !amd64 || noasm

package quant

// q6x16Fast: no interleave kernel on this build; the Go twin runs.
func q6x16Fast([]byte, int, []byte, int, []float32) bool { return false }
