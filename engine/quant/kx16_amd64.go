//go:build amd64 && !noasm

package quant

// kx16Fast runs the interleave kernel (kx16_amd64.s) at the avx512
// level: the whole groups straight into out, a last partial group
// through a scratch of 16 results.
func kx16Fast(packed []byte, nRows int, act []byte, nsb int, out []float32) bool {
	if !useAVX512 {
		return false
	}
	full := nRows / kx16Rows
	if full > 0 {
		kx16Q4_KAVX512(&packed[0], full, &act[0], nsb, &out[0])
	}
	if rest := nRows - full*kx16Rows; rest > 0 {
		var tmp [kx16Rows]float32
		kx16Q4_KAVX512(&packed[full*nsb*kx16Block], 1, &act[0], nsb, &tmp[0])
		copy(out[full*kx16Rows:nRows], tmp[:rest])
	}
	return true
}

//go:noescape
func kx16Q4_KAVX512(packed *byte, ngroups int, x *byte, nsb int, out *float32)
