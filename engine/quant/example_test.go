package quant_test

import (
	"fmt"

	"github.com/churon/churon/engine/quant"
)

// A 2×256 weight matrix in Q4_K times a vector, the way the CPU backend
// does it: quantize the activations once, then one VecDot per row.
func ExampleVecDot() {
	const n, rows = 256, 2
	wf := make([]float32, rows*n)
	x := make([]float32, n)
	for i := range wf {
		wf[i] = float32(i%n-128) / 128 // row r is a ramp ...
		if i >= n {
			wf[i] = -wf[i] // ... and its negation
		}
	}
	for i := range x {
		x[i] = 1
	}

	wt := quant.Q4_K
	rowBytes, _ := wt.RowSize(n)
	w := make([]byte, rows*rowBytes)
	if err := quant.Quantize(wt, wf, w); err != nil {
		panic(err)
	}
	at := quant.VecDotType(wt)
	size, _ := at.RowSize(n)
	act := make([]byte, size)
	if err := quant.Quantize(at, x, act); err != nil {
		panic(err)
	}
	for r := 0; r < rows; r++ {
		got := quant.VecDot(wt, w[r*rowBytes:(r+1)*rowBytes], act, n)
		want := quant.VecDotF32(wf[r*n:(r+1)*n], x)
		fmt.Printf("row %d: %.2f (float weights: %.2f)\n", r, got, want)
	}
	fmt.Println(at, rowBytes, "bytes per row")
	// Output:
	// row 0: -1.07 (float weights: -1.00)
	// row 1: 1.07 (float weights: 1.00)
	// Q8_K 144 bytes per row
}
