//go:build amd64 && !noasm

package quant

import (
	"math"
	"os"
	"sync"
)

// Q4_0 and Q8_0 matrix tiles without AMX (qtile_amd64.s): VecDotTile's
// path for prompts and batched decodes (at least qTileMinActs rows) at the avx512
// level. Each group of 16 weight rows is widened once into a scratch
// layout of 576 bytes per block (2.0 times the rows' own bytes for Q4_0,
// 1.06 for Q8_0; one group at a time, so 36 KiB for rows of 2048 and 252
// KiB for 14336, pooled per worker; nothing is kept between calls or
// repacked at load), every activation row gets an 8-byte entry per block
// (its offset sum and scale), and the rows then run against the
// activation rows, as they lie, eight at a time. Every result is
// bit-identical to the generic twin's, not to VecDot's lanes at this
// level (see the .s file), as the AMX tiles' are.

// qTileMinActs is the fewest activation rows of type w VecDotTile runs
// through the prompt tiles; fewer keep the tile kernels of tile_amd64.go,
// which read the weights where they lie. The tiles pay for widening each
// weight block once, then run the smallest of their 2-, 4- and 8-row
// kernels that holds the group (the last group of a prompt included).
// Against the multi-column kernels (BenchmarkVecDotTileActs, 256 rows
// of 896, wall time, one run alternating the two builds) Q8_0 ran 1.0x
// at 4 rows, 1.25x at 6, 1.6x at 7, 1.8x at 8; Q4_0 0.7x at 4, 1.0x at
// 6, 1.08x at 7, 1.3x at 8 (its kernels widen nibbles, so it needs more
// rows to pay off). Lower thresholds do not pay end to end although the
// kernels alone say they might: BenchmarkQTileThreshold (one thread)
// has Q8_0's tiles with the 2- and 4-row kernels at 0.94-2.5x the lanes
// from 2 rows, but a 0.5B Q8_0 decode step at 2 threads
// (engine BenchmarkDecode) ran 0.55x at 2 sequences and 0.7x at 4 with
// them from 2, two thirds of its time in qWidenQ8_0Full reading the
// rows from memory (16 streams a thread against the lanes' two).
func qTileMinActs(w Type) int {
	if w == Q8_0 {
		return qTileMinQ8_0
	}
	return qTileMinQ4_0
}

// The thresholds qTileMinActs returns, variables so that
// BenchmarkQTileThreshold can run the tiles below them.
var qTileMinQ4_0, qTileMinQ8_0 = 8, 6

// qTileOn turns the prompt tiles on: CHURON_QTILE=1. They are off by
// default because they round as the generic code and VecDot's lanes do
// not, so a row's result depends on how many rows share its call:
// tools/serveload's check that four concurrent greedy answers equal the
// same four one at a time fails with them on (decode rows batched beside
// a prompt take the tiles, alone they take the lanes). engine's
// TestRingTruncate passes either way. What turning them on needs is one
// rounding rule: every Q4_0 and Q8_0 kernel (one-row, multi-column, row
// and prepared, at both levels) summing each row's blocks one after
// another as the generic code does, rows side by side in the lanes as
// the K-quant decode kernels already do (docs/performance.md, "Q4_0 and
// Q8_0 prompt tiles and rounding"). The generic order is no less right:
// TestArchReferences/gemma3-tiny-q8_0-kvf16, which the tiles and the
// generic code reach at cosine 0.9997115 and VecDot's lanes at 0.99990,
// is ill-conditioned — llama.cpp's own scalar x64 build reaches 0.9997115
// against its SIMD builds there, and its bar is now that spread.
// The avx512 one-activation-row paths obey the rule (gorder512_amd64.go, behind gOrderDecode).
var qTileOn = os.Getenv("CHURON_QTILE") == "1"

// qTileBuf is a worker's widened rows and activation tables.
type qTileBuf struct {
	w   []byte
	tab []uint32
}

var qTilePool = sync.Pool{New: func() any { return new(qTileBuf) }}

// qTileFits reports whether VecDotTile runs w through the prompt tiles
// for nActs activation rows with weight rows rowStride bytes apart (the
// gathers take 32-bit offsets of 16 rows).
func qTileFits(w Type, nActs, rowStride int) bool {
	return qTileOn && useAVX512 && (w == Q4_0 || w == Q8_0) && nActs >= qTileMinActs(w) &&
		rowStride <= math.MaxInt32/16
}

// vecDotTileQ is vecDotTileFast for Q4_0 and Q8_0 on checked inputs
// (qTileFits) of nb blocks: the activation tables built once, then
// weight rows 16 at a time, widened, against the activation rows eight
// at a time. A last group of fewer than eight repeats the last row into
// a dummy result.
func vecDotTileQ(w Type, rows []byte, rowStride, nRows int, acts []byte, actStride, nActs, nb int, out []float32, outStride int) {
	buf := qTilePool.Get().(*qTileBuf)
	buf.w = grow(buf.w, nb*576)
	groups := (nActs + 7) / 8
	gtab := nb * 16 // uint32s of one group's tables
	buf.tab = grow(buf.tab, groups*gtab)
	off := 8
	if w == Q8_0 {
		off = 128
	}
	for g := range groups {
		for i := range 8 {
			a := min(8*g+i, nActs-1)
			qActTable(&acts[a*actStride], nb, off, &buf.tab[g*gtab+2*i])
		}
	}
	var idx [16]int32
	for r := range idx {
		idx[r] = int32(r * rowStride)
	}
	var k kTileRows
	var dummy [16]float32
	for r0 := 0; r0 < nRows; r0 += 16 {
		nr := min(16, nRows-r0)
		mask := 1<<nr - 1
		wp := &rows[r0*rowStride]
		switch {
		case w == Q4_0 && nr == 16:
			qWidenQ4_0Full(wp, &idx[0], mask, nb, &buf.w[0])
		case w == Q4_0:
			qWidenQ4_0(wp, &idx[0], mask, nb, &buf.w[0])
		case nr == 16:
			qWidenQ8_0Full(wp, &idx[0], mask, nb, &buf.w[0])
		default:
			qWidenQ8_0(wp, &idx[0], mask, nb, &buf.w[0])
		}
		for g := range groups {
			for i := range 8 {
				if a := 8*g + i; a < nActs {
					k.x[i], k.o[i] = &acts[a*actStride], &out[a*outStride+r0]
				} else {
					k.x[i], k.o[i] = &acts[(nActs-1)*actStride], &dummy[0]
				}
			}
			qTileKernel(w, nActs-8*g, &buf.w[0], &buf.tab[g*gtab], nb, mask, &k)
		}
	}
	qTilePool.Put(buf)
}

// qTileKernel runs the tile kernel of w for a group of n activation rows
// (n > 8 counts as 8): the smallest of the 2-, 4- and 8-row kernels that
// holds them, so that a batched decode of two to four sequences does not
// pay for eight (each row's sums are the same whichever runs it).
func qTileKernel(w Type, n int, wide *byte, tab *uint32, nb, mask int, k *kTileRows) {
	switch {
	case n <= 2 && w == Q4_0:
		qTile2Q4_0(wide, tab, nb, mask, k)
	case n <= 2:
		qTile2Q8_0(wide, tab, nb, mask, k)
	case n <= 4 && w == Q4_0:
		qTile4Q4_0(wide, tab, nb, mask, k)
	case n <= 4:
		qTile4Q8_0(wide, tab, nb, mask, k)
	case w == Q4_0:
		qTileQ4_0(wide, tab, nb, mask, k)
	default:
		qTileQ8_0(wide, tab, nb, mask, k)
	}
}

//go:noescape
func qWidenQ4_0(rows *byte, idx *int32, mask, nb int, dst *byte)

//go:noescape
func qWidenQ8_0(rows *byte, idx *int32, mask, nb int, dst *byte)

// The Full widenings take whole groups of 16 rows, which they load
// rather than gather (the others read only the rows in mask).

//go:noescape
func qWidenQ4_0Full(rows *byte, idx *int32, mask, nb int, dst *byte)

//go:noescape
func qWidenQ8_0Full(rows *byte, idx *int32, mask, nb int, dst *byte)

//go:noescape
func qActTable(x *byte, nb, off int, dst *uint32)

//go:noescape
func qTileQ4_0(w *byte, tab *uint32, nb, mask int, k *kTileRows)

//go:noescape
func qTileQ8_0(w *byte, tab *uint32, nb, mask int, k *kTileRows)

//go:noescape
func qTile4Q4_0(w *byte, tab *uint32, nb, mask int, k *kTileRows)

//go:noescape
func qTile4Q8_0(w *byte, tab *uint32, nb, mask int, k *kTileRows)

//go:noescape
func qTile2Q4_0(w *byte, tab *uint32, nb, mask int, k *kTileRows)

//go:noescape
func qTile2Q8_0(w *byte, tab *uint32, nb, mask int, k *kTileRows)
