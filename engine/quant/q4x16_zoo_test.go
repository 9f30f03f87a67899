package quant_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/churon/churon/engine/quant"
)

// TestQ4_0X16Zoo runs the 16-row interleave on llama-quantize's own Q4_0
// tensors (every one in the Q4_0 zoo model, all rows and all but the
// last three, so a group is partial), at every level the product runs
// at: every product bit-identical to VecDot of the file's row, and the
// interleave unpacked back to the file's bytes.
func TestQ4_0X16Zoo(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 42))
	f := openZoo(t, "Q4_0")
	checked := 0
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		if ti.Type != quant.Q4_0 || len(ti.Shape) != 2 {
			continue
		}
		_, data := tensorBytes(t, f, ti.Name)
		n, rows := int(ti.Shape[0]), int(ti.Shape[1])
		size, _ := quant.Q4_0.RowSize(n)
		x := make([]float32, n)
		for j := range x {
			x[j] = float32(r.NormFloat64())
		}
		asize, _ := quant.Q8_0.RowSize(n)
		act := make([]byte, asize)
		if err := quant.QuantizeActivations(quant.Q8_0, x, act); err != nil {
			t.Fatal(err)
		}
		for _, nRows := range []int{rows, rows - 3} {
			packed := make([]byte, quant.Q4_0X16Size(nRows, n))
			if err := quant.RepackQ4_0X16(packed, data, size, nRows, n); err != nil {
				t.Fatalf("%s: %v", ti.Name, err)
			}
			out := make([]float32, nRows)
			if err := quant.VecDotRowsQ4_0X16(packed, nRows, act, n, out); err != nil {
				t.Fatalf("%s: %v", ti.Name, err)
			}
			for row := range nRows {
				want := quant.VecDot(quant.Q4_0, data[row*size:(row+1)*size], act, n)
				if math.Float32bits(out[row]) != math.Float32bits(want) {
					t.Errorf("%s (%d rows): row %d = %g, VecDot %g", ti.Name, nRows, row, out[row], want)
				}
			}
			back := make([]byte, nRows*size)
			if err := quant.UnpackQ4_0X16(back, packed, nRows, n); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back, data[:nRows*size]) {
				t.Errorf("%s (%d rows): unpacked rows differ from the file's", ti.Name, nRows)
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no Q4_0 tensors in the zoo model")
	}
}
