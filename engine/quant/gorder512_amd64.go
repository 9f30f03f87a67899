//go:build amd64 && !noasm

package quant

import (
	"math"
	"unsafe"
)

//go:generate python3 ./internal/gengorder512/gen.py

// gOrderOn reports whether w's products at this level round as the
// generic code does: Q4_0 and Q8_0 at avx512 (the rounding rule of
// docs/performance.md, "Q4_0 and Q8_0 prompt tiles and rounding"). Then
// VecDot, VecDotRows, VecDotMulti and VecDotTile below the prompt tiles
// all run kernels pinned bit for bit to the generic twins: the 16-row
// kernels here, the avx2 generic-order ones (gorderavx2_amd64.go), and
// the prompt tiles (qtile_amd64.go), so a row's result does not depend
// on how many rows share its call.
func gOrderOn(w Type) bool { return gOrderDecode && useAVX512 && (w == Q4_0 || w == Q8_0) }

// gOrderDecode is false only in benchmarks that measure main's lane
// kernels as their "before" (BenchmarkGOrderDecode, BenchmarkRows512Pick,
// BenchmarkTile512Pick).
var gOrderDecode = true

// lanes512 reports whether w runs the avx512 lane kernels of dot_amd64.s
// and tile_amd64.s (Q5_0; Q4_0 and Q8_0 only with gOrderDecode off).
func lanes512(w Type) bool { return useAVX512 && !gOrderOn(w) }

// vecDotGOrder is vecDotFast for gOrderOn types: the avx2 one-row kernel
// (a 16-row kernel pass on one row does 16 rows' work).
func vecDotGOrder(w Type, wRow, act []byte, n int) (float32, bool) {
	return dotGAVX2(w, &wRow[0], &act[0], n/32), true
}

// vecDotRowsGOrder is vecDotRowsFast for gOrderOn types. Per type and
// row size it runs the fastest of the bit-identical kernels
// (BenchmarkRows512Pick, 144 rows a call, from memory): the 16-row
// kernels for Q4_0, the avx2 eight-row kernels for Q8_0 at every width
// (with their L2 prefetch 1.3-2× the 16-row ones at 896, 2048 and 5632,
// level at 4096), and for a few rows the one-row kernel (a pass of 16
// rows costs as much for one).
func vecDotRowsGOrder(w Type, rows []byte, stride, nRows int, act []byte, nb int, out []float32) bool {
	switch {
	case nRows <= 4 || !gOrderFits(stride):
		rowsTwoStreamsGAVX2(w, rows, stride, nRows, act, nb, out)
	case w == Q8_0:
		vecDotRows8AVX2(w, rows, stride, nRows, act, nb, out)
	default:
		dotRowsGOrder(w, &rows[0], stride, nRows, &act[0], nb, &out[0])
	}
	return true
}

// gOrderFits reports whether the 16-row kernels (gorder512_amd64.s) take
// weight rows stride bytes apart: the 16 rows' offsets must fit the int32
// lanes the scale gathers take.
func gOrderFits(stride int) bool { return stride <= math.MaxInt32/16 }

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
