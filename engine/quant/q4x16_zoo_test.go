package quant_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/churon/churon/engine/quant"
)

// x16Zoo is one 16-row interleave's functions, and the zoo models whose
// tensors of its type it is run on.
type x16Zoo struct {
	typ    quant.Type
	models []string
	size   func(nRows, n int) int
	repack func(dst, rows []byte, stride, nRows, n int) error
	rows   func(packed []byte, nRows int, act []byte, n int, out []float32) error
	unpack func(dst, packed []byte, nRows, n int) error
	// exact: the product is bit-identical to VecDot on every
	// architecture, not only on amd64.
	exact bool
}

// TestQ4_0X16Zoo runs the 16-row interleaves on llama-quantize's own
// Q4_0 and Q8_0 tensors (every one in the Q4_0 and Q8_0 zoo models, all
// rows and all but the last three, so a group is partial): every product
// bit-identical to VecDot of the file's row, and the interleave unpacked
// back to the file's bytes.
func TestQ4_0X16Zoo(t *testing.T) {
	for _, c := range []x16Zoo{
		{quant.Q4_0, []string{"Q4_0"}, quant.Q4_0X16Size, quant.RepackQ4_0X16, quant.VecDotRowsQ4_0X16, quant.UnpackQ4_0X16, false},
		{quant.Q8_0, []string{"Q8_0"}, quant.Q8_0X16Size, quant.RepackQ8_0X16, quant.VecDotRowsQ8_0X16, quant.UnpackQ8_0X16, false},
	} {
		t.Run(c.typ.String(), func(t *testing.T) { testX16Zoo(t, c, rand.New(rand.NewPCG(38, 42))) })
	}
}

// TestQ6_KX16Zoo runs the 16-row interleave on llama-quantize's own Q6_K
// tensors (every one in the Q6_K and Q4_K_M zoo models, all rows and all
// but the last three, so a group is partial): every product bit-identical
// to VecDot of the file's row, and the interleave unpacked back to the
// file's bytes.
func TestQ6_KX16Zoo(t *testing.T) {
	testX16Zoo(t, x16Zoo{quant.Q6_K, []string{"Q6_K", "Q4_K_M-mixed"},
		quant.Q6KX16Size, quant.RepackQ6_KX16, quant.VecDotRowsQ6_KX16, quant.UnpackQ6_KX16, true},
		rand.New(rand.NewPCG(38, 10)))
}

// testX16Zoo repacks every 2-D tensor of c.typ in c's zoo models, all
// rows and all but the last three, and checks the product against VecDot
// of each file row with a random activation, and the unpack against the
// file's bytes.
func testX16Zoo(t *testing.T, c x16Zoo, r *rand.Rand) {
	actType := quant.VecDotType(c.typ)
	checked := 0
	for _, model := range c.models {
		f := openZoo(t, model)
		for i := range f.Tensors {
			ti := &f.Tensors[i]
			if ti.Type != c.typ || len(ti.Shape) != 2 {
				continue
			}
			_, data := tensorBytes(t, f, ti.Name)
			n, rows := int(ti.Shape[0]), int(ti.Shape[1])
			size, _ := c.typ.RowSize(n)
			x := make([]float32, n)
			for j := range x {
				x[j] = float32(r.NormFloat64())
			}
			asize, _ := actType.RowSize(n)
			act := make([]byte, asize)
			if err := quant.QuantizeActivations(actType, x, act); err != nil {
				t.Fatal(err)
			}
			for _, nRows := range []int{rows, rows - 3} {
				packed := make([]byte, c.size(nRows, n))
				if err := c.repack(packed, data, size, nRows, n); err != nil {
					t.Fatalf("%s %s: %v", model, ti.Name, err)
				}
				out := make([]float32, nRows)
				if err := c.rows(packed, nRows, act, n, out); err != nil {
					t.Fatalf("%s %s: %v", model, ti.Name, err)
				}
				for row := range nRows {
					want := quant.VecDot(c.typ, data[row*size:(row+1)*size], act, n)
					// Bit for bit where exact or on amd64 (the one rounding
					// rule); the NEON Q4_0/Q8_0 kernels keep partial sums in
					// lanes (last bits differ).
					if math.Float32bits(out[row]) != math.Float32bits(want) &&
						(c.exact || runtime.GOARCH == "amd64" || math.Abs(float64(out[row]-want)) > 1e-4*(1+math.Abs(float64(want)))) {
						t.Errorf("%s %s (%d rows): row %d = %g, VecDot %g", model, ti.Name, nRows, row, out[row], want)
					}
				}
				back := make([]byte, nRows*size)
				if err := c.unpack(back, packed, nRows, n); err != nil {
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
		t.Fatalf("no %v tensors in the zoo models %v", c.typ, c.models)
	}
}
