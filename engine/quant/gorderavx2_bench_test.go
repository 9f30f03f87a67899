//go:build amd64 && !noasm

package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkRows8AVX2Stream measures VecDotRows at the avx2 level on 128
// MiB of Q4_0 and Q8_0 rows streamed from memory, 144 rows a call as in
// BenchmarkVecDotRowsStream, with the eight-row kernels ("rows8") and
// without them ("before": the four-row lane kernel for Q4_0, main's
// path; the two-stream loop over the one-row kernel for Q8_0, now
// dotQ8_0GAVX2, so Q8_0's rows under 2 KiB run it in both). Run it
// several times to alternate the two.
func BenchmarkRows8AVX2Stream(b *testing.B) {
	if !hasAVX2 {
		b.Skip("no AVX2 on this machine")
	}
	defer setSIMDLevel("avx2")()
	r := rand.New(rand.NewPCG(45, 46))
	const total, seg = 128 << 20, 144
	for _, typ := range []Type{Q4_0, Q8_0} {
		for _, n := range []int{896, 4096} {
			distinct, wrow, _ := weightRows(b, r, typ, n, 64, 0)
			nRows := total / wrow
			rows := make([]byte, nRows*wrow)
			for i := 0; i < len(rows); i += len(distinct) {
				copy(rows[i:], distinct)
			}
			act, _, _ := actRows(b, r, Q8_0, n, 1, 0)
			out := make([]float32, nRows)
			for _, on := range []bool{false, true} {
				name := map[bool]string{false: "before", true: "rows8"}[on]
				b.Run(fmt.Sprintf("%v/n=%d/%s", typ, n, name), func(b *testing.B) {
					defer func(was bool) { rows8On = was }(rows8On)
					rows8On = on
					b.SetBytes(int64(len(rows)))
					for range b.N {
						for lo := 0; lo < nRows; lo += seg {
							hi := min(nRows, lo+seg)
							VecDotRows(typ, rows[lo*wrow:hi*wrow], wrow, hi-lo, act, n, out[lo:hi])
						}
					}
				})
			}
		}
	}
}
