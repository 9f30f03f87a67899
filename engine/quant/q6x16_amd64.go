//go:build amd64 && !noasm

package quant

import "golang.org/x/sys/cpu"

// q6x16VNNI selects the avx2 level's AVX-VNNI kernel (tests flip it to
// run the other one too).
var q6x16VNNI = cpu.X86.HasAVXVNNI

// q6x16Fast runs the interleave kernel (q6x16_amd64.s) of the avx512 or
// avx2 level, through kx16FastRun as Q4_K's does.
func q6x16Fast(packed []byte, nRows int, act []byte, nsb int, out []float32) bool {
	return useAVX2 && kx16FastRun(true, packed, nRows, act, nsb, out)
}

//go:noescape
func q6x16AVX512(packed *byte, ngroups int, x *byte, nsb int, out *float32)

//go:noescape
func q6x16AVX2(packed *byte, ngroups int, x *byte, nsb int, out *float32)

//go:noescape
func q6x16AVXVNNI(packed *byte, ngroups int, x *byte, nsb int, out *float32)
