package quant

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// rawKRows fills rows of K-quant blocks with random bytes, their d (and
// dmin) set to ordinary halves: every quant, scale and min value occurs,
// the extremes included (Q4_K scale 63 and quant 15, Q6_K scale −128).
func rawKRows(r *rand.Rand, typ Type, rows, n int) []byte {
	size, _ := typ.RowSize(n)
	b := make([]byte, rows*size)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	bs := typ.TypeSize()
	for o := 0; o < len(b); o += bs {
		h := func() uint16 { return FP32ToFP16(float32(r.NormFloat64()) * 0.01) }
		switch typ {
		case Q4_K, Q5_K:
			binary.LittleEndian.PutUint16(b[o:], h())
			binary.LittleEndian.PutUint16(b[o+2:], h())
		case Q6_K:
			binary.LittleEndian.PutUint16(b[o+208:], h())
		case Q2_K:
			binary.LittleEndian.PutUint16(b[o+80:], h())
			binary.LittleEndian.PutUint16(b[o+82:], h())
		case Q3_K:
			binary.LittleEndian.PutUint16(b[o+108:], h())
		}
	}
	return b
}

// rawQ8KRows fills Q8_K rows with random quants in [−128, 127], −128 and
// 127 runs included, their bsums as Quantize writes them.
func rawQ8KRows(r *rand.Rand, rows, n int) []byte {
	size, _ := Q8_K.RowSize(n)
	b := make([]byte, rows*size)
	for o := 0; o < len(b); o += 292 {
		binary.LittleEndian.PutUint32(b[o:], math.Float32bits(float32(r.NormFloat64())*0.02))
		q := b[o+4 : o+260]
		for i := range q {
			q[i] = randQuantByte(r)
		}
		setQ8KSums(b[o : o+292])
	}
	return b
}

// setQ8KSums writes the bsums of the Q8_K block blk, the sums of its 16
// sub-blocks' quants, as Quantize writes them.
func setQ8KSums(blk []byte) {
	for j := range 16 {
		s := 0
		for _, q := range blk[4+16*j : 4+16*j+16] {
			s += int(int8(q))
		}
		binary.LittleEndian.PutUint16(blk[260+2*j:], uint16(int16(s)))
	}
}

// TestVecDotTileKQuants runs K-quant tiles with enough activation rows
// for the tile kernels (kTileMinActs), partial groups of 16 weight rows
// and of eight activation rows, and padded strides, at every level:
// every element bit-identical to the generic code.
func TestVecDotTileKQuants(t *testing.T) {
	forLevels(t, func(t *testing.T, level string) {
		r := rand.New(rand.NewPCG(22, 7))
		for _, typ := range []Type{Q2_K, Q3_K, Q4_K, Q5_K, Q6_K} {
			for _, c := range []struct {
				n, nRows, nActs int
				raw             bool
			}{
				{256, 16, 16, true}, {256, 1, 17, true}, {512, 33, 23, true}, {2304, 17, 40, true},
				{768, 15, 16, false}, {1280, 40, 25, false},
			} {
				if !c.raw && typ != Q4_K && typ != Q6_K {
					continue
				}
				var wr, ar []byte
				if c.raw {
					wr, ar = rawKRows(r, typ, c.nRows, c.n), rawQ8KRows(r, c.nActs, c.n)
				} else {
					wr, ar = randRows(r, typ, c.nRows, c.n, 1), randRows(r, Q8_K, c.nActs, c.n, 3)
				}
				name := fmt.Sprintf("%v n=%d %dx%d raw=%v", typ, c.n, c.nRows, c.nActs, c.raw)
				checkVecDotTile(t, name, typ, wr, ar, c.n, c.nRows, c.nActs, 4, func(w, x []byte) float32 {
					return vecDotGeneric(typ, w, x, c.n)
				})
			}
		}
	})
}

// BenchmarkVecDotTileK measures K-quant prompt tiles (benchPromptTile)
// against 8 to 128 activation rows.
func BenchmarkVecDotTileK(b *testing.B) {
	benchPromptTile(b, rand.New(rand.NewPCG(22, 8)), []Type{Q4_K, Q6_K}, []int{8, 16, 128}, rawKRows, rawQ8KRows)
}

// TestVecDotRowsKQuantsRaw runs decode-shaped products (VecDotRows) on
// random K-quant blocks, every scale and quant value included, at every
// level: bit-identical to the generic code, group remainders included.
func TestVecDotRowsKQuantsRaw(t *testing.T) {
	forLevels(t, func(t *testing.T, level string) {
		r := rand.New(rand.NewPCG(22, 9))
		for _, typ := range []Type{Q2_K, Q3_K, Q4_K, Q5_K, Q6_K} {
			for _, n := range []int{256, 1536} {
				for _, nRows := range []int{1, 4, 7, 13} {
					wrow, _ := typ.RowSize(n)
					rowStride := wrow + 6*(nRows%2)
					wr := rawKRows(r, typ, nRows, n)
					rows := make([]byte, nRows*rowStride)
					for i := range nRows {
						copy(rows[i*rowStride:], wr[i*wrow:(i+1)*wrow])
					}
					act := rawQ8KRows(r, 1, n)
					out := make([]float32, nRows+1)
					out[nRows] = 42
					VecDotRows(typ, rows, rowStride, nRows, act, n, out[:nRows])
					if out[nRows] != 42 {
						t.Fatalf("%v n=%d: wrote past the rows", typ, n)
					}
					for i := range nRows {
						want := vecDotGeneric(typ, rows[i*rowStride:i*rowStride+wrow], act, n)
						if math.Float32bits(out[i]) != math.Float32bits(want) {
							t.Errorf("%v n=%d nRows=%d: row %d = %g, generic %g", typ, n, nRows, i, out[i], want)
						}
					}
				}
			}
		}
	})
}
