package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// BenchmarkMatMulQ4_KInterleave times one Q4_K product of n input rows
// (a decode step, a batched one, a prompt) on the file's layout and on
// the interleave, A and B alternated in one run: 4,096 × 2,048 weights
// (4.5 MiB, a 1B model's projection) on the default threads.
func BenchmarkMatMulQ4_KInterleave(b *testing.B) {
	const cols, rows = 2048, 4096
	r := rand.New(rand.NewPCG(22, 16))
	vals := make([]float32, cols*rows)
	for i := range vals {
		vals[i] = float32(r.NormFloat64())
	}
	size, _ := quant.Q4_K.RowSize(cols)
	data := make([]byte, rows*size)
	if err := quant.Quantize(quant.Q4_K, vals, data); err != nil {
		b.Fatal(err)
	}
	t := &backend.Tensor{Name: "w", Type: quant.Q4_K, Ne: [4]int{cols, rows, 1, 1}, Data: data}
	d := NewDevice(0)
	defer d.Close()
	l := interleavable(t)
	if l == nil {
		b.Skip("no interleave kernel at this level")
	}
	w, err := NewWeight(t)
	if err != nil {
		b.Fatal(err)
	}
	if err := d.interleave(w, l); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1, 2, 4, 8, 15, 16, 32, 128} {
		x := make([]float32, n*cols)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		dst := make([]float32, n*rows)
		for round := range 2 {
			for _, c := range []struct {
				name string
				il   *interleaved
			}{{"file", nil}, {"kx16", w.il}} {
				b.Run(fmt.Sprintf("n=%d/%s/%d", n, c.name, round), func(b *testing.B) {
					b.SetBytes(int64(len(data)))
					for b.Loop() {
						d.b.matMul(dst, t, c.il, x, n)
					}
				})
			}
		}
	}
}
