//go:build amd64 && !noasm

package quant

// q6x16Fast runs the interleave kernel (q6x16_amd64.s) at the avx512
// level: the whole groups straight into out, a last partial group
// through a scratch of 16 results.
func q6x16Fast(packed []byte, nRows int, act []byte, nsb int, out []float32) bool {
	if !useAVX512 {
		return false
	}
	full := nRows / q6x16Rows
	if full > 0 {
		q6x16AVX512(&packed[0], full, &act[0], nsb, &out[0])
	}
	if rest := nRows - full*q6x16Rows; rest > 0 {
		var tmp [q6x16Rows]float32
		q6x16AVX512(&packed[full*nsb*q6x16Block], 1, &act[0], nsb, &tmp[0])
		copy(out[full*q6x16Rows:nRows], tmp[:rest])
	}
	return true
}

//go:noescape
func q6x16AVX512(packed *byte, ngroups int, x *byte, nsb int, out *float32)
