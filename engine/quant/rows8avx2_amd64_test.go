//go:build amd64 && !noasm

package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRows8AVX2 pins the eight-row decode kernels to the generic twins
// bit for bit, for one, two, odd and large block counts, padded strides
// and row counts below, at and past multiples of eight, and checks that
// they write no further than nRows.
func TestRows8AVX2(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 on this machine")
	}
	defer setSIMDLevel("avx2")()
	defer func(was bool) { rows8On = was }(rows8On)
	rows8On = true
	r := rand.New(rand.NewPCG(36, 22))
	for _, c := range []struct {
		typ  Type
		twin func(w, x []byte, nb int) float32
	}{{Q4_0, dotQ4_0}, {Q8_0, dotQ8_0}} {
		if !rows8AVX2Fits(c.typ) {
			t.Fatalf("%v: not on the eight-row path", c.typ)
		}
		for _, nb := range []int{1, 2, 3, 7, 28, 29, 160} {
			n := 32 * nb
			rows, _, stride := weightRows(t, r, c.typ, n, 27, 6)
			act, _, _ := actRows(t, r, Q8_0, n, 1, 0)
			for _, nRows := range []int{1, 5, 7, 8, 9, 15, 16, 27} {
				out := make([]float32, nRows+1)
				out[nRows] = 42
				vecDotRows8AVX2(c.typ, rows, stride, nRows, act, nb, out[:nRows])
				if out[nRows] != 42 {
					t.Fatalf("%v nb=%d nRows=%d: wrote past the rows", c.typ, nb, nRows)
				}
				for i := range nRows {
					want := c.twin(rows[i*stride:], act, nb)
					if math.Float32bits(out[i]) != math.Float32bits(want) {
						t.Errorf("%v nb=%d nRows=%d: row %d = %g, generic twin %g", c.typ, nb, nRows, i, out[i], want)
					}
				}
			}
		}
	}
}
