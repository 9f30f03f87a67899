package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkMXFP4 measures MXFP4 at gpt-oss's expert width (2880) at
// every level: a decode step's rows from memory (one expert's 2880-row
// matrix at a time, 48 MiB of them, in jobs of 180 rows) and a prompt's
// tiles (180 rows, which stay in cache, against 4, 8 and 16 tokens: the
// tokens a 128-token prompt routes to each of 32 experts, 4 per token).
// bytes/s counts the weight rows once per op.
func BenchmarkMXFP4(b *testing.B) {
	r := rand.New(rand.NewPCG(81, 82))
	const n, seg = 2880, 180
	rows, wrow, nRows := streamRows(b, r, MXFP4, n, 48<<20)
	acts, arow, _ := actRows(b, r, Q8_0, n, 16, 0)
	out := make([]float32, max(nRows, 16*seg))
	benchLevels(b, fmt.Sprintf("rows/n=%d", n), len(rows), func() {
		for lo := 0; lo < nRows; lo += seg {
			hi := min(nRows, lo+seg)
			VecDotRows(MXFP4, rows[lo*wrow:hi*wrow], wrow, hi-lo, acts[:arow], n, out[lo:hi])
		}
	})
	for _, nActs := range []int{4, 8, 16} {
		benchLevels(b, fmt.Sprintf("tile/n=%d/%dx%d", n, seg, nActs), seg*wrow, func() {
			VecDotTile(MXFP4, rows, wrow, seg, acts, arow, nActs, n, out, seg)
		})
	}
}
