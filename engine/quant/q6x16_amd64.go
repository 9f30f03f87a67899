//go:build amd64 && !noasm

package quant

import "golang.org/x/sys/cpu"

// q6x16VNNI selects the avx2 level's AVX-VNNI kernel (tests flip it to
// run the other one too).
var q6x16VNNI = cpu.X86.HasAVXVNNI

// q6x16Fast runs the interleave kernel (q6x16_amd64.s) of the avx512 or
// avx2 level: the whole groups straight into out, a last partial group
// through a scratch of 16 results.
func q6x16Fast(packed []byte, nRows int, act []byte, nsb int, out []float32) bool {
	if !useAVX2 {
		return false
	}
	full := nRows / q6x16Rows
	if full > 0 {
		q6x16Groups(&packed[0], full, &act[0], nsb, &out[0])
	}
	if rest := nRows - full*q6x16Rows; rest > 0 {
		var tmp [q6x16Rows]float32
		q6x16Groups(&packed[full*nsb*q6x16Block], 1, &act[0], nsb, &tmp[0])
		copy(out[full*q6x16Rows:nRows], tmp[:rest])
	}
	return true
}

// q6x16Groups runs the level's kernel over ngroups whole groups (direct
// calls: through a function value the scratch above would escape).
func q6x16Groups(packed *byte, ngroups int, x *byte, nsb int, out *float32) {
	switch {
	case useAVX512:
		q6x16AVX512(packed, ngroups, x, nsb, out)
	case q6x16VNNI:
		q6x16AVXVNNI(packed, ngroups, x, nsb, out)
	default:
		q6x16AVX2(packed, ngroups, x, nsb, out)
	}
}

//go:noescape
func q6x16AVX512(packed *byte, ngroups int, x *byte, nsb int, out *float32)

//go:noescape
func q6x16AVX2(packed *byte, ngroups int, x *byte, nsb int, out *float32)

//go:noescape
func q6x16AVXVNNI(packed *byte, ngroups int, x *byte, nsb int, out *float32)
