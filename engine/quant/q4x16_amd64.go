//go:build amd64 && !noasm

package quant

import (
	"sync"

	"golang.org/x/sys/cpu"
)

// q4x16VNNI selects the avx2 level's AVX-VNNI kernels, Q4_0's and
// Q8_0's (tests flip it to run the VPMADDUBSW ones too).
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

// q4x16StackBlocks is the most blocks (n = 16,384) whose q4x16Act fit
// the stack buffer; wider rows take one from q4x16Wide. (Go clears the
// buffer on every call: at 16 KiB that was a fifth of a decode
// segment's time here, at 4 KiB it is ~60 ns.)
const q4x16StackBlocks = 512

// q4x16Wide holds prep buffers for rows wider than the stack's.
var q4x16Wide sync.Pool

// Q8_0X16Kernel reports whether a Q8_0 interleave kernel
// (VecDotRowsQ8_0X16) runs at the current level, as Q4_0X16Kernel.
func Q8_0X16Kernel() bool { return useAVX2 }

// q4x16Fast and q8x16Fast run the interleave kernels (q4x16_amd64.s)
// of the current level: the activation's offsets and scales once, then
// the whole groups straight into out, a last partial group through a
// scratch of 16 results.
func q4x16Fast(packed []byte, nRows int, act []byte, nb int, out []float32) bool {
	return Q4_0X16Kernel() && x16Fast(false, packed, nRows, act, nb, out)
}

func q8x16Fast(packed []byte, nRows int, act []byte, nb int, out []float32) bool {
	return Q8_0X16Kernel() && x16Fast(true, packed, nRows, act, nb, out)
}

func x16Fast(q8 bool, packed []byte, nRows int, act []byte, nb int, out []float32) bool {
	var buf [q4x16StackBlocks]q4x16Act
	prep := buf[:]
	if nb > len(buf) {
		p, _ := q4x16Wide.Get().(*[]q4x16Act)
		if p == nil || len(*p) < nb {
			p = new([]q4x16Act)
			*p = make([]q4x16Act, nb)
		}
		defer q4x16Wide.Put(p)
		prep = *p
	}
	mul, gsz := -8, q4x16Group(nb) // Q4_0's quants' offset
	if q8 {
		mul, gsz = -128, q8x16Group(nb) // Q8_0's +128
	}
	q4x16Prep(&act[0], nb, &prep[0], mul)
	full := nRows / q4x16Rows
	if full > 0 {
		x16Run(q8, &packed[0], full, &prep[0], &act[0], nb, &out[0])
	}
	if rest := nRows - full*q4x16Rows; rest > 0 {
		var tmp [q4x16Rows]float32
		x16Run(q8, &packed[full*gsz], 1, &prep[0], &act[0], nb, &tmp[0])
		copy(out[full*q4x16Rows:nRows], tmp[:rest])
	}
	return true
}

// x16Run calls the level's kernel on ngroups whole groups. (Direct
// calls, not a function value, keep the scratch from escaping.)
func x16Run(q8 bool, packed *byte, ngroups int, prep *q4x16Act, x *byte, nb int, out *float32) {
	switch {
	case q8 && useAVX512:
		q8x16AVX512(packed, ngroups, prep, x, nb, out)
	case q8 && q4x16VNNI:
		q8x16AVXVNNI(packed, ngroups, prep, x, nb, out)
	case q8:
		q8x16AVX2(packed, ngroups, prep, x, nb, out)
	case useAVX512:
		q4x16AVX512(packed, ngroups, prep, x, nb, out)
	case q4x16VNNI:
		q4x16AVXVNNI(packed, ngroups, prep, x, nb, out)
	default:
		q4x16AVX2(packed, ngroups, prep, x, nb, out)
	}
}

// q4x16Prep writes prep[b] = {mul·Σq8, d} for the nb blocks of the Q8_0
// row at x.
//
//go:noescape
func q4x16Prep(x *byte, nb int, prep *q4x16Act, mul int)

//go:noescape
func q4x16AVX512(packed *byte, ngroups int, prep *q4x16Act, x *byte, nb int, out *float32)

//go:noescape
func q4x16AVXVNNI(packed *byte, ngroups int, prep *q4x16Act, x *byte, nb int, out *float32)

//go:noescape
func q4x16AVX2(packed *byte, ngroups int, prep *q4x16Act, x *byte, nb int, out *float32)

//go:noescape
func q8x16AVX512(packed *byte, ngroups int, prep *q4x16Act, x *byte, nb int, out *float32)

//go:noescape
func q8x16AVXVNNI(packed *byte, ngroups int, prep *q4x16Act, x *byte, nb int, out *float32)

//go:noescape
func q8x16AVX2(packed *byte, ngroups int, prep *q4x16Act, x *byte, nb int, out *float32)
