//go:build amd64 && !noasm

package quant

import (
	"encoding/binary"
	"math"
	"sync"
	"unsafe"
)

// MXFP4 at the avx512 level (mxfp4_amd64.s, written by internal/genmxfp4):
// weight rows 16 at a time in dword lanes against one to eight
// activation rows, every entry point (VecDot, VecDotMulti, VecDotRows,
// VecDotTile) through the same kernels, bit-identical to the generic
// dotMXFP4. The avx2 level keeps its kernels in dot_amd64.s.

// mxActs is the most activation rows one kernel takes.
const mxActs = 8

// mxOn reports whether MXFP4 runs through these kernels: the avx512
// level, and weight rows close enough for the gathers' 32-bit offsets.
func mxOn(rowStride int) bool {
	return useAVX512 && rowStride <= math.MaxInt32/16
}

// mxBuf is a worker's prepared activations.
type mxBuf struct{ b []byte }

var mxPool = sync.Pool{New: func() any { return new(mxBuf) }}

// mxPrep lays out k activation rows (Q8_0, xstride bytes apart) of nb
// blocks for the kernels: per block b and row a, 40 bytes at
// 40·(k·b + a): dx as float32, −12·Σy as int32 (the codebook's +12
// offset, taken back), and the block's 32 quants.
func mxPrep(x []byte, xstride, k, nb int, dst []byte) {
	for a := range k {
		row := x[a*xstride : a*xstride+34*nb]
		for b := range nb {
			blk := row[34*b : 34*b+34]
			s := 0
			for _, q := range blk[2:34] {
				s += int(int8(q))
			}
			o := 40 * (k*b + a)
			binary.LittleEndian.PutUint32(dst[o:], math.Float32bits(fp16(blk)))
			binary.LittleEndian.PutUint32(dst[o+4:], uint32(int32(-12*s)))
			copy(dst[o+8:o+40], blk[2:34])
		}
	}
}

// mxTile runs nRows weight rows against k ≤ mxActs activation rows:
// out[a*outStride+r] for r < nRows, a < k.
func mxTile(k int, rows []byte, rowStride, nRows int, acts []byte, actStride, nb int, out []float32, outStride int) {
	buf := mxPool.Get().(*mxBuf)
	buf.b = grow(buf.b, 40*k*nb)
	mxPrep(acts, actStride, k, nb, buf.b)
	w, p, o := &rows[0], &buf.b[0], &out[0]
	switch k {
	case 1:
		mxfp4Tile1(w, rowStride, nRows, p, nb, o, outStride)
	case 2:
		mxfp4Tile2(w, rowStride, nRows, p, nb, o, outStride)
	case 3:
		mxfp4Tile3(w, rowStride, nRows, p, nb, o, outStride)
	case 4:
		mxfp4Tile4(w, rowStride, nRows, p, nb, o, outStride)
	case 5:
		mxfp4Tile5(w, rowStride, nRows, p, nb, o, outStride)
	case 6:
		mxfp4Tile6(w, rowStride, nRows, p, nb, o, outStride)
	case 7:
		mxfp4Tile7(w, rowStride, nRows, p, nb, o, outStride)
	case 8:
		mxfp4Tile8(w, rowStride, nRows, p, nb, o, outStride)
	}
	mxPool.Put(buf)
}

// vecDotTileMX is VecDotTile for MXFP4 at the avx512 level on checked
// inputs: the activation rows in as few groups of up to eight as cover
// them, of nearly equal counts (9 rows run as 5 and 4, not 8 and 1: each
// group gathers every weight block anew).
func vecDotTileMX(rows []byte, rowStride, nRows int, acts []byte, actStride, nActs, n int, out []float32, outStride int) {
	nb := n / 32
	groups := (nActs + mxActs - 1) / mxActs
	for a, g := 0, 0; g < groups; g++ {
		k := (nActs - a) / (groups - g)
		mxTile(k, rows, rowStride, nRows, acts[a*actStride:], actStride, nb, out[a*outStride:], outStride)
		a += k
	}
}

// dotMXFP4Top is dotMXFP4One on bounds-checked pointers (rowKernels).
func dotMXFP4Top(w, x *byte, nb int) float32 {
	return dotMXFP4One(unsafe.Slice(w, 17*nb), unsafe.Slice(x, 34*nb), nb)
}

// dotMXFP4One is VecDot(MXFP4) at the avx512 level.
func dotMXFP4One(w, x []byte, nb int) float32 {
	var out float32
	mxTile(1, w, 17*nb, 1, x, 34*nb, nb, unsafe.Slice(&out, 1), 1)
	return out
}

// dotMXFP4x4One is dotX4 for MXFP4 at the avx512 level: one weight row
// against four activation rows stride bytes apart.
func dotMXFP4x4One(wp, xp *byte, stride, nb int, out *float32) {
	w := unsafe.Slice(wp, 17*nb)
	x := unsafe.Slice(xp, 3*stride+34*nb)
	mxTile(4, w, 17*nb, 1, x, stride, nb, unsafe.Slice(out, 4), 1)
}

//go:noescape
func mxfp4Tile1(w *byte, stride, nrows int, prep *byte, nb int, out *float32, ostride int)

//go:noescape
func mxfp4Tile2(w *byte, stride, nrows int, prep *byte, nb int, out *float32, ostride int)

//go:noescape
func mxfp4Tile3(w *byte, stride, nrows int, prep *byte, nb int, out *float32, ostride int)

//go:noescape
func mxfp4Tile4(w *byte, stride, nrows int, prep *byte, nb int, out *float32, ostride int)

//go:noescape
func mxfp4Tile5(w *byte, stride, nrows int, prep *byte, nb int, out *float32, ostride int)

//go:noescape
func mxfp4Tile6(w *byte, stride, nrows int, prep *byte, nb int, out *float32, ostride int)

//go:noescape
func mxfp4Tile7(w *byte, stride, nrows int, prep *byte, nb int, out *float32, ostride int)

//go:noescape
func mxfp4Tile8(w *byte, stride, nrows int, prep *byte, nb int, out *float32, ostride int)
