//go:build amd64 && !noasm

package quant

import (
	"math"
	"unsafe"
)

//go:generate python3 ./internal/gengorder512/gen.py

// gOrderFits reports whether w's one-activation-row products run through
// the generic-order rows kernels (gorder512_amd64.s) for weight rows
// stride bytes apart: Q4_0 and Q8_0 at the avx512 level, with the 16
// rows' offsets in the int32 lanes the scale gathers take.
func gOrderFits(w Type, stride int) bool {
	return useAVX512 && (w == Q4_0 || w == Q8_0) && stride <= math.MaxInt32/16
}

// dotRowsGOrder computes out[r] for nRows weight rows of w (Q4_0 or
// Q8_0) stride bytes apart at wp against the activation row at xp, nb
// blocks, bit-identical to the generic dotQ4_0/dotQ8_0: 16 rows per
// kernel pass, and a last group of fewer repeating its last row into
// lanes that are thrown away.
func dotRowsGOrder(w Type, wp *byte, stride, nRows int, xp *byte, nb int, out *float32) {
	var offs [16]int32
	g := nRows / 16
	if g > 0 {
		for k := range offs {
			offs[k] = int32(k * stride)
		}
		rows16GOrder(w, wp, &offs, 16*stride, g, xp, nb, out)
	}
	rem := nRows - 16*g
	if rem == 0 {
		return
	}
	for k := range offs {
		offs[k] = int32(min(k, rem-1) * stride)
	}
	var tmp [16]float32
	rows16GOrder(w, (*byte)(unsafe.Add(unsafe.Pointer(wp), 16*g*stride)), &offs, 0, 1, xp, nb, &tmp[0])
	copy(unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(out), 4*16*g)), rem), tmp[:rem])
}

// rows16GOrder runs w's kernel on ngroups groups of 16 rows.
func rows16GOrder(w Type, wp *byte, offs *[16]int32, wstride16, ngroups int, xp *byte, nb int, out *float32) {
	if w == Q4_0 {
		dotQ4_0Rows16GAVX512(wp, offs, wstride16, ngroups, xp, nb, out)
		return
	}
	dotQ8_0Rows16GAVX512(wp, offs, wstride16, ngroups, xp, nb, out)
}

// Kernels in gorder512_amd64.s (written by internal/gengorder512).

//go:noescape
func dotQ4_0Rows16GAVX512(w *byte, offs *[16]int32, wstride16, ngroups int, x *byte, nb int, out *float32)

//go:noescape
func dotQ8_0Rows16GAVX512(w *byte, offs *[16]int32, wstride16, ngroups int, x *byte, nb int, out *float32)
