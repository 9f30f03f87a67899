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
	runAt(t, "avx512")
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

// TestGOrderDispatch checks the rounding rule: at every level this CPU
// has, with the prompt tiles on and off, every exported Q4_0 and Q8_0
// entry point returns the generic twin's bits — VecDot, VecDotRows,
// VecDotMulti of 1 to 9 activation rows and VecDotTile of 1 to 20 —
// so that a row's result does not depend on how many rows share its
// call. Block counts of one, odd and real widths (whose strides cross
// the kernels' and the tiles' row-size thresholds), padded strides, row
// counts below, at and past the 8- and 16-row groups.
func TestGOrderDispatch(t *testing.T) {
	forLevels(t, func(t *testing.T, level string) {
		for _, tiles := range []bool{true, false} {
			restore := setPromptTiles(tiles)
			rng := rand.New(rand.NewSource(17))
			for _, w := range []Type{Q4_0, Q8_0} {
				for _, c := range []struct{ nb, nRows int }{{1, 3}, {2, 1}, {3, 40}, {7, 17}, {28, 37}, {64, 16}, {128, 9}, {152, 21}, {513, 5}} {
					checkRule(t, rng, fmt.Sprintf("%s tiles=%v %v nb=%d", level, tiles, w, c.nb), w, c.nb, c.nRows)
				}
			}
			restore()
		}
	})
}

// checkRule runs TestGOrderDispatch's checks on nRows random weight rows
// of nb blocks of w against 20 random activation rows.
func checkRule(t *testing.T, rng *rand.Rand, name string, w Type, nb, nRows int) {
	t.Helper()
	const maxActs = 20
	n := 32 * nb
	wrow, _ := w.RowSize(n)
	stride := wrow + 3
	rows := make([]byte, stride*nRows)
	rng.Read(rows)
	for r := range nRows {
		setScales(rng, rows[r*stride:r*stride+wrow], wrow/nb)
	}
	arow := 34 * nb
	astride := arow + 5
	acts := make([]byte, astride*maxActs)
	rng.Read(acts)
	for a := range maxActs {
		setScales(rng, acts[a*astride:a*astride+arow], 34)
	}
	want := make([]float32, maxActs*nRows) // [act][row]
	for a := range maxActs {
		for r := range nRows {
			want[a*nRows+r] = vecDotGeneric(w, rows[r*stride:r*stride+wrow], acts[a*astride:a*astride+arow], n)
		}
	}
	bad := 0
	check := func(what string, a, r int, got float32) {
		if math.Float32bits(got) != math.Float32bits(want[a*nRows+r]) && bad < 5 {
			bad++
			t.Errorf("%s rows=%d: %s [act %d, row %d] = %v, generic %v", name, nRows, what, a, r, got, want[a*nRows+r])
		}
	}
	out := make([]float32, maxActs*(nRows+1))
	for a := range maxActs {
		act := acts[a*astride : a*astride+arow]
		VecDotRows(w, rows, stride, nRows, act, n, out[:nRows])
		for r := range nRows {
			check("VecDotRows", a, r, out[r])
			check("VecDot", a, r, VecDot(w, rows[r*stride:r*stride+wrow], act, n))
		}
	}
	for r := range nRows {
		for k := 1; k <= 9; k++ {
			VecDotMulti(w, rows[r*stride:r*stride+wrow], acts, astride, k, n, out[:k])
			for a := range k {
				check(fmt.Sprintf("VecDotMulti(%d)", k), a, r, out[a])
			}
		}
	}
	for k := 1; k <= maxActs; k++ {
		ostride := nRows + 1
		VecDotTile(w, rows, stride, nRows, acts, astride, k, n, out[:k*ostride], ostride)
		for a := range k {
			for r := range nRows {
				check(fmt.Sprintf("VecDotTile(%d)", k), a, r, out[a*ostride+r])
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
