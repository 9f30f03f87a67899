//go:build amd64 && !noasm

package quant

import (
	"math"
	"math/rand"
	"testing"
)

// TestGOrderRowsMatchGeneric pins the generic-order rows kernels to
// dotQ4_0/dotQ8_0 bit for bit: random blocks (scales of both signs),
// block counts 1, 2, odd and large, row counts below, at and past 16 and
// not multiples of it, strides past the row size.
func TestGOrderRowsMatchGeneric(t *testing.T) {
	if !hasAVX512 {
		t.Skip("no avx512 level on this CPU")
	}
	defer setSIMDLevel("avx512")()
	rng := rand.New(rand.NewSource(22))
	for _, w := range []Type{Q4_0, Q8_0} {
		for _, nb := range []int{1, 2, 3, 7, 28, 113, 448} {
			for _, nRows := range []int{1, 2, 5, 15, 16, 17, 31, 33, 64} {
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
