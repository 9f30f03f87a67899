//go:build !amd64 || noasm

package quant

// Q4_0X16Kernel reports whether an interleave kernel runs: not on this
// build, where VecDotRowsQ4_0X16 runs the Go twin.
func Q4_0X16Kernel() bool { return false }

// q4x16Fast: no interleave kernel on this build; the Go twin runs.
func q4x16Fast([]byte, int, []byte, int, []float32) bool { return false }

// Q8_0X16Kernel reports whether a Q8_0 interleave kernel runs: not on
// this build.
func Q8_0X16Kernel() bool { return false }

// q8x16Fast: no interleave kernel on this build; the Go twin runs.
func q8x16Fast([]byte, int, []byte, int, []float32) bool { return false }
