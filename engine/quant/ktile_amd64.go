//go:build amd64 && !noasm

package quant

import (
	"math"
	"sync"
)

// K-quant matrix tiles without AMX (ktile_amd64.s): VecDotTile's path for
// Q4_K and Q6_K weights against many activation rows (a prompt) at the
// avx2 and avx512 levels. Each group of 16 weight rows is widened once
// into a scratch layout (per super-block of the 16 rows 5,248 bytes for
// Q4_K, 5,696 for Q6_K: 2.3 and 1.7 times the rows' own bytes; one group
// at a time, so 115 KiB for rows of 5,632 and 294 KiB for 14,336, pooled
// per worker; nothing is kept between calls or repacked at load) and
// then run against the activation rows, as they lie, eight (avx2: four)
// at a time.
// Every result is bit-identical to the generic twin's (see the .s file).

// kTileMinActs is the fewest activation rows VecDotTile runs through the
// tile kernels. A batched decode (2-8 rows) keeps the four-activation
// kernels, which read the weights where they lie: through the tiles, 4
// or 8 rows against 37 MiB of Q4_K and Q6_K rows in memory ran 1.1-4×
// slower (the widening's gathers meet every row in memory).
const kTileMinActs = 16

// kTileRows are a tile kernel's eight activation rows and where each
// row's 16 results go.
type kTileRows struct {
	x [8]*byte
	o [8]*float32
}

// tileRows8 are the eight activation rows a..a+7 of a tile kernel that
// writes whole groups of 16 results, at column r0 of out: rows past
// nActs repeat the last one, into dummy. (A value, not a method that
// fills k: stores through a pointer would move dummy to the heap.)
func tileRows8(acts []byte, actStride, nActs, a int, out []float32, outStride, r0 int, dummy *[16]float32) (k kTileRows) {
	for i := range 8 {
		if a+i < nActs {
			k.x[i], k.o[i] = &acts[(a+i)*actStride], &out[(a+i)*outStride+r0]
		} else {
			k.x[i], k.o[i] = &acts[(nActs-1)*actStride], &dummy[0]
		}
	}
	return k
}

// tileRows4 are the four activation rows a..a+3 of an avx2 tile kernel,
// which writes eight results a row, at column r0 of out for a whole
// group of eight weight rows (nr = 8); rows past nActs repeat the last
// one, into tmp, and so do all four of a partial group (unload4 copies
// those out).
func tileRows4(acts []byte, actStride, nActs, a int, out []float32, outStride, r0, nr int, tmp *[4][8]float32) (k kTileRows) {
	for i := range 4 {
		k.x[i], k.o[i] = &acts[min(a+i, nActs-1)*actStride], &tmp[i][0]
		if a+i < nActs && nr == 8 {
			k.o[i] = &out[(a+i)*outStride+r0]
		}
	}
	return k
}

// unload4 copies a partial group's results (nr < 8 weight rows), which
// tileRows4 sent to tmp, to out.
func unload4(tmp *[4][8]float32, nActs, a int, out []float32, outStride, r0, nr int) {
	if nr < 8 {
		for i := range min(4, nActs-a) {
			copy(out[(a+i)*outStride+r0:(a+i)*outStride+r0+nr], tmp[i][:nr])
		}
	}
}

// kTileBuf is a worker's widened rows.
type kTileBuf struct{ b []byte }

var kTilePool = sync.Pool{New: func() any { return new(kTileBuf) }}

// kTileSB is the scratch bytes per super-block of w (KQ4SB, KQ6SB).
func kTileSB(w Type) int {
	if w == Q4_K {
		return 5248
	}
	return 5696
}

// kTileFits reports whether VecDotTile runs w through the tile kernels
// for nActs activation rows with weight rows rowStride bytes apart (the
// gathers take 32-bit offsets of 16 rows).
func kTileFits(w Type, nActs, rowStride int) bool {
	return useAVX2 && (w == Q4_K || w == Q6_K) && nActs >= kTileMinActs &&
		rowStride <= math.MaxInt32/16
}

// vecDotTileK is vecDotTileFast for Q4_K and Q6_K on checked inputs
// (kTileFits): weight rows 16 at a time, widened, against the activation
// rows eight at a time. A last group of fewer than eight repeats the
// last row into a dummy result.
func vecDotTileK(w Type, rows []byte, rowStride, nRows int, acts []byte, actStride, nActs, n int, out []float32, outStride int) {
	if !useAVX512 {
		vecDotTileKAVX2(w, rows, rowStride, nRows, acts, actStride, nActs, n, out, outStride)
		return
	}
	nsb := n / QK_K
	buf := kTilePool.Get().(*kTileBuf)
	buf.b = grow(buf.b, nsb*kTileSB(w))
	var idx [16]int32
	rowOffsets(idx[:], rowStride)
	var dummy [16]float32
	for r0 := 0; r0 < nRows; r0 += 16 {
		nr := min(16, nRows-r0)
		mask := 1<<nr - 1
		if w == Q4_K {
			kWidenQ4_K(&rows[r0*rowStride], &idx[0], mask, nsb, &buf.b[0])
		} else {
			kWidenQ6_K(&rows[r0*rowStride], &idx[0], mask, nsb, &buf.b[0])
		}
		for a := 0; a < nActs; a += 8 {
			k := tileRows8(acts, actStride, nActs, a, out, outStride, r0, &dummy)
			if w == Q4_K {
				kTileQ4_K(&buf.b[0], nsb, mask, &k)
			} else {
				kTileQ6_K(&buf.b[0], nsb, mask, &k)
			}
		}
	}
	kTilePool.Put(buf)
}

// vecDotTileKAVX2 is vecDotTileK at the avx2 level: each half of a
// group of 16 weight rows widened and run against the activation rows
// four at a time. Results of a partial half, or of rows past nActs, go
// through tmp.
func vecDotTileKAVX2(w Type, rows []byte, rowStride, nRows int, acts []byte, actStride, nActs, n int, out []float32, outStride int) {
	nsb := n / QK_K
	buf := kTilePool.Get().(*kTileBuf)
	buf.b = grow(buf.b, nsb*kTileSB(w))
	var idx [8]int32
	rowOffsets(idx[:], rowStride)
	var tmp [4][8]float32
	for r0 := 0; r0 < nRows; r0 += 16 {
		for h := 0; h < 2 && r0+8*h < nRows; h++ {
			lo := r0 + 8*h
			nr := min(8, nRows-lo)
			dst := &buf.b[32*h]
			if w == Q4_K {
				kWidenQ4_KAVX2(&rows[lo*rowStride], &idx[0], nr, nsb, dst)
			} else {
				kWidenQ6_KAVX2(&rows[lo*rowStride], &idx[0], nr, nsb, dst)
			}
			for a := 0; a < nActs; a += 4 {
				k := tileRows4(acts, actStride, nActs, a, out, outStride, lo, nr, &tmp)
				if w == Q4_K {
					kTileQ4_KAVX2(dst, nsb, &k)
				} else {
					kTileQ6_KAVX2(dst, nsb, &k)
				}
				unload4(&tmp, nActs, a, out, outStride, lo, nr)
			}
		}
	}
	kTilePool.Put(buf)
}

//go:noescape
func kWidenQ4_KAVX2(rows *byte, idx *int32, nr, nsb int, dst *byte)

//go:noescape
func kWidenQ6_KAVX2(rows *byte, idx *int32, nr, nsb int, dst *byte)

//go:noescape
func kTileQ4_KAVX2(w *byte, nsb int, k *kTileRows)

//go:noescape
func kTileQ6_KAVX2(w *byte, nsb int, k *kTileRows)

//go:noescape
func kWidenQ4_K(rows *byte, idx *int32, mask, nsb int, dst *byte)

//go:noescape
func kWidenQ6_K(rows *byte, idx *int32, mask, nsb int, dst *byte)

//go:noescape
func kTileQ4_K(w *byte, nsb, mask int, k *kTileRows)

//go:noescape
func kTileQ6_K(w *byte, nsb, mask int, k *kTileRows)

//go:noescape
func dotQ4_KRows4AVX512(w *byte, stride, ngroups int, x *byte, nsb int, out *float32)

//go:noescape
func dotQ6_KRows4AVX512(w *byte, stride, ngroups int, x *byte, nsb int, out *float32)

//go:noescape
func dotQ4_KRows2AVX2(w *byte, stride, npairs int, x *byte, nsb int, out *float32)

//go:noescape
func dotQ6_KRows2AVX2(w *byte, stride, npairs int, x *byte, nsb int, out *float32)
