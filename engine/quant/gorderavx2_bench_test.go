//go:build amd64 && !noasm

package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkRows8AVX2Stream measures VecDotRows at the avx2 level (the
// eight-row kernels) on 128 MiB of Q4_0 and Q8_0 rows streamed from
// memory, 144 rows a call as in BenchmarkVecDotRowsStream, rows of 896,
// 2048 and 4864 values (Qwen2.5-0.5B's and TinyLlama's widths). Beside
// the wall-clock MB/s it reports cpuGB/s, the bytes over the thread's
// CPU time, which on a shared machine does not count the time the
// thread waited for a core. Compare against an older build's figures.
func BenchmarkRows8AVX2Stream(b *testing.B) {
	runAt(b, "avx2")
	r := rand.New(rand.NewPCG(45, 46))
	const total, seg = 128 << 20, 144
	for _, typ := range []Type{Q4_0, Q8_0} {
		for _, n := range []int{896, 2048, 4864} {
			rows, wrow, nRows := streamRows(b, r, typ, n, total)
			act, _, _ := actRows(b, r, Q8_0, n, 1, 0)
			out := make([]float32, nRows)
			b.Run(fmt.Sprintf("%v/n=%d", typ, n), func(b *testing.B) {
				benchThreadCPU(b, len(rows), func(int) {
					for lo := 0; lo < nRows; lo += seg {
						hi := min(nRows, lo+seg)
						VecDotRows(typ, rows[lo*wrow:hi*wrow], wrow, hi-lo, act, n, out[lo:hi])
					}
				})
			})
		}
	}
}
