//go:build !amd64 || noasm

package quant

// KX16Kernel reports whether an interleave kernel runs: none on this
// build, where VecDotRowsQ4_KX16 runs the Go twin.
func KX16Kernel() bool { return false }

// kx16Fast: no interleave kernel on this build; the Go twin runs.
func kx16Fast([]byte, int, []byte, int, []float32) bool { return false }
