package quant

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// rawQRows fills rows of Q4_0 or Q8_0 blocks (or Q8_0 activations) with
// random quant bytes, −128 and 127 runs included, and ordinary halves as
// scales, some zero: every quant value occurs.
func rawQRows(r *rand.Rand, typ Type, rows, n int) []byte {
	size, _ := typ.RowSize(n)
	b := make([]byte, rows*size)
	for i := range b {
		b[i] = randQuantByte(r)
	}
	bs := typ.TypeSize()
	for o := 0; o < len(b); o += bs {
		d := float32(r.NormFloat64()) * 0.01
		if r.IntN(16) == 0 {
			d = 0
		}
		binary.LittleEndian.PutUint16(b[o:], FP32ToFP16(d))
	}
	return b
}

// randQuantByte is a random byte that is −128 (0x80) one time in eight
// and 127 one time in eight, so that quants at both extremes, and runs of
// them, occur.
func randQuantByte(r *rand.Rand) byte {
	switch r.IntN(8) {
	case 0:
		return 0x80
	case 1:
		return 0x7f
	}
	return byte(r.Uint32())
}

// TestVecDotTileQ runs Q4_0, Q8_0 and Q5_0 tiles with enough activation
// rows for the prompt kernels (qTileMinActs) and a few below it, on random blocks and quantized
// data, partial groups of 16 weight rows and of eight activation rows,
// every block count up to nine and real widths, and padded strides, at
// every level: where tileRoundsGeneric says so every element bit-identical to the
// generic code (the prompt kernels round as it does, not as VecDot's
// lanes), elsewhere to VecDot.
func TestVecDotTileQ(t *testing.T) {
	defer setPromptTiles(true)()
	forLevels(t, func(t *testing.T, level string) {
		r := rand.New(rand.NewPCG(31, 7))
		for _, typ := range []Type{Q4_0, Q8_0, Q5_0} {
			for _, c := range []struct {
				n, nRows, nActs int
				raw             bool
			}{
				{32, 16, 16, true}, {64, 1, 17, true}, {96, 33, 23, true}, {128, 17, 40, true},
				{160, 15, 16, true}, {192, 2, 31, true}, {224, 48, 24, true}, {256, 5, 33, true},
				{288, 31, 19, true}, {2048, 20, 21, true}, {4096, 3, 16, true},
				{896, 40, 25, false}, {4864, 17, 18, false},
				{96, 33, 5, true}, {128, 17, 6, true}, {160, 15, 7, true}, {256, 21, 8, true},
				{64, 19, 2, true}, {128, 33, 3, true}, {2048, 17, 4, true}, {32, 1, 2, true},
				{896, 35, 3, false}, {4864, 9, 2, false}, {288, 47, 12, true}, {160, 16, 10, true},
			} {
				var wr, ar []byte
				if c.raw {
					wr, ar = rawQRows(r, typ, c.nRows, c.n), rawQRows(r, Q8_0, c.nActs, c.n)
				} else {
					wr, ar = randRows(r, typ, c.nRows, c.n, 1), randRows(r, Q8_0, c.nActs, c.n, 3)
				}
				name := fmt.Sprintf("%v n=%d %dx%d raw=%v", typ, c.n, c.nRows, c.nActs, c.raw)
				checkVecDotTile(t, name, typ, wr, ar, c.n, c.nRows, c.nActs, 3, tileWant(level, typ, c.n))
			}
		}
	})
}

// tileRoundsGeneric reports whether VecDotTile of typ
// rounds as the generic code at level, not only as VecDot does: Q4_0 and
// Q8_0 at the avx2 and avx512 levels, and Q5_0 at avx2, where every
// kernel does (the prompt tiles, and below them the generic-order
// kernels).
func tileRoundsGeneric(level string, typ Type) bool {
	return (typ == Q4_0 || typ == Q8_0) && (level == "avx2" || level == "avx512") ||
		typ == Q5_0 && level == "avx2"
}

// BenchmarkVecDotTileQ measures Q4_0 and Q8_0 prompt tiles
// (benchPromptTile) against 16 and 128 activation rows.
func BenchmarkVecDotTileQ(b *testing.B) {
	benchPromptTile(b, rand.New(rand.NewPCG(22, 9)), []Type{Q4_0, Q8_0}, []int{16, 128}, rawQRows,
		func(r *rand.Rand, rows, n int) []byte { return rawQRows(r, Q8_0, rows, n) })
}

// benchPromptTile measures the prompt tiles of types: a backend job's
// 128 weight rows of a 2048-wide matrix (from rows) against each count
// of activation rows in nActs (from acts), at every level, in the
// thread's CPU time (ps/MAC: picoseconds per multiply-add; the machine
// is shared).
func benchPromptTile(b *testing.B, r *rand.Rand, types []Type, nActs []int,
	rows func(r *rand.Rand, typ Type, rows, n int) []byte, acts func(r *rand.Rand, rows, n int) []byte) {
	const n, nRows = 2048, 128
	defer setPromptTiles(true)()
	for _, typ := range types {
		w := rows(r, typ, nRows, n)
		wrow, _ := typ.RowSize(n)
		for _, na := range nActs {
			x := acts(r, na, n)
			arow, _ := VecDotType(typ).RowSize(n)
			out := make([]float32, nRows*na)
			for _, l := range simdLevels()[1:] {
				b.Run(fmt.Sprintf("%v/tile=%dx%d/%s", typ, nRows, na, l), func(b *testing.B) {
					defer setSIMDLevel(l)()
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					start := threadCPU()
					for b.Loop() {
						VecDotTile(typ, w, wrow, nRows, x, arow, na, n, out, nRows)
					}
					cpu := threadCPU() - start
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(n*nRows*na)*1e3, "ps/MAC")
				})
			}
		}
	}
}
