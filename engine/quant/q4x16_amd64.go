//go:build amd64 && !noasm

package quant

// Q4_0X16Kernel reports whether an interleave kernel (VecDotRowsQ4_0X16)
// runs at the current level: none yet, the Go twin runs.
func Q4_0X16Kernel() bool { return false }

func q4x16Fast([]byte, int, []byte, int, []float32) bool { return false }

// q4x16VNNI selects the avx2 level's AVX-VNNI kernel, once there is one.
var q4x16VNNI = false
