//go:build amd64 && !noasm

package quant

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"golang.org/x/sys/cpu"
)

// BenchmarkVecDotRowsQ4_0X16 measures a decode step's product over Q4_0
// rows in the file's layout (VecDotRows) and interleaved
// (VecDotRowsQ4_0X16: at the avx2 level both its kernels, AVX-VNNI where
// the CPU has it, and VPMADDUBSW), at both levels, all alternated in one
// run: 2,048 rows of 2,048 (2.25 MiB, in cache) and 28,672 of 4,096
// (63 MiB, from memory, past a 32 MiB L3).
// Bytes are the file's. Beside the wall-clock MB/s it reports cpuGB/s,
// the bytes over the thread's CPU time, which on a shared machine does
// not count the time the thread waited for a core.
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
	for _, s := range []struct{ n, nRows int }{{2048, 2048}, {4096, 28672}} {
		size := s.n / 32 * q4_0Bytes
		rows := rawQ4_0Rows(r, s.nRows, s.n, false)
		act := rawQ8_0Row(r, s.n, false)
		packed := make([]byte, Q4_0X16Size(s.nRows, s.n))
		if err := RepackQ4_0X16(packed, rows, size, s.nRows, s.n); err != nil {
			b.Fatal(err)
		}
		out := make([]float32, s.nRows)
		timed := func(level string, f func()) func(b *testing.B) {
			return func(b *testing.B) {
				defer setSIMDLevel(level)()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.SetBytes(int64(len(rows)))
				start := threadCPU()
				for range b.N {
					f()
				}
				cpu := threadCPU() - start
				b.ReportMetric(float64(len(rows))*float64(b.N)/cpu.Seconds()/1e9, "cpuGB/s")
			}
		}
		file := func() { VecDotRows(Q4_0, rows, size, s.nRows, act, s.n, out) }
		q4x16 := func(vnni bool) func() {
			return func() {
				q4x16VNNI = vnni
				if err := VecDotRowsQ4_0X16(packed, s.nRows, act, s.n, out); err != nil {
					b.Fatal(err)
				}
			}
		}
		for round := range 3 {
			for _, level := range levels {
				name := fmt.Sprintf("n=%d/rows=%d/%s/", s.n, s.nRows, level)
				b.Run(fmt.Sprintf("%sfile/%d", name, round), timed(level, file))
				if level == "avx512" {
					b.Run(fmt.Sprintf("%sq4x16/%d", name, round), timed(level, q4x16(false)))
					continue
				}
				if cpu.X86.HasAVXVNNI {
					b.Run(fmt.Sprintf("%sq4x16-vnni/%d", name, round), timed(level, q4x16(true)))
				}
				b.Run(fmt.Sprintf("%sq4x16-maddubs/%d", name, round), timed(level, q4x16(false)))
			}
		}
	}
}

// BenchmarkRepackQ4_0X16 measures the load-time copy into the interleave
// (bytes: the file's) and back.
func BenchmarkRepackQ4_0X16(b *testing.B) {
	r := rand.New(rand.NewPCG(38, 44))
	const n, nRows = 4096, 4096
	size := n / 32 * q4_0Bytes
	rows := rawQ4_0Rows(r, nRows, n, false)
	packed := make([]byte, Q4_0X16Size(nRows, n))
	b.Run("repack", func(b *testing.B) {
		b.SetBytes(int64(len(rows)))
		for b.Loop() {
			if err := RepackQ4_0X16(packed, rows, size, nRows, n); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unpack", func(b *testing.B) {
		b.SetBytes(int64(len(rows)))
		for b.Loop() {
			if err := UnpackQ4_0X16(rows, packed, nRows, n); err != nil {
				b.Fatal(err)
			}
		}
	})
}
