package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestVecDotRowsQ4_KX16 repacks raw Q4_K rows (every quant, scale and
// min value, padded strides, partial groups of 16) and runs the
// interleave product at every level and through the Go twin: every
// result bit-identical to the generic product of the original row.
func TestVecDotRowsQ4_KX16(t *testing.T) {
	forLevels(t, func(t *testing.T, level string) {
		r := rand.New(rand.NewPCG(35, 16))
		for _, c := range []struct{ n, nRows, pad int }{
			{256, 1, 0}, {256, 16, 0}, {512, 5, 144}, {2304, 17, 0}, {768, 33, 16}, {4096, 48, 0},
		} {
			size, _ := Q4_K.RowSize(c.n)
			stride := size + c.pad
			raw := rawKRows(r, Q4_K, c.nRows, c.n)
			rows := make([]byte, c.nRows*stride)
			for i := range c.nRows {
				copy(rows[i*stride:], raw[i*size:(i+1)*size])
			}
			act := rawQ8KRows(r, 1, c.n)
			packed := make([]byte, KX16Size(c.nRows, c.n))
			if err := RepackQ4_KX16(packed, rows, stride, c.nRows, c.n); err != nil {
				t.Fatal(err)
			}
			out := make([]float32, c.nRows+1)
			out[c.nRows] = 42
			if err := VecDotRowsQ4_KX16(packed, c.nRows, act, c.n, out[:c.nRows]); err != nil {
				t.Fatal(err)
			}
			twin := make([]float32, c.nRows)
			kx16Generic(packed, c.nRows, act, c.n/QK_K, twin)
			for i := range c.nRows {
				want := vecDotGeneric(Q4_K, rows[i*stride:i*stride+size], act, c.n)
				if math.Float32bits(out[i]) != math.Float32bits(want) || math.Float32bits(twin[i]) != math.Float32bits(want) {
					t.Errorf("n=%d rows=%d: row %d = %g (twin %g), generic %g", c.n, c.nRows, i, out[i], twin[i], want)
				}
			}
			if out[c.nRows] != 42 {
				t.Errorf("n=%d rows=%d: wrote past the results", c.n, c.nRows)
			}
		}
	})
}

// TestRepackQ4_KX16Errors checks the refusals: widths that are not whole
// super-blocks, too little room, too few row bytes.
func TestRepackQ4_KX16Errors(t *testing.T) {
	rows := make([]byte, 2*144)
	for _, c := range []struct {
		name          string
		dst           int
		n, nRows, str int
	}{
		{"width", 4096, 128, 1, 144},
		{"room", KX16Size(2, 256) - 1, 256, 2, 144},
		{"rows", KX16Size(3, 256), 256, 3, 144},
	} {
		if err := RepackQ4_KX16(make([]byte, c.dst), rows, c.str, c.nRows, c.n); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	if err := VecDotRowsQ4_KX16(make([]byte, KX16Size(1, 256)), 1, make([]byte, 291), 256, make([]float32, 1)); err == nil {
		t.Error("short activation: no error")
	}
}
