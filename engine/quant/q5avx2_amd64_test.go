//go:build amd64 && !noasm

package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// q5Extremes are Q5_0 weight and Q8_0 activation bytes that drive the
// avx2 kernels' int16 lanes hardest: every quant 31 (or 0) against every
// activation −128 (or 127), the scales left as the pattern makes them
// where they are not overwritten with a power of two.
var q5Extremes = []struct {
	name   string
	w, act byte
}{
	{"31×-128", 0xff, 0x80}, {"31×127", 0xff, 0x7f}, {"0×-128", 0x00, 0x80}, {"0×127", 0x00, 0x7f},
}

// TestQ5_0AVX2Generic pins every Q5_0 kernel of the avx2 level to the
// generic twin, bit for bit: the one-row kernel (VecDot), the eight-row
// decode kernel (VecDotRows: whole groups, a part group run again as the
// last eight, fewer than eight through the one-row kernel), the two- to
// four-activation kernels (VecDotMulti: every remainder of four) and the
// prompt tile (VecDotTile from q5TileMinActs activation rows: whole and
// part groups of eight weight rows and of four activation rows), on
// random bytes, quantized data and the extremes, with padded strides.
func TestQ5_0AVX2Generic(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no avx2 level on this machine")
	}
	defer setSIMDLevel("avx2")()
	defer setPromptTiles(true)()
	if useAVX512 || !useAVX2 {
		t.Fatalf("setSIMDLevel(avx2): avx2 %v, avx512 %v", useAVX2, useAVX512)
	}
	for _, vnni := range []bool{false, true} {
		if vnni && !cpu.X86.HasAVXVNNI {
			t.Log("no AVX-VNNI: its tile not run")
			continue
		}
		t.Run(fmt.Sprintf("avxvnni=%v", vnni), func(t *testing.T) {
			defer func(saved bool) { tileVNNI = saved }(tileVNNI)
			tileVNNI = vnni
			testQ5_0AVX2Generic(t)
		})
	}
}

// TestTileVNNIQ8_0 runs TestVecDotTileQ's Q8_0 cases (and the others) at
// the avx2 level with the AVX-VNNI tile and without it.
func TestTileVNNIQ8_0(t *testing.T) {
	if !cpu.X86.HasAVXVNNI {
		t.Skip("no AVX-VNNI on this machine")
	}
	defer func(saved bool) { tileVNNI = saved }(tileVNNI)
	for _, vnni := range []bool{false, true} {
		tileVNNI = vnni
		t.Run(fmt.Sprintf("avxvnni=%v", vnni), TestVecDotTileQ)
	}
}

func testQ5_0AVX2Generic(t *testing.T) {
	r := rand.New(rand.NewPCG(55, 5))
	type data struct {
		name string
		gen  func(nRows, nActs, n int) (rows, acts []byte)
	}
	inputs := []data{
		{"raw", func(nRows, nActs, n int) ([]byte, []byte) {
			return rawQRows(r, Q5_0, nRows, n), rawQRows(r, Q8_0, nActs, n)
		}},
		{"quantized", func(nRows, nActs, n int) ([]byte, []byte) {
			return randRows(r, Q5_0, nRows, n, 1), randRows(r, Q8_0, nActs, n, 3)
		}},
	}
	for _, x := range q5Extremes {
		inputs = append(inputs, data{x.name, func(nRows, nActs, n int) ([]byte, []byte) {
			return q5Fill(r, Q5_0, nRows, n, x.w), q5Fill(r, Q8_0, nActs, n, x.act)
		}})
	}
	for _, c := range []struct{ n, nRows, nActs int }{
		{32, 8, 16}, {64, 9, 17}, {96, 16, 20}, {160, 7, 16}, {256, 23, 33},
		{288, 1, 19}, {896, 40, 24}, {4864, 12, 18}, {32, 3, 1}, {896, 17, 1},
		{96, 9, 2}, {160, 8, 3}, {64, 5, 4}, {896, 12, 7}, {4864, 9, 5},
	} {
		for _, in := range inputs {
			t.Run(fmt.Sprintf("%s/n=%d/%dx%d", in.name, c.n, c.nRows, c.nActs), func(t *testing.T) {
				wr, ar := in.gen(c.nRows, c.nActs, c.n)
				rows, wrow, rowStride := padRows(wr, c.nRows, 3)
				acts, arow, actStride := padRows(ar, c.nActs, 5)
				want := func(i, a int) float32 {
					return vecDotGeneric(Q5_0, rows[i*rowStride:i*rowStride+wrow], acts[a*actStride:a*actStride+arow], c.n)
				}
				check := func(what string, got float32, i, a int) {
					t.Helper()
					if w := want(i, a); math.Float32bits(got) != math.Float32bits(w) {
						t.Errorf("%s: [act %d, row %d] = %g, generic %g", what, a, i, got, w)
					}
				}
				for i := range c.nRows {
					check("VecDot", VecDot(Q5_0, rows[i*rowStride:i*rowStride+wrow], acts[:arow], c.n), i, 0)
				}
				out := make([]float32, c.nRows)
				VecDotRows(Q5_0, rows, rowStride, c.nRows, acts[:arow], c.n, out)
				for i, v := range out {
					check("VecDotRows", v, i, 0)
				}
				multi := make([]float32, c.nActs)
				VecDotMulti(Q5_0, rows[:wrow], acts, actStride, c.nActs, c.n, multi)
				for a, v := range multi {
					check("VecDotMulti", v, 0, a)
				}
				outStride := c.nRows + 1
				tile := make([]float32, c.nActs*outStride)
				VecDotTile(Q5_0, rows, rowStride, c.nRows, acts, actStride, c.nActs, c.n, tile, outStride)
				for a := range c.nActs {
					for i := range c.nRows {
						check("VecDotTile", tile[a*outStride+i], i, a)
					}
					if tile[a*outStride+c.nRows] != 0 {
						t.Fatalf("VecDotTile wrote past row %d", a)
					}
				}
			})
		}
	}
}

// q5Fill is rows of typ blocks with every byte b but the scales, which
// are powers of two (so that the sums stay exact and the extremes show).
func q5Fill(r *rand.Rand, typ Type, rows, n int, b byte) []byte {
	size, _ := typ.RowSize(n)
	out := make([]byte, rows*size)
	for i := range out {
		out[i] = b
	}
	for o := 0; o < len(out); o += typ.TypeSize() {
		h := halfPow2[r.IntN(len(halfPow2))]
		out[o], out[o+1] = byte(h), byte(h>>8)
	}
	return out
}

// padRows copies count rows of b into rows pad bytes longer (the pad
// 0xee), returning them, the row size and the stride.
func padRows(b []byte, count, pad int) (rows []byte, size, stride int) {
	size = len(b) / count
	stride = size + pad
	rows = make([]byte, count*stride)
	for i := range rows {
		rows[i] = 0xee
	}
	for i := range count {
		copy(rows[i*stride:], b[i*size:(i+1)*size])
	}
	return rows, size, stride
}
