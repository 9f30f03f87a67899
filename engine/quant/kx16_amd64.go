//go:build amd64 && !noasm

package quant

import "golang.org/x/sys/cpu"

// kx16VNNI selects the AVX-VNNI interleave kernel at the avx2 level
// (Alder Lake and later, Zen 5): VEX VPDPBUSD, where the others have only
// VPMADDUBSW. A variable so that tests can run the VPMADDUBSW kernel on a
// machine that has both.
var kx16VNNI = cpu.X86.HasAVXVNNI

// KX16Kernel reports whether an interleave kernel (VecDotRowsQ4_KX16)
// runs at the current level; where none does, VecDotRowsQ4_KX16 runs the
// Go twin, and the file's layout (VecDotRows' kernels) is faster.
func KX16Kernel() bool { return useAVX2 } // useAVX512 implies useAVX2

// kx16Fast runs the Q4_K interleave kernel of the current level.
func kx16Fast(packed []byte, nRows int, act []byte, nsb int, out []float32) bool {
	return KX16Kernel() && kx16FastRun(false, packed, nRows, act, nsb, out)
}

// kx16FastRun runs the level's Q4_K (q6 false) or Q6_K interleave
// kernel, which share their calling convention and group shape: the
// whole groups straight into out, a last partial group through a scratch
// of 16 results.
func kx16FastRun(q6 bool, packed []byte, nRows int, act []byte, nsb int, out []float32) bool {
	block := kx16Block
	if q6 {
		block = q6x16Block
	}
	full := nRows / kx16Rows
	if full > 0 {
		kx16Run(q6, &packed[0], full, &act[0], nsb, &out[0])
	}
	if rest := nRows - full*kx16Rows; rest > 0 {
		var tmp [kx16Rows]float32
		kx16Run(q6, &packed[full*nsb*block], 1, &act[0], nsb, &tmp[0])
		copy(out[full*kx16Rows:nRows], tmp[:rest])
	}
	return true
}

// kx16Run calls the level's kernel on ngroups whole groups. (Direct
// calls, not a function value, keep out from escaping.)
func kx16Run(q6 bool, packed *byte, ngroups int, x *byte, nsb int, out *float32) {
	switch {
	case q6 && useAVX512:
		q6x16AVX512(packed, ngroups, x, nsb, out)
	case q6 && q6x16VNNI:
		q6x16AVXVNNI(packed, ngroups, x, nsb, out)
	case q6:
		q6x16AVX2(packed, ngroups, x, nsb, out)
	case useAVX512:
		kx16Q4_KAVX512(packed, ngroups, x, nsb, out)
	case kx16VNNI:
		kx16Q4_KVNNI(packed, ngroups, x, nsb, out)
	default:
		kx16Q4_KAVX2(packed, ngroups, x, nsb, out)
	}
}

// The interleave kernels: kx16_amd64.s (avx512), kx16avx2_amd64.s.

//go:noescape
func kx16Q4_KAVX512(packed *byte, ngroups int, x *byte, nsb int, out *float32)

//go:noescape
func kx16Q4_KVNNI(packed *byte, ngroups int, x *byte, nsb int, out *float32)

//go:noescape
func kx16Q4_KAVX2(packed *byte, ngroups int, x *byte, nsb int, out *float32)
