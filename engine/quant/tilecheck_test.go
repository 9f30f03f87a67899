package quant

import (
	"math"
	"testing"
)

// checkVecDotTile lays nRows weight rows wr and nActs activation rows ar
// of n elements out at padded strides (odd counts: 2 bytes past each
// weight row, actPad past each activation row) and checks the tile
// VecDotTile makes of them (checkTile, results 3 floats wider than the
// rows).
func checkVecDotTile(t *testing.T, name string, typ Type, wr, ar []byte, n, nRows, nActs, actPad int, want func(w, x []byte) float32) {
	t.Helper()
	wrow, _ := typ.RowSize(n)
	arow, _ := VecDotType(typ).RowSize(n)
	rowStride, actStride := wrow+2*(nRows%2), arow+actPad*(nActs%2)
	rows := make([]byte, nRows*rowStride)
	for i := range nRows {
		copy(rows[i*rowStride:], wr[i*wrow:(i+1)*wrow])
	}
	acts := make([]byte, nActs*actStride)
	for a := range nActs {
		copy(acts[a*actStride:], ar[a*arow:(a+1)*arow])
	}
	checkTile(t, name, tileCase{typ, n, rows, rowStride, nRows, acts, actStride, nActs}, 3, want)
}

// tileCase is a VecDotTile call's operands: nRows weight rows of typ,
// rowStride bytes apart, and nActs activation rows of VecDotType(typ),
// actStride apart, of n elements.
type tileCase struct {
	typ              Type
	n                int
	rows             []byte
	rowStride, nRows int
	acts             []byte
	actStride, nActs int
}

// checkTile runs VecDotTile over c into results outPad floats wider than
// the rows and checks that it writes want(w, x) of each pair of rows,
// bit for bit (the first five differences reported), and nothing in the
// padding.
func checkTile(t *testing.T, name string, c tileCase, outPad int, want func(w, x []byte) float32) {
	t.Helper()
	wrow, _ := c.typ.RowSize(c.n)
	arow, _ := VecDotType(c.typ).RowSize(c.n)
	outStride := c.nRows + outPad
	out := make([]float32, c.nActs*outStride)
	for i := range out {
		out[i] = 42
	}
	VecDotTile(c.typ, c.rows, c.rowStride, c.nRows, c.acts, c.actStride, c.nActs, c.n, out, outStride)
	bad := 0
	for a := range c.nActs {
		for i := range outStride {
			got := out[a*outStride+i]
			if i >= c.nRows {
				if got != 42 {
					t.Fatalf("%s: wrote past the rows at act %d col %d", name, a, i)
				}
				continue
			}
			w := want(c.rows[i*c.rowStride:i*c.rowStride+wrow], c.acts[a*c.actStride:a*c.actStride+arow])
			if math.Float32bits(got) != math.Float32bits(w) && bad < 5 {
				bad++
				t.Errorf("%s: out[act %d, row %d] = %g, want %g", name, a, i, got, w)
			}
		}
	}
}

// tileWant is what VecDotTile of typ at level must give for a pair of
// rows of n: VecDot's result, or the generic code's where the prompt
// tiles round as it does (tileRoundsGeneric).
func tileWant(level string, typ Type, n int) func(w, x []byte) float32 {
	if tileRoundsGeneric(level, typ) {
		return func(w, x []byte) float32 { return vecDotGeneric(typ, w, x, n) }
	}
	return func(w, x []byte) float32 { return VecDot(typ, w, x, n) }
}
