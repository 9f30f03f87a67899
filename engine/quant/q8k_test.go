package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQuantizeQ8_KLevels pins the SIMD rounding of activations to Q8_K to
// quantQ8_K, byte for byte, on every level: ordinary blocks and blocks of
// zeros, subnormals, huge and tiny values, exact halves, a block whose
// largest magnitude is negative, and the blocks the SIMD code leaves to
// the Go code (a NaN or an infinity, +amax and -amax both, a scale that
// overflows).
func TestQuantizeQ8_KLevels(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 54))
	const nb = 6
	rows := map[string][]float32{}
	for _, name := range []string{"normal", "zeros", "subnormal", "huge", "tiny", "halves", "negative", "both signs", "nan", "inf", "mixed"} {
		x := normalData(r, nb*QK_K, 1)
		b1 := x[QK_K : 2*QK_K] // the block each case changes
		switch name {
		case "zeros":
			clear(b1)
			b1[7] = float32(math.Copysign(0, -1))
		case "subnormal":
			for i := range b1 {
				b1[i] = float32(r.NormFloat64()) * 0x1p-130
			}
		case "huge":
			for i := range b1 {
				b1[i] *= 3e37
			}
		case "tiny": // -127/max overflows to an infinity (as for subnormals)
			for i := range b1 {
				b1[i] = float32(r.NormFloat64()) * 0x1p-146
			}
			b1[3] = 0x1p-144
		case "halves":
			// max -127 makes iscale 1, so iscale·v = v: exact halves test ties.
			for i := range b1 {
				b1[i] = float32(r.IntN(252)-126) + 0.5
			}
			b1[0] = -127
		case "negative":
			b1[200] = -9
		case "both signs":
			b1[10], b1[250] = 9, -9
		case "nan":
			b1[40] = float32(math.NaN())
		case "inf":
			b1[70] = float32(math.Inf(1))
			x[nb*QK_K-1] = float32(math.Inf(-1))
		case "mixed":
			x[3] = float32(math.NaN())
			b1[33] = float32(math.Inf(-1))
			clear(x[2*QK_K : 3*QK_K])
		}
		rows[name] = x
	}
	size, _ := Q8_K.RowSize(nb * QK_K)
	want := func(x []float32) []byte {
		b := make([]byte, size)
		for i := range nb {
			quantQ8_K(x[i*QK_K:(i+1)*QK_K], b[i*292:(i+1)*292])
		}
		return b
	}
	for _, l := range simdLevels() {
		restore := setSIMDLevel(l)
		for name, x := range rows {
			got := make([]byte, size)
			if err := QuantizeActivations(Q8_K, x, got); err != nil {
				t.Fatal(err)
			}
			w := want(x)
			for i := range got {
				if got[i] != w[i] {
					t.Errorf("%s %s: byte %d (block %d, offset %d) = %#x, Go code %#x", l, name, i, i/292, i%292, got[i], w[i])
					break
				}
			}
		}
		if l == "avx512" || l == "avx2" {
			// The SIMD code takes ordinary blocks (so the comparisons
			// above test it) and stops at one it leaves to the Go code.
			buf := make([]byte, size)
			for name, k := range map[string]int{"normal": nb, "zeros": nb, "negative": nb, "halves": nb, "huge": nb, "subnormal": 1, "nan": 1, "both signs": 1, "tiny": 1} {
				if got := quantFast(Q8_K, rows[name], buf); got != k {
					t.Errorf("%s %s: %d blocks rounded by SIMD, want %d", l, name, got, k)
				}
			}
		}
		restore()
	}
}

// BenchmarkQuantizeActivations rounds a decode step's activation row
// (2,048 and 5,632 values: a 1.1B model's width and its FFN's) to the
// types the products take, at each level. A decode step rounds each
// product's input once, on one thread, while the others wait.
func BenchmarkQuantizeActivations(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, t := range []Type{Q8_0, Q8_K} {
		for _, n := range []int{2048, 5632} {
			x := normalData(r, n, 1)
			size, _ := t.RowSize(n)
			dst := make([]byte, size)
			for _, l := range simdLevels() {
				b.Run(fmt.Sprintf("%v/%d/%s", t, n, l), func(b *testing.B) {
					defer setSIMDLevel(l)()
					b.SetBytes(int64(4 * n))
					for b.Loop() {
						if err := QuantizeActivations(t, x, dst); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
