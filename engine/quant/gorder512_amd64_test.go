//go:build amd64 && !noasm

package quant

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"testing"
)

// TestGOrderRowsMatchGeneric pins the generic-order rows kernels to
// dotQ4_0/dotQ8_0 bit for bit: random blocks (scales of both signs),
// block counts 1, 2, odd and large, row counts below, at and past 16 and
// not multiples of it (up to 9 full groups, odd and even), rows both
// sides of wideGOrderStride (Q4_0's narrow and wide kernels), strides
// past the row size.
func TestGOrderRowsMatchGeneric(t *testing.T) {
	if !hasAVX512 {
		t.Skip("no avx512 level on this CPU")
	}
	defer setSIMDLevel("avx512")()
	rng := rand.New(rand.NewSource(22))
	for _, w := range []Type{Q4_0, Q8_0} {
		for _, nb := range []int{1, 2, 3, 4, 5, 7, 8, 28, 113, 128, 448} {
			for _, nRows := range []int{1, 2, 5, 15, 16, 17, 31, 33, 47, 48, 64, 79, 144} {
				for _, pad := range []int{0, 6} {
					n := 32 * nb
					wrow, _ := w.RowSize(n)
					stride := wrow + pad
					rows := make([]byte, stride*nRows)
					rng.Read(rows)
					for r := range nRows {
						setScales(rng, rows[r*stride:r*stride+wrow], wrow/nb)
					}
					act := make([]byte, 34*nb)
					rng.Read(act)
					setScales(rng, act, 34)
					got := make([]float32, nRows)
					dotRowsGOrder(w, &rows[0], stride, nRows, &act[0], nb, &got[0])
					for r := range nRows {
						row := rows[r*stride : r*stride+wrow]
						want := dotQ4_0(row, act, nb)
						if w == Q8_0 {
							want = dotQ8_0(row, act, nb)
						}
						if math.Float32bits(got[r]) != math.Float32bits(want) {
							t.Fatalf("%v nb=%d rows=%d pad=%d: row %d = %v (%#x), generic %v (%#x)",
								w, nb, nRows, pad, r, got[r], math.Float32bits(got[r]), want, math.Float32bits(want))
						}
					}
				}
			}
		}
	}
}

// setScales writes a random finite half scale in [-2, 2) at the start
// of every bs-byte block of b (random bytes there could be NaN, whose
// payload the comparison would not forgive).
func setScales(rng *rand.Rand, b []byte, bs int) {
	for i := 0; i+bs <= len(b); i += bs {
		h := FP32ToFP16(rng.Float32()*4 - 2)
		b[i], b[i+1] = byte(h), byte(h>>8)
	}
}

// TestGOrderDispatch checks that with gOrderDecode on, every exported
// one-activation-row entry point (VecDot, VecDotRows, VecDotMulti and
// VecDotTile of one activation row) returns the generic code's bits for
// Q4_0 and Q8_0 at the avx512 level.
func TestGOrderDispatch(t *testing.T) {
	if !hasAVX512 {
		t.Skip("no avx512 level on this CPU")
	}
	defer setSIMDLevel("avx512")()
	defer func(v bool) { gOrderDecode = v }(gOrderDecode)
	gOrderDecode = true
	rng := rand.New(rand.NewSource(17))
	for _, w := range []Type{Q4_0, Q8_0} {
		for _, c := range []struct{ nb, nRows int }{{1, 3}, {2, 16}, {28, 37}, {152, 21}, {513, 5}} {
			n := 32 * c.nb
			wrow, _ := w.RowSize(n)
			stride := wrow + 2
			rows := make([]byte, stride*c.nRows)
			rng.Read(rows)
			for r := range c.nRows {
				setScales(rng, rows[r*stride:r*stride+wrow], wrow/c.nb)
			}
			act := make([]byte, 34*c.nb)
			rng.Read(act)
			setScales(rng, act, 34)
			viaRows := make([]float32, c.nRows)
			VecDotRows(w, rows, stride, c.nRows, act, n, viaRows)
			viaTile := make([]float32, c.nRows)
			VecDotTile(w, rows, stride, c.nRows, act, len(act), 1, n, viaTile, c.nRows)
			for r := range c.nRows {
				row := rows[r*stride : r*stride+wrow]
				want := vecDotGeneric(w, row, act, n)
				var viaMulti [1]float32
				VecDotMulti(w, row, act, len(act), 1, n, viaMulti[:])
				for _, g := range []struct {
					name string
					got  float32
				}{{"VecDot", VecDot(w, row, act, n)}, {"VecDotRows", viaRows[r]}, {"VecDotMulti", viaMulti[0]}, {"VecDotTile", viaTile[r]}} {
					if math.Float32bits(g.got) != math.Float32bits(want) {
						t.Errorf("%v nb=%d rows=%d: %s row %d = %v, generic %v", w, c.nb, c.nRows, g.name, r, g.got, want)
					}
				}
			}
		}
	}
}

// BenchmarkGOrderDecode compares a decode step's matrix-vector product
// through the lane kernels (gOrderDecode off) and the generic-order rows
// kernels (on), VecDotRows 144 rows per call as the backend's jobs do:
// "cache" runs one matrix of the given shape (a few MiB, inside the L3),
// "memory" 128 MiB of copies of it. cpuMB/s divides by the thread's CPU
// time (threadCPU) instead of the wall time, which a shared machine's
// other processes disturb far less.
func BenchmarkGOrderDecode(b *testing.B) {
	if !hasAVX512 {
		b.Skip("no avx512 level on this CPU")
	}
	defer func(v bool) { gOrderDecode = v }(gOrderDecode)
	rng := rand.New(rand.NewSource(5))
	const seg = 144
	for _, c := range []struct {
		typ     Type
		rows, n int
		fromMem bool
	}{{Q4_0, 4864, 896, false}, {Q8_0, 4864, 896, false}, {Q4_0, 4864, 896, true}, {Q8_0, 4864, 896, true},
		{Q4_0, 14336, 4096, true}, {Q8_0, 14336, 4096, true},
		{Q4_0, 1024, 896, false}, {Q4_0, 512, 4096, false}, {Q4_0, 4096, 14336, true}} {
		wrow, _ := c.typ.RowSize(c.n)
		one := make([]byte, c.rows*wrow)
		rng.Read(one)
		for r := range c.rows {
			setScales(rng, one[r*wrow:(r+1)*wrow], wrow/(c.n/32))
		}
		rows, where := one, "cache"
		if c.fromMem {
			rows, where = make([]byte, max(1, (128<<20)/len(one))*len(one)), "memory"
			for i := 0; i < len(rows); i += len(one) {
				copy(rows[i:], one)
			}
		}
		nRows := len(rows) / wrow
		act := make([]byte, 34*(c.n/32))
		rng.Read(act)
		setScales(rng, act, 34)
		out := make([]float32, nRows)
		for _, on := range []bool{false, true} {
			name := fmt.Sprintf("%v/%dx%d/%s/gorder=%v", c.typ, c.rows, c.n, where, on)
			b.Run(name, func(b *testing.B) {
				gOrderDecode = on
				b.SetBytes(int64(len(rows)))
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu0 := threadCPU()
				for b.Loop() {
					for lo := 0; lo < nRows; lo += seg {
						hi := min(nRows, lo+seg)
						VecDotRows(c.typ, rows[lo*wrow:hi*wrow], wrow, hi-lo, act, c.n, out[lo:hi])
					}
				}
				if cpu1 := threadCPU(); cpu1 > cpu0 {
					b.ReportMetric(float64(b.N)*float64(len(rows))/1e6/(cpu1-cpu0).Seconds(), "cpuMB/s")
				}
			})
		}
	}
}
