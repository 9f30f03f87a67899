//go:build amd64 && !noasm

package quant

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
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

// BenchmarkQ5_0AVX2Tile measures a Q5_0 prompt product at the avx2
// level: a backend segment of weight rows (sized for L2 as matmul sizes
// it, at most 128) against 128 activation rows (a prompt) or 4 (a
// batched decode step, below the tile: the one-row kernel per row and
// activation), rows of 896 and 4864 values, in alternation: "lanes"
// (what VecDotTile ran before: the one-row lane kernel for every row and
// activation), "gather" (VecDotTile widening every group of weight rows
// by gathers, as it widens a part group) and "tile" (VecDotTile). ps/MAC
// is the thread's CPU time per multiply-add.
func BenchmarkQ5_0AVX2Tile(b *testing.B) {
	if !hasAVX2 {
		b.Skip("no AVX2 on this machine")
	}
	defer setSIMDLevel("avx2")()
	defer setPromptTiles(true)()
	r := rand.New(rand.NewPCG(59, 60))
	for _, c := range []struct{ n, nRows, nActs int }{{896, 128, 128}, {4864, 64, 128}, {896, 128, 4}, {4864, 64, 4}} {
		nActs := c.nActs
		rows := randRows(r, Q5_0, c.nRows, c.n, 1)
		acts := randRows(r, Q8_0, nActs, c.n, 3)
		wrow, _ := Q5_0.RowSize(c.n)
		arow, _ := Q8_0.RowSize(c.n)
		out := make([]float32, c.nRows*nActs)
		for _, arm := range []string{"lanes", "gather", "tile"} {
			b.Run(fmt.Sprintf("n=%d/%dx%d/%s", c.n, c.nRows, nActs, arm), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				q5FullWiden = arm != "gather"
				defer func() { q5FullWiden = true }()
				start := threadCPU()
				for range b.N {
					if arm != "lanes" {
						VecDotTile(Q5_0, rows, wrow, c.nRows, acts, arow, nActs, c.n, out, c.nRows)
						continue
					}
					for i := range c.nRows {
						for a := range nActs {
							out[a*c.nRows+i] = dotQ5_0AVX2(&rows[i*wrow], &acts[a*arow], c.n/32)
						}
					}
				}
				cpu := threadCPU() - start
				b.ReportMetric(float64(cpu.Nanoseconds())*1e3/float64(b.N)/float64(c.nRows*nActs*c.n), "ps/MAC")
			})
		}
	}
}
