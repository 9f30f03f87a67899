//go:build amd64 && !noasm

package quant

// Q4_0 and Q8_0 prompt tiles at the avx2 level (qtileavx2_amd64.s, by
// internal/genqtileavx2; Q5_0's in q5avx2_amd64.s, the same design):
// VecDotTile's path for at least qTileAVX2MinActs
// activation rows when the prompt tiles are on (qTileOn) and the avx512
// level is not in use. Each group of eight weight rows is widened once
// (288 bytes per block for Q4_0, 544 for Q8_0: 2.0 and 2.0 times the
// rows' own bytes; one group at a time, pooled per worker, nothing kept
// between calls), every activation row gets qActTable's entry per block,
// and the rows then run against the activation rows, as they lie, four
// at a time. Every result is bit-identical to the generic twin's.

// qTileAVX2MinActs is the fewest activation rows the avx2 prompt tiles
// take: below it the multi-column VecDot kernels are as fast.
const qTileAVX2MinActs = 16

// q5TileMinActs is qTileAVX2MinActs for Q5_0, whose multi-column kernels
// pay a horizontal sum per block (the generic order) that the tile does
// not: BenchmarkQ5_0AVX2Tile (CPU time per multiply-add, rows of 896 and
// 4864), the tile 15-25 ps against 30-40 for the two-activation kernel
// at 2 activation rows, 12 against 25 at 4, 6-10 against 25-28 at 8. A
// variable so that the benchmark can run either.
var q5TileMinActs = 2

// qTileAVX2Fits reports whether VecDotTile runs w through the avx2
// prompt tiles (the gathers take 32-bit offsets of eight rows).
func qTileAVX2Fits(w Type, nActs, rowStride int) bool {
	minActs := qTileAVX2MinActs
	if w == Q5_0 {
		minActs = q5TileMinActs
	}
	return qTileOn && useAVX2 && !useAVX512 && (w == Q4_0 || w == Q8_0 || w == Q5_0) &&
		nActs >= minActs && rowStride <= (1<<31-1)/8
}

// vecDotTileQAVX2 is vecDotTileFast for Q4_0 and Q8_0 on checked inputs
// (qTileAVX2Fits) of nb blocks: the activation tables built once (eight
// rows to a 64-byte entry, as qActTable writes them), then weight rows
// eight at a time, widened, against the activation rows four at a time.
// Results of a partial group of rows, or of rows past nActs (the last
// row repeated), go through tmp.
func vecDotTileQAVX2(w Type, rows []byte, rowStride, nRows int, acts []byte, actStride, nActs, nb int, out []float32, outStride int) {
	qb, off := 288, 8
	vnni := tileVNNI && (w == Q5_0 || w == Q8_0)
	switch w {
	case Q8_0:
		qb, off = 544, 128
		if vnni {
			qb = q5Widen
		}
	case Q5_0:
		qb, off = q5Widen, 16
	}
	buf := qTilePool.Get().(*qTileBuf)
	buf.w = grow(buf.w, nb*qb)
	groups := (nActs + 7) / 8
	gtab := nb * 16 // uint32s of one group's tables
	buf.tab = grow(buf.tab, groups*gtab)
	for g := range groups {
		for i := range 8 {
			a := min(8*g+i, nActs-1)
			qActTable(&acts[a*actStride], nb, off, &buf.tab[g*gtab+2*i])
		}
	}
	var idx, mask [8]int32
	rowOffsets(idx[:], rowStride)
	var tmp [4][8]float32
	for r0 := 0; r0 < nRows; r0 += 8 {
		nr := min(8, nRows-r0)
		for r := range mask {
			mask[r] = 0
			if r < nr {
				mask[r] = -1
			}
		}
		switch {
		case w == Q4_0:
			qWidenQ4_0AVX2(&rows[r0*rowStride], &idx[0], &mask[0], nb, &buf.w[0])
		case w == Q5_0 && nr == 8 && q5FullWiden:
			qWidenQ5_0FullAVX2(&rows[r0*rowStride], rowStride, nb, &buf.w[0])
		case w == Q5_0:
			qWidenQ5_0AVX2(&rows[r0*rowStride], &idx[0], &mask[0], nb, &buf.w[0])
		case vnni:
			qWidenQ8_0UAVX2(&rows[r0*rowStride], &idx[0], &mask[0], nb, &buf.w[0])
		default:
			qWidenQ8_0AVX2(&rows[r0*rowStride], &idx[0], &mask[0], nb, &buf.w[0])
		}
		for a := 0; a < nActs; a += 4 {
			k := tileRows4(acts, actStride, nActs, a, out, outStride, r0, nr, &tmp)
			tab := &buf.tab[a/8*gtab+2*(a%8)]
			switch {
			case vnni:
				qTileQ8AVXVNNI(&buf.w[0], tab, nb, &k)
			case w == Q4_0:
				qTileQ4_0AVX2(&buf.w[0], tab, nb, &k)
			case w == Q5_0:
				qTileQ5_0AVX2(&buf.w[0], tab, nb, &k)
			default:
				qTileQ8_0AVX2(&buf.w[0], tab, nb, &k)
			}
			unload4(&tmp, nActs, a, out, outStride, r0, nr)
		}
	}
	qTilePool.Put(buf)
}

//go:noescape
func qWidenQ4_0AVX2(rows *byte, idx, mask *int32, nb int, dst *byte)

//go:noescape
func qWidenQ8_0AVX2(rows *byte, idx, mask *int32, nb int, dst *byte)

//go:noescape
func qTileQ4_0AVX2(w *byte, tab *uint32, nb int, k *kTileRows)

//go:noescape
func qTileQ8_0AVX2(w *byte, tab *uint32, nb int, k *kTileRows)
