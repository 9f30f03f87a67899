//go:build amd64 && !noasm

package quant

import "sync"

//go:generate go run ./internal/gentile

// maxTileActs is the most activation rows one tile kernel runs against a
// weight block it has decoded once (tile_amd64.s).
const maxTileActs = 8

// tileBuf holds maxTileActs prepared activation rows.
type tileBuf [maxTileActs * maxPreparedPairs * 192]byte

var tilePool = sync.Pool{New: func() any { return new(tileBuf) }}

// vecDotTileGroups is vecDotTileFast for Q4_0 and Q8_0 at the avx512
// level: the activation rows in groups of at most maxTileActs, each group
// prepared once and run against every weight row by the kernel for its
// size, which decodes each weight block once for the whole group (the
// weights are read from memory once for up to eight sequences of a
// batched decode step, not once per four and again per leftover row).
func vecDotTileGroups(w Type, rows []byte, rowStride, nRows int, acts []byte, actStride, nActs, nb int, quads bool, pstride int, out []float32, outStride int) {
	tb := tilePool.Get().(*tileBuf)
	for a := 0; a < nActs; {
		// Even groups: 12 rows run as 6 + 6, not 8 + 4.
		groups := (nActs - a + maxTileActs - 1) / maxTileActs
		k := (nActs - a + groups - 1) / groups
		for i := range k {
			prepare(w, quads, &acts[(a+i)*actStride], nb, &tb[i*pstride])
		}
		tileKernel(w, k, &rows[0], rowStride, nRows, &tb[0], pstride, &acts[a*actStride], actStride, nb, &out[a*outStride], outStride)
		a += k
	}
	tilePool.Put(tb)
}

// tileKernel runs the tile kernel of w (Q4_0 or Q8_0) for k activation
// rows (1 ≤ k ≤ maxTileActs) prepared pstride bytes apart at prep (xp:
// the raw rows, xstride apart, whose last odd block the Q8_0 kernels read
// from there). Direct calls, not function values, keep the pointers from
// escaping.
func tileKernel(w Type, k int, wp *byte, wstride, nrows int, prep *byte, pstride int, xp *byte, xstride, nb int, out *float32, ostride int) {
	if w == Q4_0 {
		switch k {
		case 1:
			dotQ4_0RowsAVX512(wp, wstride, nrows, prep, nb, out)
		case 2:
			dotQ4_0Tile2AVX512(wp, wstride, nrows, prep, pstride, nb, out, ostride)
		case 3:
			dotQ4_0Tile3AVX512(wp, wstride, nrows, prep, pstride, nb, out, ostride)
		case 4:
			dotQ4_0Tile4AVX512(wp, wstride, nrows, prep, pstride, nb, out, ostride)
		case 5:
			dotQ4_0Tile5AVX512(wp, wstride, nrows, prep, pstride, nb, out, ostride)
		case 6:
			dotQ4_0Tile6AVX512(wp, wstride, nrows, prep, pstride, nb, out, ostride)
		case 7:
			dotQ4_0Tile7AVX512(wp, wstride, nrows, prep, pstride, nb, out, ostride)
		default:
			dotQ4_0Tile8AVX512(wp, wstride, nrows, prep, pstride, nb, out, ostride)
		}
		return
	}
	switch k {
	case 1:
		dotQ8_0RowsAVX512(wp, wstride, nrows, prep, xp, nb, out)
	case 2:
		dotQ8_0Tile2AVX512(wp, wstride, nrows, prep, pstride, xp, xstride, nb, out, ostride)
	case 3:
		dotQ8_0Tile3AVX512(wp, wstride, nrows, prep, pstride, xp, xstride, nb, out, ostride)
	case 4:
		dotQ8_0Tile4AVX512(wp, wstride, nrows, prep, pstride, xp, xstride, nb, out, ostride)
	case 5:
		dotQ8_0Tile5AVX512(wp, wstride, nrows, prep, pstride, xp, xstride, nb, out, ostride)
	case 6:
		dotQ8_0Tile6AVX512(wp, wstride, nrows, prep, pstride, xp, xstride, nb, out, ostride)
	case 7:
		dotQ8_0Tile7AVX512(wp, wstride, nrows, prep, pstride, xp, xstride, nb, out, ostride)
	default:
		dotQ8_0Tile8AVX512(wp, wstride, nrows, prep, pstride, xp, xstride, nb, out, ostride)
	}
}

// Kernels in tile_amd64.s (written by internal/gentile).

//go:noescape
func dotQ4_0Tile2AVX512(w *byte, wstride, nrows int, prep *byte, pstride, nb int, out *float32, ostride int)

//go:noescape
func dotQ4_0Tile3AVX512(w *byte, wstride, nrows int, prep *byte, pstride, nb int, out *float32, ostride int)

//go:noescape
func dotQ4_0Tile4AVX512(w *byte, wstride, nrows int, prep *byte, pstride, nb int, out *float32, ostride int)

//go:noescape
func dotQ4_0Tile5AVX512(w *byte, wstride, nrows int, prep *byte, pstride, nb int, out *float32, ostride int)

//go:noescape
func dotQ4_0Tile6AVX512(w *byte, wstride, nrows int, prep *byte, pstride, nb int, out *float32, ostride int)

//go:noescape
func dotQ4_0Tile7AVX512(w *byte, wstride, nrows int, prep *byte, pstride, nb int, out *float32, ostride int)

//go:noescape
func dotQ4_0Tile8AVX512(w *byte, wstride, nrows int, prep *byte, pstride, nb int, out *float32, ostride int)

//go:noescape
func dotQ8_0Tile2AVX512(w *byte, wstride, nrows int, prep *byte, pstride int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func dotQ8_0Tile3AVX512(w *byte, wstride, nrows int, prep *byte, pstride int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func dotQ8_0Tile4AVX512(w *byte, wstride, nrows int, prep *byte, pstride int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func dotQ8_0Tile5AVX512(w *byte, wstride, nrows int, prep *byte, pstride int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func dotQ8_0Tile6AVX512(w *byte, wstride, nrows int, prep *byte, pstride int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func dotQ8_0Tile7AVX512(w *byte, wstride, nrows int, prep *byte, pstride int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func dotQ8_0Tile8AVX512(w *byte, wstride, nrows int, prep *byte, pstride int, x *byte, xstride, nb int, out *float32, ostride int)
