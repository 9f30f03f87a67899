//go:build amd64 && !noasm

package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// rows512Candidates are the bit-identical ways VecDotRows can run Q4_0
// and Q8_0 at the avx512 level (all pinned to the generic twins): the
// 16-row generic-order kernels, the avx2 eight-row kernels, and the
// two-stream loop over the avx2 one-row kernel; and, as the "before",
// main's lane kernels (not bit-identical; gOrderDecode off).
var rows512Candidates = []struct {
	name string
	run  func(w Type, rows []byte, stride, nRows int, act []byte, nb int, out []float32)
}{
	{"rows16", func(w Type, rows []byte, stride, nRows int, act []byte, nb int, out []float32) {
		dotRowsGOrder(w, &rows[0], stride, nRows, &act[0], nb, &out[0])
	}},
	{"rows8", vecDotRows8AVX2},
	{"stream", rowsTwoStreamsGAVX2},
	{"lanes", func(w Type, rows []byte, stride, nRows int, act []byte, nb int, out []float32) {
		defer func(v bool) { gOrderDecode = v }(gOrderDecode)
		gOrderDecode = false
		VecDotRows(w, rows, stride, nRows, act, 32*nb, out)
	}},
}

// BenchmarkRows512Pick measures rows512Candidates on one decode step's
// matrix-vector products, 144 rows a call as the backend's jobs do, on
// 128 MiB of rows (from memory) and on 4 MiB (in the L3), for the row
// widths of the 0.5B, 1.1B and 4B test models. Run it several times to
// alternate the candidates; rows512Kernel picks by what it measured.
func BenchmarkRows512Pick(b *testing.B) {
	runAt(b, "avx512")
	r := rand.New(rand.NewPCG(37, 512))
	const seg = 144
	for _, typ := range []Type{Q4_0, Q8_0} {
		for _, n := range []int{896, 2048, 4096, 5632} {
			for _, where := range []string{"memory", "cache"} {
				total := 128 << 20
				if where == "cache" {
					total = 4 << 20
				}
				rows, wrow, nRows := streamRows(b, r, typ, n, total)
				act, _, _ := actRows(b, r, Q8_0, n, 1, 0)
				out := make([]float32, nRows)
				for _, c := range rows512Candidates {
					b.Run(fmt.Sprintf("%v/n=%d/%s/%s", typ, n, where, c.name), func(b *testing.B) {
						b.SetBytes(int64(len(rows)))
						for b.Loop() {
							for lo := 0; lo < nRows; lo += seg {
								hi := min(nRows, lo+seg)
								c.run(typ, rows[lo*wrow:hi*wrow], wrow, hi-lo, act, n/32, out[lo:hi])
							}
						}
					})
				}
			}
		}
	}
}

// BenchmarkTile512Pick measures VecDotTile at the avx512 level for the
// two to seven activation rows of a batched decode step, below the
// prompt tiles' thresholds, 144 weight rows a call on 128 MiB of rows:
// "rows" (VecDotRows once per activation row, vecDotTileGOrder), "qtile"
// (the prompt tiles from two rows) and main's "lanes" (gOrderDecode and
// the tiles off, not bit-identical). The candidates alternate within a
// run; qTileMinActs picks by what they measured.
func BenchmarkTile512Pick(b *testing.B) {
	runAt(b, "avx512")
	defer func(q4, q8 int) { qTileMinQ4_0, qTileMinQ8_0 = q4, q8 }(qTileMinQ4_0, qTileMinQ8_0)
	defer func(v bool) { gOrderDecode = v }(gOrderDecode)
	defer setPromptTiles(true)()
	r := rand.New(rand.NewPCG(37, 513))
	const seg, total = 144, 128 << 20
	for _, typ := range []Type{Q4_0, Q8_0} {
		for _, n := range []int{896, 2048, 4096} {
			rows, wrow, nRows := streamRows(b, r, typ, n, total)
			for _, nActs := range []int{2, 3, 4, 5, 6, 7} {
				acts, _, astride := actRows(b, r, Q8_0, n, nActs, 0)
				out := make([]float32, nActs*nRows)
				for _, c := range []string{"rows", "qtile", "lanes"} {
					b.Run(fmt.Sprintf("%v/n=%d/acts=%d/%s", typ, n, nActs, c), func(b *testing.B) {
						gOrderDecode, qTileOn = c != "lanes", c == "qtile"
						qTileMinQ4_0, qTileMinQ8_0 = 2, 2
						b.SetBytes(int64(len(rows)))
						for b.Loop() {
							for lo := 0; lo < nRows; lo += seg {
								hi := min(nRows, lo+seg)
								if c != "rows" {
									VecDotTile(typ, rows[lo*wrow:hi*wrow], wrow, hi-lo, acts, astride, nActs, n, out[lo:], nRows)
									continue
								}
								for a := range nActs {
									VecDotRows(typ, rows[lo*wrow:hi*wrow], wrow, hi-lo, acts[a*astride:(a+1)*astride], n, out[a*nRows+lo:a*nRows+hi])
								}
							}
						}
					})
				}
			}
		}
	}
}
