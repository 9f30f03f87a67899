//go:build amd64 && !noasm

package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// BenchmarkKX16AVX2 measures a decode step's product over Q4_K rows at
// the avx2 level: the file's layout (VecDotRows: the two-row kernel) and
// the interleave's two avx2 kernels, AVX-VNNI and VPMADDUBSW, all
// alternated in one run: 2,048 rows of 2,048 (4.5 MiB, in cache) and
// 28,672 of 4,096 (63 MiB, from memory). Bytes are the file's. Beside
// the wall-clock MB/s it reports cpuGB/s, the bytes over the thread's
// CPU time, which on a shared machine does not count the time the
// thread waited for a core.
func BenchmarkKX16AVX2(b *testing.B) {
	runAt(b, "avx2")
	defer func(saved bool) { kx16VNNI = saved }(kx16VNNI)
	r := rand.New(rand.NewPCG(38, 17))
	for _, s := range []struct{ n, nRows int }{{2048, 2048}, {4096, 28672}} {
		size, _ := Q4_K.RowSize(s.n)
		rows := rawKRows(r, Q4_K, s.nRows, s.n)
		act := rawQ8KRows(r, 1, s.n)
		packed := make([]byte, KX16Size(s.nRows, s.n))
		if err := RepackQ4_KX16(packed, rows, size, s.nRows, s.n); err != nil {
			b.Fatal(err)
		}
		out := make([]float32, s.nRows)
		timed := func(f func()) func(b *testing.B) {
			return func(b *testing.B) { benchThreadCPU(b, len(rows), func(int) { f() }) }
		}
		file := func() { VecDotRows(Q4_K, rows, size, s.nRows, act, s.n, out) }
		kx16 := func(vnni bool) func() {
			return func() {
				kx16VNNI = vnni
				if err := VecDotRowsQ4_KX16(packed, s.nRows, act, s.n, out); err != nil {
					b.Fatal(err)
				}
			}
		}
		for round := range 3 {
			name := fmt.Sprintf("n=%d/rows=%d/", s.n, s.nRows)
			b.Run(fmt.Sprintf("%sfile/%d", name, round), timed(file))
			if cpu.X86.HasAVXVNNI {
				b.Run(fmt.Sprintf("%skx16-vnni/%d", name, round), timed(kx16(true)))
			}
			b.Run(fmt.Sprintf("%skx16-maddubs/%d", name, round), timed(kx16(false)))
		}
	}
}
