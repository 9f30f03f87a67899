package quant

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// BenchmarkVecDotTileActs measures a batched decode step's tile, a
// job's block of weight rows (in cache) against 1 to 8 activation rows,
// at every level this machine has, and reports the thread's CPU time per
// activation row (ns/act): on a loaded machine wall time says little.
// With every row count decoding each weight block once, ns/act falls as
// rows are added.
func BenchmarkVecDotTileActs(b *testing.B) {
	r := rand.New(rand.NewPCG(71, 72))
	const n, nRows = 896, 256
	for _, typ := range []Type{Q4_0, Q8_0} {
		rows, wrow, _ := weightRows(b, r, typ, n, nRows, 0)
		acts, arow, _ := actRows(b, r, VecDotType(typ), n, 64, 0)
		out := make([]float32, nRows*64)
		for _, k := range []int{1, 2, 3, 4, 5, 6, 7, 8, 16, 64} {
			for _, level := range simdLevels() {
				b.Run(fmt.Sprintf("%v/acts=%d/impl=%s", typ, k, level), func(b *testing.B) {
					defer setSIMDLevel(level)()
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					b.SetBytes(int64(len(rows)))
					_ = wrow
					start := threadCPU()
					for b.Loop() {
						VecDotTile(typ, rows, wrow, nRows, acts, arow, k, n, out, nRows)
					}
					cpu := threadCPU() - start
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(k), "ns/act")
				})
			}
		}
	}
}

// benchThreadCPU runs f(i) for i in [0, b.N) on a locked OS thread and
// reports bytes per op and, beside the wall-clock MB/s, cpuGB/s: the
// bytes over the thread's CPU time, which on a shared machine does not
// count the time the thread waited for a core.
func benchThreadCPU(b *testing.B, bytes int, f func(i int)) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.SetBytes(int64(bytes))
	start := threadCPU()
	for i := range b.N {
		f(i)
	}
	cpu := threadCPU() - start
	b.ReportMetric(float64(bytes)*float64(b.N)/cpu.Seconds()/1e9, "cpuGB/s")
}

// threadCPU is the calling thread's user and system time so far.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
