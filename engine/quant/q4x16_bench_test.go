//go:build amd64 && !noasm

package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// BenchmarkVecDotRowsQ4_0X16 measures a decode step's product over Q4_0
// and Q8_0 rows in the file's layout (VecDotRows) and interleaved
// (VecDotRowsQ4_0X16, VecDotRowsQ8_0X16: at the avx2 level both kernels,
// AVX-VNNI where the CPU has it, and VPMADDUBSW), at both levels, all
// alternated in one run: 2,048 rows of 2,048 (Q4_0 2.25 MiB, in cache),
// 28,672 of 4,096 (Q4_0 63 MiB, from memory, past a 32 MiB L3) and a
// 0.5B model's FFN shape, 4,864 rows of 896, from memory: 32 copies
// (Q4_0 75 MiB) taken in turn. Bytes are the file's. Beside the
// wall-clock MB/s it reports cpuGB/s, the bytes over the thread's CPU
// time, which on a shared machine does not count the time the thread
// waited for a core.
func BenchmarkVecDotRowsQ4_0X16(b *testing.B) {
	if !hasAVX2 {
		b.Skip("no avx2")
	}
	defer func(saved bool) { q4x16VNNI = saved }(q4x16VNNI)
	r := rand.New(rand.NewPCG(38, 43))
	levels := []string{"avx2"}
	if hasAVX512 {
		levels = append(levels, "avx512")
	}
	type kind struct {
		t      Type
		block  int
		raw    func(r *rand.Rand, rows, n int, extreme bool) []byte
		size   func(nRows, n int) int
		repack func(dst, rows []byte, stride, nRows, n int) error
		rows   func(packed []byte, nRows int, act []byte, n int, out []float32) error
	}
	for _, k := range []kind{
		{Q4_0, q4_0Bytes, rawQ4_0Rows, Q4_0X16Size, RepackQ4_0X16, VecDotRowsQ4_0X16},
		{Q8_0, q8_0Bytes, rawQ8_0Rows, Q8_0X16Size, RepackQ8_0X16, VecDotRowsQ8_0X16},
	} {
		for _, s := range []struct{ n, nRows, copies int }{{2048, 2048, 1}, {4096, 28672, 1}, {896, 4864, 32}} {
			size := s.n / 32 * k.block
			var rows, packed [][]byte
			for range s.copies {
				rw := k.raw(r, s.nRows, s.n, false)
				pk := make([]byte, k.size(s.nRows, s.n))
				if err := k.repack(pk, rw, size, s.nRows, s.n); err != nil {
					b.Fatal(err)
				}
				rows, packed = append(rows, rw), append(packed, pk)
			}
			act := rawQ8_0Row(r, s.n, false)
			out := make([]float32, s.nRows)
			timed := func(level string, f func(i int)) func(b *testing.B) {
				return func(b *testing.B) {
					defer setSIMDLevel(level)()
					benchThreadCPU(b, len(rows[0]), func(i int) { f(i % s.copies) })
				}
			}
			file := func(i int) { VecDotRows(k.t, rows[i], size, s.nRows, act, s.n, out) }
			x16 := func(vnni bool) func(i int) {
				return func(i int) {
					q4x16VNNI = vnni
					if err := k.rows(packed[i], s.nRows, act, s.n, out); err != nil {
						b.Fatal(err)
					}
				}
			}
			for round := range 3 {
				for _, level := range levels {
					name := fmt.Sprintf("%v/n=%d/rows=%d/%s/", k.t, s.n, s.nRows, level)
					b.Run(fmt.Sprintf("%sfile/%d", name, round), timed(level, file))
					if level == "avx512" {
						b.Run(fmt.Sprintf("%sx16/%d", name, round), timed(level, x16(false)))
						continue
					}
					if cpu.X86.HasAVXVNNI {
						b.Run(fmt.Sprintf("%sx16-vnni/%d", name, round), timed(level, x16(true)))
					}
					b.Run(fmt.Sprintf("%sx16-maddubs/%d", name, round), timed(level, x16(false)))
				}
			}
		}
	}
}

// BenchmarkRepackQ4_0X16 measures the load-time copy into the interleave
// (bytes: the file's) and back.
func BenchmarkRepackQ4_0X16(b *testing.B) {
	benchX16Repack(b, q4_0X16Layout, rand.New(rand.NewPCG(38, 44)), 4096, 4096)
}
