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
// bit-identical to the generic twin's (see the .s file), as the AMX
// tiles' and every other Q4_0 and Q8_0 kernel's at this level are.

// rowOffsets fills idx with the byte offsets of consecutive rows stride
// bytes apart (row r at r·stride): the widening kernels' gather indices.
func rowOffsets(idx []int32, stride int) {
	for r := range idx {
		idx[r] = int32(r * stride)
	}
}

// qTileMinActs is the fewest activation rows of type w VecDotTile runs
// through the prompt tiles, for weight rows rowStride bytes apart; fewer
// run VecDotRows once per activation row (vecDotTileGOrder). The tiles
// pay for widening each group of 16 weight rows once, then run the
// smallest of their 2-, 4- and 8-row kernels that holds the group (the
// last group of a prompt included), so long rows pay off sooner.
// BenchmarkTile512Pick (144 rows a call on 128 MiB, GB/s of weights,
// against VecDotRows once per activation row): rows of 4096
// and 2048 Q8_0 weights, and 4096 Q4_0, the tiles win from 2 activation
// rows (Q8_0 2048: 10.5 against 9.0 GB/s at 2, 7.9 against 4.4 at 6);
// Q4_0 rows of 2048 from 3 (even at 3, 5.9 each); rows of 896 from 6
// for Q4_0 (3.7 against 2.9) and 5 for Q8_0 (5.4 against 5.3 at 5, 5.5
// against 4.6 at 6), the rows kernels winning below (Q4_0 at 2: 9.3
// against 4.2). Widening is one group's work whatever the activation
// count, so rows of a few hundred bytes spend most of it on per-group
// overhead.
func qTileMinActs(w Type, rowStride int) int {
	base := qTileMinQ4_0
	if w == Q8_0 {
		base = qTileMinQ8_0
	}
	switch {
	case rowStride >= 2<<10:
		return min(2, base)
	case w == Q4_0 && rowStride >= 1<<10:
		return min(3, base)
	}
	return base
}

// The thresholds qTileMinActs returns for rows under 1 KiB (the lower
// ones for longer rows are capped by them), variables so that the
// benchmarks can run the tiles below them.
var qTileMinQ4_0, qTileMinQ8_0 = 6, 5

// qTileOn turns the prompt tiles on, as they are by default at both
// levels: every Q4_0 and Q8_0 kernel rounds as the generic twins
// (gOrderOn at avx512, gorderavx2_amd64.go at avx2), as the tiles do, so
// a row's result does not depend on how many rows share its call
// (tools/serveload's "four concurrent greedy answers equal the same four
// alone"). CHURON_QTILE=0 turns them off at both levels (qTileFits,
// qTileAVX2Fits). The generic order is no less right than the lanes: see
// docs/performance.md, "Q4_0 and Q8_0 prompt tiles and rounding"
// (gemma3-tiny-q8_0-kvf16).
var qTileOn = os.Getenv("CHURON_QTILE") != "0"

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
	return qTileOn && useAVX512 && (w == Q4_0 || w == Q8_0) && nActs >= qTileMinActs(w, rowStride) &&
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
	rowOffsets(idx[:], rowStride)
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
			k := tileRows8(acts, actStride, nActs, 8*g, out, outStride, r0, &dummy)
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
