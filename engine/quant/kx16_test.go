package quant

import "testing"

// TestVecDotRowsQ4_KX16 repacks raw Q4_K rows (every quant, scale and
// min value, padded strides, partial groups of 16) and runs the
// interleave product at every level and through the Go twin: every
// result bit-identical to VecDot and the generic product of the original
// row; then unpacks the interleave back to the rows' bytes.
func TestVecDotRowsQ4_KX16(t *testing.T) {
	checkX16Product(t, q4_KX16Layout, 35, 16, []x16Case{
		{256, 1, 0, false}, {256, 16, 0, false}, {512, 5, 144, false}, {2304, 17, 0, false},
		{768, 33, 16, false}, {4096, 48, 0, false},
	})
}

// TestRepackQ4_KX16Errors checks the refusals of repack, product and
// unpack: widths that are not whole super-blocks, too little room, too
// few row or packed bytes, short activations and results.
func TestRepackQ4_KX16Errors(t *testing.T) { checkX16Errors(t, q4_KX16Layout) }
