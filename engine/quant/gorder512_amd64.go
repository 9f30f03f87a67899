//go:build amd64 && !noasm

package quant

import (
	"math"
	"unsafe"
)

//go:generate python3 ./internal/gengorder512/gen.py

// gOrderOn reports whether w's one-activation-row products at this level
// must round as the generic code: Q4_0 and Q8_0 at avx512 (the rounding
// rule of docs/performance.md, "Q4_0 and Q8_0 prompt tiles and
// rounding"). Where the kernels do not fit, the generic code runs.
//
// gOrderDecode holds the switch off until the two- to seven-activation
// kernels round the same way (helper g512multi's half of issue 22):
// VecDotMulti and VecDotTile must stay bit-identical to VecDot, so both
// halves go on together, by setting it true.
func gOrderOn(w Type) bool { return gOrderDecode && useAVX512 && (w == Q4_0 || w == Q8_0) }

var gOrderDecode = false

// vecDotGOrder is vecDotFast for gOrderOn types: the rows kernel on one
// row, or the generic code where it does not fit.
func vecDotGOrder(w Type, wRow, act []byte, n int) (float32, bool) {
	if !gOrderFits(w, len(wRow)) {
		return 0, false
	}
	var out float32
	dotRowsGOrder(w, &wRow[0], len(wRow), 1, &act[0], n/32, &out)
	return out, true
}

// vecDotRowsGOrder is vecDotRowsFast for gOrderOn types, false (the
// generic code) where the kernels do not fit.
func vecDotRowsGOrder(w Type, rows []byte, stride, nRows int, act []byte, nb int, out []float32) bool {
	if !gOrderFits(w, stride) {
		return false
	}
	dotRowsGOrder(w, &rows[0], stride, nRows, &act[0], nb, &out[0])
	return true
}

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
		rows16GOrder(w, wp, &offs, stride, 16*stride, g, xp, nb, out)
	}
	rem := nRows - 16*g
	if rem == 0 {
		return
	}
	for k := range offs {
		offs[k] = int32(min(k, rem-1) * stride)
	}
	var tmp [16]float32
	rows16GOrder(w, (*byte)(unsafe.Add(unsafe.Pointer(wp), 16*g*stride)), &offs, stride, 0, 1, xp, nb, &tmp[0])
	copy(unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(out), 4*16*g)), rem), tmp[:rem])
}

// wideGOrderStride is the weight-row stride from which Q4_0's groups of
// 16 rows take the wide kernel: past it a group and the next one, which
// the narrow kernel prefetches into L1 while it reads this one, overflow
// the 32 KiB L1, so the wide kernel prefetches each row 512 bytes ahead
// into L1 and the next group only into L2 (docs/performance.md, "Q4_0
// decode in the generic order: prefetch by row width").
const wideGOrderStride = 1024

// rows16GOrder runs w's kernel on ngroups groups of 16 rows stride bytes
// apart, the groups wstride16 bytes apart.
func rows16GOrder(w Type, wp *byte, offs *[16]int32, stride, wstride16, ngroups int, xp *byte, nb int, out *float32) {
	switch {
	case w == Q8_0:
		dotQ8_0Rows16GAVX512(wp, offs, wstride16, ngroups, xp, nb, out)
	case stride > wideGOrderStride:
		dotQ4_0Rows16GWideAVX512(wp, offs, wstride16, ngroups, xp, nb, out)
	default:
		dotQ4_0Rows16GAVX512(wp, offs, wstride16, ngroups, xp, nb, out)
	}
}

// Kernels in gorder512_amd64.s (written by internal/gengorder512).

//go:noescape
func dotQ4_0Rows16GAVX512(w *byte, offs *[16]int32, wstride16, ngroups int, x *byte, nb int, out *float32)

// dotQ4_0Rows16GWideAVX512 is dotQ4_0Rows16GAVX512 for wide rows: the same
// bits, another prefetch (see wideGOrderStride).
//
//go:noescape
func dotQ4_0Rows16GWideAVX512(w *byte, offs *[16]int32, wstride16, ngroups int, x *byte, nb int, out *float32)

//go:noescape
func dotQ8_0Rows16GAVX512(w *byte, offs *[16]int32, wstride16, ngroups int, x *byte, nb int, out *float32)
