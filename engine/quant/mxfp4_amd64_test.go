//go:build amd64 && !noasm

package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// sameFloat reports whether two results are the same bits, or both NaN
// (an overflowing block may leave either NaN of Inf − Inf).
func sameFloat(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// mxRows returns count MXFP4 rows of nb blocks of random bytes, stride
// bytes apart (pad bytes of 0xee between them): every nibble and, with
// wide, every scale byte (otherwise scales around 1, as real experts
// have).
func mxRows(r *rand.Rand, nb, count, pad int, wide bool) ([]byte, int) {
	stride := 17*nb + pad
	rows := make([]byte, count*stride)
	for i := range rows {
		rows[i] = 0xee
	}
	for i := range count {
		row := rows[i*stride : i*stride+17*nb]
		for j := range row {
			row[j] = byte(r.Uint32())
		}
		for b := range nb {
			if !wide {
				row[17*b] = byte(110 + r.IntN(20))
			}
		}
	}
	return rows, stride
}

// TestMXFP4KernelsBitIdentical pins the avx512 MXFP4 kernels (one to
// eight activation rows, 16 weight rows per group) to the generic
// dotMXFP4 bit for bit, through every entry point: VecDot, VecDotRows
// (every row count 1-33: full groups and each partial last group),
// VecDotMulti and VecDotTile (activation counts 1-17: each kernel and
// the split into groups), on padded strides and block counts from 1 to
// 90 (gpt-oss's 2880).
func TestMXFP4KernelsBitIdentical(t *testing.T) {
	runAt(t, "avx512")
	r := rand.New(rand.NewPCG(71, 72))
	for _, nb := range []int{1, 2, 3, 5, 9, 90} {
		n := 32 * nb
		const maxRows, maxActs = 33, 17
		rows, stride := mxRows(r, nb, maxRows, 3, nb == 9)
		acts, arow, astride := actRows(t, r, Q8_0, n, maxActs, 5)
		want := make([]float32, maxActs*maxRows)
		for a := range maxActs {
			for i := range maxRows {
				w, x := rows[i*stride:i*stride+17*nb], acts[a*astride:a*astride+arow]
				want[a*maxRows+i] = vecDotGeneric(MXFP4, w, x, n)
				if got := VecDot(MXFP4, w, x, n); !sameFloat(got, want[a*maxRows+i]) {
					t.Fatalf("nb=%d VecDot[act %d, row %d] = %g, generic %g", nb, a, i, got, want[a*maxRows+i])
				}
			}
		}
		check := func(what string, a, i int, got float32) {
			t.Helper()
			if w := want[a*maxRows+i]; !sameFloat(got, w) {
				t.Errorf("nb=%d %s: [act %d, row %d] = %g, generic %g", nb, what, a, i, got, w)
			}
		}
		for nRows := 1; nRows <= maxRows; nRows++ {
			out := make([]float32, nRows+1)
			out[nRows] = 42
			VecDotRows(MXFP4, rows, stride, nRows, acts[astride:astride+arow], n, out)
			for i := range nRows {
				check("VecDotRows", 1, i, out[i])
			}
			if out[nRows] != 42 {
				t.Errorf("nb=%d VecDotRows of %d rows wrote past them", nb, nRows)
			}
		}
		for _, nActs := range []int{1, 2, 3, 4, 5, 9} {
			out := make([]float32, nActs)
			VecDotMulti(MXFP4, rows[2*stride:2*stride+17*nb], acts, astride, nActs, n, out)
			for a := range nActs {
				check("VecDotMulti", a, 2, out[a])
			}
		}
		for _, nRows := range []int{1, 15, 16, 17, 33} {
			for nActs := 1; nActs <= maxActs; nActs++ {
				ostride := nRows + 1
				out := make([]float32, nActs*ostride)
				for i := range out {
					out[i] = 42
				}
				VecDotTile(MXFP4, rows, stride, nRows, acts, astride, nActs, n, out, ostride)
				for a := range nActs {
					for i := range nRows {
						check("VecDotTile", a, i, out[a*ostride+i])
					}
					if out[a*ostride+nRows] != 42 {
						t.Fatalf("nb=%d VecDotTile %dx%d wrote past row %d", nb, nRows, nActs, a)
					}
				}
			}
		}
	}
}

// TestMXFP4KernelsEveryScale runs a row whose 256 blocks carry every
// E8M0 byte (2^−128 and 2^−127 are float32 subnormals, 255 reads as
// 2^127) against activations of every magnitude, in groups of rows and
// of activations: bit-identical to the generic code.
func TestMXFP4KernelsEveryScale(t *testing.T) {
	runAt(t, "avx512")
	r := rand.New(rand.NewPCG(73, 74))
	const nb, nRows, nActs = 256, 18, 3
	n := 32 * nb
	rows, stride := mxRows(r, nb, nRows, 0, true)
	for i := range nRows {
		for b := range nb {
			rows[i*stride+17*b] = byte(b + 7*i)
		}
	}
	arow := 34 * nb
	acts := make([]byte, nActs*arow)
	for i := range acts {
		acts[i] = byte(r.Uint32())
	}
	for a := range nActs {
		for b := range nb {
			// finite halves, tiny to large
			h := uint16(r.IntN(0x7c00)) | uint16(r.IntN(2))<<15
			binary.LittleEndian.PutUint16(acts[a*arow+34*b:], h)
		}
	}
	out := make([]float32, nActs*nRows)
	VecDotTile(MXFP4, rows, stride, nRows, acts, arow, nActs, n, out, nRows)
	one := make([]float32, nRows)
	for a := range nActs {
		VecDotRows(MXFP4, rows, stride, nRows, acts[a*arow:(a+1)*arow], n, one)
		for i := range nRows {
			want := vecDotGeneric(MXFP4, rows[i*stride:(i+1)*stride], acts[a*arow:(a+1)*arow], n)
			if got := out[a*nRows+i]; !sameFloat(got, want) {
				t.Errorf("VecDotTile[act %d, row %d] = %g, generic %g", a, i, got, want)
			}
			if !sameFloat(one[i], want) {
				t.Errorf("VecDotRows[act %d, row %d] = %g, generic %g", a, i, one[i], want)
			}
		}
	}
}

// TestMXFP4Prep pins the activations' layout for the kernels: dx and
// −12·Σy and the quants of each block of each row, rows interleaved
// per block.
func TestMXFP4Prep(t *testing.T) {
	r := rand.New(rand.NewPCG(75, 76))
	const k, nb, pad = 3, 4, 2
	acts, _, astride := actRows(t, r, Q8_0, 32*nb, k, pad)
	dst := make([]byte, 40*k*nb)
	mxPrep(acts, astride, k, nb, dst)
	for a := range k {
		for b := range nb {
			blk := acts[a*astride+34*b:]
			s := 0
			for j := range 32 {
				s += int(int8(blk[2+j]))
			}
			o := 40 * (k*b + a)
			if d := math.Float32frombits(binary.LittleEndian.Uint32(dst[o:])); d != fp16(blk) {
				t.Errorf("row %d block %d: dx %g, want %g", a, b, d, fp16(blk))
			}
			if c := int32(binary.LittleEndian.Uint32(dst[o+4:])); c != int32(-12*s) {
				t.Errorf("row %d block %d: correction %d, want %d", a, b, c, -12*s)
			}
			if string(dst[o+8:o+40]) != string(blk[2:34]) {
				t.Errorf("row %d block %d: quants % x, want % x", a, b, dst[o+8:o+40], blk[2:34])
			}
		}
	}
}
