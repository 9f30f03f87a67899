//go:build amd64 && !noasm

package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDecAVX2Rows pins the four-row decode kernels to the one-row
// kernels bit for bit (which simd_test.go pins to the generic twin), for
// odd block counts, padded strides and every remainder of four rows, and
// checks that they write no further than nRows.
func TestDecAVX2Rows(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 on this machine")
	}
	defer setSIMDLevel("avx2")()
	r := rand.New(rand.NewPCG(35, 36))
	for _, c := range []struct {
		typ Type
		one func(w, x *byte, nb int) float32
	}{{Q4_0, dotQ4_0AVX2}, {Q8_0, dotQ8_0AVX2}} {
		if !decAVX2Kernel(c.typ) {
			t.Fatalf("%v: no four-row kernel", c.typ)
		}
		for _, nb := range []int{1, 2, 3, 7, 28, 29} {
			n := 32 * nb
			rows, _, stride := weightRows(t, r, c.typ, n, 13, 6)
			act, _, _ := actRows(t, r, Q8_0, n, 1, 0)
			for _, nRows := range []int{4, 5, 6, 7, 8, 13} {
				out := make([]float32, nRows+1)
				out[nRows] = 42
				vecDotRowsDecAVX2(c.typ, rows, stride, nRows, act, nb, out[:nRows])
				if out[nRows] != 42 {
					t.Fatalf("%v nb=%d nRows=%d: wrote past the rows", c.typ, nb, nRows)
				}
				for i := range nRows {
					want := c.one(&rows[i*stride], &act[0], nb)
					if math.Float32bits(out[i]) != math.Float32bits(want) {
						t.Errorf("%v nb=%d nRows=%d: row %d = %g, one-row kernel %g", c.typ, nb, nRows, i, out[i], want)
					}
				}
			}
		}
	}
}
