//go:build amd64 && !noasm

package quant

import "golang.org/x/sys/cpu"

// q4x16VNNI selects the avx2 level's AVX-VNNI kernel (tests flip it to
// run the VPMADDUBSW one too).
var q4x16VNNI = cpu.X86.HasAVXVNNI

// Q4_0X16Kernel reports whether an interleave kernel (VecDotRowsQ4_0X16)
// runs at the current level; where none does, VecDotRowsQ4_0X16 runs the
// Go twin, and the file's layout (VecDotRows' kernels) is faster.
func Q4_0X16Kernel() bool { return useAVX2 } // useAVX512 implies useAVX2

// q4x16Act is what the kernels take of one activation block: −8·Σq8 (the
// quants' −8 offset, shared by all rows) and d as a float.
type q4x16Act struct {
	off int32
	dx  float32
}

// q4x16StackBlocks is the most blocks (n = 65,536) whose q4x16Act fit
// the stack buffer; wider rows take one from the heap.
const q4x16StackBlocks = 2048

// q4x16Fast runs the interleave kernel (q4x16_amd64.s) of the current
// level: the activation's offsets and scales once, then the whole groups
// straight into out, a last partial group through a scratch of 16
// results.
func q4x16Fast(packed []byte, nRows int, act []byte, nb int, out []float32) bool {
	if !Q4_0X16Kernel() {
		return false
	}
	var buf [q4x16StackBlocks]q4x16Act
	prep := buf[:]
	if nb > len(buf) {
		prep = make([]q4x16Act, nb)
	}
	q4x16Prep(&act[0], nb, &prep[0])
	full := nRows / q4x16Rows
	if full > 0 {
		q4x16Run(&packed[0], full, &prep[0], &act[0], nb, &out[0])
	}
	if rest := nRows - full*q4x16Rows; rest > 0 {
		var tmp [q4x16Rows]float32
		q4x16Run(&packed[full*q4x16Group(nb)], 1, &prep[0], &act[0], nb, &tmp[0])
		copy(out[full*q4x16Rows:nRows], tmp[:rest])
	}
	return true
}

// q4x16Run calls the level's kernel on ngroups whole groups. (Direct
// calls, not a function value, keep the scratch from escaping.)
func q4x16Run(packed *byte, ngroups int, prep *q4x16Act, x *byte, nb int, out *float32) {
	switch {
	case useAVX512:
		q4x16AVX512(packed, ngroups, prep, x, nb, out)
	case q4x16VNNI:
		q4x16AVXVNNI(packed, ngroups, prep, x, nb, out)
	default:
		q4x16AVX2(packed, ngroups, prep, x, nb, out)
	}
}

// q4x16Prep writes prep[b] for the nb blocks of the Q8_0 row at x.
//
//go:noescape
func q4x16Prep(x *byte, nb int, prep *q4x16Act)

//go:noescape
func q4x16AVX512(packed *byte, ngroups int, prep *q4x16Act, x *byte, nb int, out *float32)

//go:noescape
func q4x16AVXVNNI(packed *byte, ngroups int, prep *q4x16Act, x *byte, nb int, out *float32)

//go:noescape
func q4x16AVX2(packed *byte, ngroups int, prep *q4x16Act, x *byte, nb int, out *float32)
