package quant_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/churon/churon/engine/quant"
)

// TestQ4_0X16Zoo runs the 16-row interleaves on llama-quantize's own
// Q4_0 and Q8_0 tensors (every one in the Q4_0 and Q8_0 zoo models, all
// rows and all but the last three, so a group is partial): every product
// bit-identical to VecDot of the file's row, and the interleave unpacked
// back to the file's bytes.
func TestQ4_0X16Zoo(t *testing.T) {
	for _, c := range []struct {
		typ    quant.Type
		size   func(nRows, n int) int
		repack func(dst, rows []byte, stride, nRows, n int) error
		rows   func(packed []byte, nRows int, act []byte, n int, out []float32) error
		unpack func(dst, packed []byte, nRows, n int) error
	}{
		{quant.Q4_0, quant.Q4_0X16Size, quant.RepackQ4_0X16, quant.VecDotRowsQ4_0X16, quant.UnpackQ4_0X16},
		{quant.Q8_0, quant.Q8_0X16Size, quant.RepackQ8_0X16, quant.VecDotRowsQ8_0X16, quant.UnpackQ8_0X16},
	} {
		t.Run(c.typ.String(), func(t *testing.T) {
			testX16Zoo(t, c.typ, c.size, c.repack, c.rows, c.unpack)
		})
	}
}

func testX16Zoo(t *testing.T, typ quant.Type, sizeOf func(nRows, n int) int,
	repack func(dst, rows []byte, stride, nRows, n int) error,
	rowsOf func(packed []byte, nRows int, act []byte, n int, out []float32) error,
	unpack func(dst, packed []byte, nRows, n int) error) {
	r := rand.New(rand.NewPCG(38, 42))
	f := openZoo(t, typ.String())
	checked := 0
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		if ti.Type != typ || len(ti.Shape) != 2 {
			continue
		}
		_, data := tensorBytes(t, f, ti.Name)
		n, rows := int(ti.Shape[0]), int(ti.Shape[1])
		size, _ := typ.RowSize(n)
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
			packed := make([]byte, sizeOf(nRows, n))
			if err := repack(packed, data, size, nRows, n); err != nil {
				t.Fatalf("%s: %v", ti.Name, err)
			}
			out := make([]float32, nRows)
			if err := rowsOf(packed, nRows, act, n, out); err != nil {
				t.Fatalf("%s: %v", ti.Name, err)
			}
			for row := range nRows {
				want := quant.VecDot(typ, data[row*size:(row+1)*size], act, n)
				// Bit for bit on amd64 (the one rounding rule); the NEON
				// kernels keep partial sums in lanes (last bits differ).
				if math.Float32bits(out[row]) != math.Float32bits(want) &&
					(runtime.GOARCH == "amd64" || math.Abs(float64(out[row]-want)) > 1e-4*(1+math.Abs(float64(want)))) {
					t.Errorf("%s (%d rows): row %d = %g, VecDot %g", ti.Name, nRows, row, out[row], want)
				}
			}
			back := make([]byte, nRows*size)
			if err := unpack(back, packed, nRows, n); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back, data[:nRows*size]) {
				t.Errorf("%s (%d rows): unpacked rows differ from the file's", ti.Name, nRows)
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatalf("no %v tensors in the zoo model", typ)
	}
}
