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
	runAt(t, "avx2")
	r := rand.New(rand.NewPCG(36, 22))
	for _, c := range []struct {
		typ  Type
		twin func(w, x []byte, nb int) float32
	}{{Q4_0, dotQ4_0}, {Q8_0, dotQ8_0}} {
		if !rows8AVX2Fits(c.typ, 4<<10) {
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

// TestMultiGAVX2 pins the one-row and multi-activation kernels in the
// generic order to the generic twins bit for bit, for one, two, odd and
// large block counts and padded activation rows, and checks that the
// multi-activation ones write no further than their count.
func TestMultiGAVX2(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 on this machine")
	}
	r := rand.New(rand.NewPCG(36, 23))
	type multi func(w, x *byte, stride, nb int, out *float32)
	for _, c := range []struct {
		typ   Type
		twin  func(w, x []byte, nb int) float32
		one   func(w, x *byte, nb int) float32
		multi [5]multi
	}{
		{Q4_0, dotQ4_0, dotQ4_0GAVX2, [5]multi{2: dotQ4_0x2GAVX2, 3: dotQ4_0x3GAVX2, 4: dotQ4_0x4GAVX2}},
		{Q8_0, dotQ8_0, dotQ8_0GAVX2, [5]multi{2: dotQ8_0x2GAVX2, 3: dotQ8_0x3GAVX2, 4: dotQ8_0x4GAVX2}},
	} {
		for _, nb := range []int{1, 2, 3, 7, 29, 160} {
			n := 32 * nb
			w, _, _ := weightRows(t, r, c.typ, n, 1, 0)
			acts, _, stride := actRows(t, r, Q8_0, n, 4, 10)
			want := make([]float32, 4)
			for j := range want {
				want[j] = c.twin(w, acts[j*stride:], nb)
			}
			if got := c.one(&w[0], &acts[0], nb); math.Float32bits(got) != math.Float32bits(want[0]) {
				t.Errorf("%v nb=%d: one-row %g, generic twin %g", c.typ, nb, got, want[0])
			}
			for k := 2; k <= 4; k++ {
				out := []float32{42, 42, 42, 42, 42}
				c.multi[k](&w[0], &acts[0], stride, nb, &out[0])
				for j := range k {
					if math.Float32bits(out[j]) != math.Float32bits(want[j]) {
						t.Errorf("%v nb=%d x%d: out[%d] = %g, generic twin %g", c.typ, nb, k, j, out[j], want[j])
					}
				}
				if out[k] != 42 {
					t.Errorf("%v nb=%d x%d: wrote past the activations", c.typ, nb, k)
				}
			}
		}
	}
}
