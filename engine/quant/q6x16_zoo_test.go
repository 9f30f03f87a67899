package quant_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/churon/churon/engine/quant"
)

// TestQ6_KX16Zoo runs the 16-row interleave on llama-quantize's own Q6_K
// tensors (every one in the Q6_K and Q4_K_M zoo models, all rows and all
// but the last three, so a group is partial): every product bit-identical
// to VecDot of the file's row, and the interleave unpacked back to the
// file's bytes.
func TestQ6_KX16Zoo(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 10))
	checked := 0
	for _, model := range []string{"Q6_K", "Q4_K_M-mixed"} {
		f := openZoo(t, model)
		for i := range f.Tensors {
			ti := &f.Tensors[i]
			if ti.Type != quant.Q6_K || len(ti.Shape) != 2 {
				continue
			}
			_, data := tensorBytes(t, f, ti.Name)
			n, rows := int(ti.Shape[0]), int(ti.Shape[1])
			size, _ := quant.Q6_K.RowSize(n)
			x := make([]float32, n)
			for j := range x {
				x[j] = float32(r.NormFloat64())
			}
			asize, _ := quant.Q8_K.RowSize(n)
			act := make([]byte, asize)
			if err := quant.QuantizeActivations(quant.Q8_K, x, act); err != nil {
				t.Fatal(err)
			}
			for _, nRows := range []int{rows, rows - 3} {
				packed := make([]byte, quant.Q6KX16Size(nRows, n))
				if err := quant.RepackQ6_KX16(packed, data, size, nRows, n); err != nil {
					t.Fatalf("%s %s: %v", model, ti.Name, err)
				}
				out := make([]float32, nRows)
				if err := quant.VecDotRowsQ6_KX16(packed, nRows, act, n, out); err != nil {
					t.Fatalf("%s %s: %v", model, ti.Name, err)
				}
				for row := range nRows {
					want := quant.VecDot(quant.Q6_K, data[row*size:(row+1)*size], act, n)
					if math.Float32bits(out[row]) != math.Float32bits(want) {
						t.Errorf("%s %s (%d rows): row %d = %g, VecDot %g", model, ti.Name, nRows, row, out[row], want)
					}
				}
				back := make([]byte, nRows*size)
				if err := quant.UnpackQ6_KX16(back, packed, nRows, n); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(back, data[:nRows*size]) {
					t.Errorf("%s %s (%d rows): unpacked rows differ from the file's", model, ti.Name, nRows)
				}
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no Q6_K tensors in the zoo models")
	}
}
