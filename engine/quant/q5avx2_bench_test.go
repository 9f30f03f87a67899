//go:build amd64 && !noasm

package quant

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"golang.org/x/sys/cpu"
)

// q5LanesRows is the avx2 level's Q5_0 decode before the generic-order
// kernels, kept as the benchmarks' "lanes" arm: the one-row lane kernel
// (dotQ5_0AVX2, partial sums in eight lanes, fused multiply-adds) over
// the rows in two streams, each row asked for a little ahead.
func q5LanesRows(rows []byte, stride, nRows int, act []byte, nb int, out []float32) {
	h := (nRows + 1) / 2
	for i := range nRows {
		r := i/2 + i%2*h
		prefetchAhead(&rows[r*stride], stride)
		out[r] = dotQ5_0AVX2(&rows[r*stride], &act[0], nb)
	}
}

// BenchmarkQ5_0AVX2Rows measures Q5_0 decode at the avx2 level on 128
// MiB of rows streamed from memory, 144 rows a call, rows of 896 and 4864
// values (Qwen2.5-0.5B's widths), in alternation: "lanes" (q5LanesRows)
// and "rows8" (VecDotRows: the eight-row generic-order kernel). cpuGB/s
// is the bytes over the thread's CPU time (the machine is shared).
func BenchmarkQ5_0AVX2Rows(b *testing.B) {
	if !hasAVX2 {
		b.Skip("no AVX2 on this machine")
	}
	defer setSIMDLevel("avx2")()
	r := rand.New(rand.NewPCG(57, 58))
	const total, seg = 128 << 20, 144
	for _, n := range []int{896, 4864} {
		rows, wrow, nRows := streamRows(b, r, Q5_0, n, total)
		act, _, _ := actRows(b, r, Q8_0, n, 1, 0)
		out := make([]float32, nRows)
		for _, arm := range []string{"lanes", "rows8"} {
			b.Run(fmt.Sprintf("n=%d/%s", n, arm), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.SetBytes(int64(len(rows)))
				start := threadCPU()
				for range b.N {
					for lo := 0; lo < nRows; lo += seg {
						hi := min(nRows, lo+seg)
						if arm == "lanes" {
							q5LanesRows(rows[lo*wrow:hi*wrow], wrow, hi-lo, act, n/32, out[lo:hi])
						} else {
							VecDotRows(Q5_0, rows[lo*wrow:hi*wrow], wrow, hi-lo, act, n, out[lo:hi])
						}
					}
				}
				cpu := threadCPU() - start
				b.ReportMetric(float64(len(rows))*float64(b.N)/cpu.Seconds()/1e9, "cpuGB/s")
			})
		}
	}
}

// BenchmarkQ5_0AVX2Tile measures a Q5_0 product at the avx2 level: a
// backend segment of weight rows (sized for L2 as matmul sizes it, at
// most 128) against 2 to 8 activation rows (a batched decode step, a
// short prompt) or 128 (a prompt), rows of 896 and 4864 values, in
// alternation: "lanes" (what VecDotTile ran before: the one-row lane
// kernel for every row and activation), "multi" (VecDotTile through the
// two- to four-activation kernels), "gather" (128 rows only: the tile,
// every group of weight rows widened by gathers, as a part group is) and
// "tile" (the tile). ps/MAC is the thread's CPU time per multiply-add.
func BenchmarkQ5_0AVX2Tile(b *testing.B) {
	if !hasAVX2 {
		b.Skip("no AVX2 on this machine")
	}
	defer setSIMDLevel("avx2")()
	defer setPromptTiles(true)()
	r := rand.New(rand.NewPCG(59, 60))
	for _, n := range []int{896, 4864} {
		nRows := 128
		if n > 2048 {
			nRows = 64
		}
		for _, nActs := range []int{2, 3, 4, 8, 128} {
			rows := randRows(r, Q5_0, nRows, n, 1)
			acts := randRows(r, Q8_0, nActs, n, 3)
			wrow, _ := Q5_0.RowSize(n)
			arow, _ := Q8_0.RowSize(n)
			out := make([]float32, nRows*nActs)
			arms := []string{"lanes", "multi", "tile"}
			if nActs == 128 {
				arms = []string{"lanes", "gather", "tile"}
			}
			for _, arm := range arms {
				b.Run(fmt.Sprintf("n=%d/%dx%d/%s", n, nRows, nActs, arm), func(b *testing.B) {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					q5FullWiden = arm != "gather"
					q5TileMinActs = 1
					if arm == "multi" {
						q5TileMinActs = 1 << 30
					}
					defer func(m int) { q5FullWiden, q5TileMinActs = true, m }(q5TileMinActs)
					start := threadCPU()
					for range b.N {
						if arm != "lanes" {
							VecDotTile(Q5_0, rows, wrow, nRows, acts, arow, nActs, n, out, nRows)
							continue
						}
						for i := range nRows {
							for a := range nActs {
								out[a*nRows+i] = dotQ5_0AVX2(&rows[i*wrow], &acts[a*arow], n/32)
							}
						}
					}
					spent := threadCPU() - start
					b.ReportMetric(float64(spent.Nanoseconds())*1e3/float64(b.N)/float64(nRows*nActs*n), "ps/MAC")
				})
			}
		}
	}
}

// BenchmarkTileVNNI measures the avx2 prompt tile of Q5_0 and Q8_0 with
// VPMADDUBSW ("maddubs") and with AVX-VNNI ("vnni"): a backend segment of
// weight rows against 128 activation rows, rows of 896 and 4864 values.
// ps/MAC is the thread's CPU time per multiply-add.
func BenchmarkTileVNNI(b *testing.B) {
	if !hasAVX2 || !cpu.X86.HasAVXVNNI {
		b.Skip("no AVX-VNNI on this machine")
	}
	defer setSIMDLevel("avx2")()
	defer setPromptTiles(true)()
	defer func(saved bool) { tileVNNI = saved }(tileVNNI)
	r := rand.New(rand.NewPCG(61, 62))
	const nActs = 128
	for _, typ := range []Type{Q5_0, Q8_0} {
		for _, n := range []int{896, 4864} {
			nRows := 128
			if n > 2048 {
				nRows = 64
			}
			rows := randRows(r, typ, nRows, n, 1)
			acts := randRows(r, Q8_0, nActs, n, 3)
			wrow, _ := typ.RowSize(n)
			arow, _ := Q8_0.RowSize(n)
			out := make([]float32, nRows*nActs)
			for _, arm := range []string{"maddubs", "vnni"} {
				b.Run(fmt.Sprintf("%v/n=%d/%s", typ, n, arm), func(b *testing.B) {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					tileVNNI = arm == "vnni"
					start := threadCPU()
					for range b.N {
						VecDotTile(typ, rows, wrow, nRows, acts, arow, nActs, n, out, nRows)
					}
					spent := threadCPU() - start
					b.ReportMetric(float64(spent.Nanoseconds())*1e3/float64(b.N)/float64(nRows*nActs*n), "ps/MAC")
				})
			}
		}
	}
}
