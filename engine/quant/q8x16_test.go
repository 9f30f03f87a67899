package quant

import (
	"math/rand/v2"
	"testing"
)

// rawQ8_0Rows fills rows of Q8_0 blocks with random quants (−128 and 127
// included), d an ordinary half; extreme sets a third of the blocks'
// quants all −128 or all 127 and their d to fp16's largest finite,
// smallest normal, a subnormal or zero.
func rawQ8_0Rows(r *rand.Rand, rows, n int, extreme bool) []byte {
	b := make([]byte, 0, rows*n/32*q8_0Bytes)
	for range rows {
		b = append(b, rawQ8_0Row(r, n, false)...)
	}
	if extreme {
		setExtremeBlocks(r, b, q8_0Bytes, 0x80, 127)
	}
	return b
}

// TestVecDotRowsQ8_0X16 is TestVecDotRowsQ4_0X16 for Q8_0: repacked raw
// rows (every quant value, extremes, padded strides, partial groups,
// odd block counts), the product at every level (both avx2 kernels where
// the CPU has AVX-VNNI) and the Go twin bit-identical to VecDot and the
// generic product of the original row; the interleave unpacked back to
// the rows' bytes.
func TestVecDotRowsQ8_0X16(t *testing.T) {
	checkX16Product(t, q8_0X16Layout, 38, 50, q4x16Cases(Q8_0))
}

// TestQ8_0X16Padding checks that the rows past the last of a partial
// group and the d area's padding (odd block counts) are zero, as the
// layout says.
func TestQ8_0X16Padding(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 51))
	rows := rawQ8_0Rows(r, 5, 96, false)
	for i := range rows {
		rows[i] = rows[i]&^0x80 | 1 // neither 0 nor 0x80 (stored as 0)
	}
	checkQ4X16Padding(t, q8_0X16Layout, rows, 96, 5)
}

// TestRepackQ8_0X16Errors checks the refusals, as Q4_0's.
func TestRepackQ8_0X16Errors(t *testing.T) { checkX16Errors(t, q8_0X16Layout) }
