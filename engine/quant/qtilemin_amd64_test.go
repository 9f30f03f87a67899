//go:build amd64 && !noasm

package quant

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// setQTileMin sets both prompt-tile thresholds for a benchmark and
// returns a function that restores them.
func setQTileMin(q4, q8 int) (restore func()) {
	o4, o8 := qTileMinQ4_0, qTileMinQ8_0
	qTileMinQ4_0, qTileMinQ8_0 = q4, q8
	return func() { qTileMinQ4_0, qTileMinQ8_0 = o4, o8 }
}

// BenchmarkQTileThreshold measures the choice qTileMinActs makes at the
// avx512 level: a batched decode step of 2 to 8 activation rows through
// the kernels below the tiles (impl=lanes: tiles off; since the rounding
// rule the generic-order ones, vecDotTileGOrder) against the prompt tiles
// taking every count (impl=tiles), on a job's block in cache (256 rows of
// 896) and on a matrix streamed from memory (4864 rows of 896, and 4096
// of 4096 to leave the last-level cache). The two run alternately, rep
// after rep, in one process, so that a loaded machine hits both alike;
// compare best-of-reps ns/op.
func BenchmarkQTileThreshold(b *testing.B) {
	if !useAVX512 {
		b.Skip("no avx512")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, typ := range []Type{Q4_0, Q8_0} {
		for _, sh := range []struct{ n, nRows int }{{896, 256}, {896, 4864}, {4096, 4096}} {
			rows, wrow, _ := weightRows(b, r, typ, sh.n, sh.nRows, 0)
			acts, arow, _ := actRows(b, r, VecDotType(typ), sh.n, 8, 0)
			out := make([]float32, sh.nRows*8)
			for _, k := range []int{2, 3, 4, 5, 6, 7, 8} {
				for rep := range 3 {
					for _, impl := range []string{"lanes", "tiles"} {
						name := fmt.Sprintf("%v/%dx%d/acts=%d/rep=%d/impl=%s", typ, sh.nRows, sh.n, k, rep, impl)
						b.Run(name, func(b *testing.B) {
							defer setPromptTiles(impl == "tiles")()
							defer setQTileMin(2, 2)()
							runtime.LockOSThread()
							defer runtime.UnlockOSThread()
							b.SetBytes(int64(len(rows)))
							for b.Loop() {
								VecDotTile(typ, rows, wrow, sh.nRows, acts, arow, k, sh.n, out, sh.nRows)
							}
						})
					}
				}
			}
		}
	}
}
