package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The dot-product benchmarks. Each sub-benchmark is named
// type/shape/impl=level; bytes/s counts the weight rows once per op, the
// memory traffic that bounds decoding.

// benchAt runs f as the sub-benchmark name/impl=level, at that level.
func benchAt(b *testing.B, name, level string, bytes int, f func()) {
	b.Run(name+"/impl="+level, func(b *testing.B) {
		defer setSIMDLevel(level)()
		b.SetBytes(int64(bytes))
		for b.Loop() {
			f()
		}
	})
}

// benchLevels runs benchAt at every implementation level this machine
// has.
func benchLevels(b *testing.B, name string, bytes int, f func()) {
	for _, l := range simdLevels() {
		benchAt(b, name, l, bytes, f)
	}
}

// BenchmarkVecDot measures one 4096-element row per op at this machine's
// SIMD level (BenchmarkVecDotImpl compares the levels).
func BenchmarkVecDot(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	const n = 4096
	for _, typ := range vecDotTypes {
		wq, _, _ := weightRows(b, r, typ, n, 1, 0)
		aq := mustQuantize(b, VecDotType(typ), normalData(r, n, 1))
		var sink float32
		benchAt(b, typ.String(), SIMDLevel(), len(wq), func() { sink += VecDot(typ, wq, aq, n) })
		_ = sink
	}
	w, x := normalData(r, n, 1), normalData(r, n, 1)
	b.Run("F32typed", func(b *testing.B) {
		b.SetBytes(4 * n)
		for b.Loop() {
			VecDotF32(w, x)
		}
	})
}

// BenchmarkVecDotImpl measures one row per op at each implementation
// level, for the row widths of the 0.5B (896), 1.1B (2048) and larger
// (4096) shapes.
func BenchmarkVecDotImpl(b *testing.B) {
	r := rand.New(rand.NewPCG(29, 30))
	for _, typ := range vecDotTypes {
		for _, n := range []int{896, 2048, 4096} {
			if n%typ.BlockSize() != 0 {
				continue
			}
			wq, _, _ := weightRows(b, r, typ, n, 1, 0)
			aq, _, _ := actRows(b, r, VecDotType(typ), n, 1, 0)
			var sink float32
			benchLevels(b, fmt.Sprintf("%v/n=%d", typ, n), len(wq), func() { sink += VecDot(typ, wq, aq, n) })
			_ = sink
		}
	}
}

// BenchmarkVecDotMulti measures one weight row against four activation
// rows per op.
func BenchmarkVecDotMulti(b *testing.B) {
	r := rand.New(rand.NewPCG(31, 32))
	const n, nActs = 4096, 4
	for _, typ := range vecDotTypes {
		wq, _, _ := weightRows(b, r, typ, n, 1, 0)
		acts, arow, _ := actRows(b, r, VecDotType(typ), n, nActs, 0)
		out := make([]float32, nActs)
		benchLevels(b, fmt.Sprintf("%v/n=%d/acts=%d", typ, n, nActs), len(wq), func() {
			VecDotMulti(typ, wq, acts, arow, nActs, n, out)
		})
	}
}

// benchTypes and benchWidths are the weight types and row widths of the
// many-row benchmarks.
var (
	benchTypes  = []Type{Q4_0, Q8_0, Q4_K, Q6_K, F16}
	benchWidths = []int{896, 4096}
)

// BenchmarkVecDotRows measures 64 weight rows against one activation row
// per op (a decode step's matrix-vector product).
func BenchmarkVecDotRows(b *testing.B) {
	r := rand.New(rand.NewPCG(33, 34))
	const nRows = 64
	for _, typ := range benchTypes {
		for _, n := range benchWidths {
			if n%typ.BlockSize() != 0 {
				continue
			}
			rows, wrow, _ := weightRows(b, r, typ, n, nRows, 0)
			act, _, _ := actRows(b, r, VecDotType(typ), n, 1, 0)
			out := make([]float32, nRows)
			benchLevels(b, fmt.Sprintf("%v/n=%d/rows=%d", typ, n, nRows), len(rows), func() {
				VecDotRows(typ, rows, wrow, nRows, act, n, out)
			})
		}
	}
}

// BenchmarkVecDotTile measures a 64-row × 16-activation tile per op, the
// shape of a prefill's matrix product per worker block.
func BenchmarkVecDotTile(b *testing.B) {
	r := rand.New(rand.NewPCG(37, 38))
	const nRows, nActs = 64, 16
	for _, typ := range benchTypes {
		for _, n := range benchWidths {
			if n%typ.BlockSize() != 0 {
				continue
			}
			rows, wrow, _ := weightRows(b, r, typ, n, nRows, 0)
			acts, arow, _ := actRows(b, r, VecDotType(typ), n, nActs, 0)
			out := make([]float32, nRows*nActs)
			benchLevels(b, fmt.Sprintf("%v/n=%d/tile=%dx%d", typ, n, nRows, nActs), len(rows), func() {
				VecDotTile(typ, rows, wrow, nRows, acts, arow, nActs, n, out, nRows)
			})
		}
	}
}

// BenchmarkVecDotRowsStream measures a decode step's matrix-vector
// product from memory rather than cache: 128 MiB of weight rows (the real
// widths: 896 for the 0.5B shape's block types, 4864 for its K-quant
// ffn_down) passed through VecDotRows 144 rows per call, as the backend's
// jobs do; set its bytes/s beside the machine's read bandwidth (churon
// bench --bandwidth).
func BenchmarkVecDotRowsStream(b *testing.B) {
	r := rand.New(rand.NewPCG(43, 44))
	const total, seg = 128 << 20, 144
	for _, c := range []struct {
		typ Type
		n   int
	}{{Q4_0, 896}, {Q8_0, 896}, {Q5_0, 896}, {Q4_K, 4864}, {Q6_K, 4864}} {
		rows, wrow, nRows := streamRows(b, r, c.typ, c.n, total)
		act, _, _ := actRows(b, r, VecDotType(c.typ), c.n, 1, 0)
		out := make([]float32, nRows)
		benchAt(b, fmt.Sprintf("%v/n=%d", c.typ, c.n), SIMDLevel(), len(rows), func() {
			for lo := 0; lo < nRows; lo += seg {
				hi := min(nRows, lo+seg)
				VecDotRows(c.typ, rows[lo*wrow:hi*wrow], wrow, hi-lo, act, c.n, out[lo:hi])
			}
		})
	}
}
