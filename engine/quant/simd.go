package quant

import "math"

// Multi-row and multi-activation dot products. They validate their
// shapes once and then run the same kernels as VecDot (SIMD where the CPU
// has it), so a matrix product pays the checks once per call, not once
// per row; kernels that handle several rows at a time decode each weight
// block once for all of them, and lay each activation row out once. Every
// result is bit-identical to VecDot's on the same inputs and level.

// VecDotMulti computes out[i] = VecDot(w, wRow, acts[i*actStride:], n)
// for i < nActs: one weight row against nActs activation rows, each in
// VecDotType(w), starting actStride bytes apart (actStride may exceed the
// row size, e.g. for padded rows). This is the inner loop of a batched
// decode: the weight row is read once for all of them. The results are
// bit-identical to VecDot's on the same inputs and implementation.
//
// On bad input (an unsupported type, short buffers, a partial block, a
// stride smaller than the activation row, len(out) < nActs) every out[i]
// for i < min(nActs, len(out)) is set to NaN; it never panics. It does
// not allocate and is safe for concurrent use on disjoint out.
func VecDotMulti(w Type, wRow []byte, acts []byte, actStride, nActs, n int, out []float32) {
	if nActs <= 0 {
		return
	}
	arow, ok := VecDotType(w).RowSize(n)
	if !VecDotSupported(w) || !ok || !fits(w, len(wRow), n) || actStride < arow ||
		len(out) < nActs || !spans(len(acts), actStride, nActs, arow) {
		fillNaN(out[:min(nActs, len(out))])
		return
	}
	if n == 0 {
		clear(out[:nActs])
		return
	}
	if vecDotMultiFast(w, wRow, acts, actStride, nActs, n, out) {
		return
	}
	for i := range nActs {
		out[i] = vecDotChecked(w, wRow, acts[i*actStride:i*actStride+arow], n)
	}
}

// VecDotRows computes out[r] = VecDot(w, rows[r*rowStride:], act, n) for
// r < nRows: nRows weight rows, rowStride bytes apart, against one
// activation row, the shape of a decode step's matrix-vector product.
// Each result is bit-identical to VecDot's; with AVX-512, Q4_0, Q5_0 and
// Q8_0 lay the activation row out once for all rows, and on arm64 they
// load each activation block once for four rows, so they run faster than
// a loop of VecDot. On amd64 it reads the rows as two interleaved
// streams, prefetching each ahead, which keeps more of memory's bandwidth
// busy than one stream: pass all the rows of a job in one call. Bad input
// is handled as in VecDotMulti. It does not allocate and is safe for
// concurrent use on disjoint out.
func VecDotRows(w Type, rows []byte, rowStride, nRows int, act []byte, n int, out []float32) {
	if nRows <= 0 {
		return
	}
	wrow, ok := w.RowSize(n)
	if !VecDotSupported(w) || !ok || !fits(VecDotType(w), len(act), n) || rowStride < wrow ||
		len(out) < nRows || !spans(len(rows), rowStride, nRows, wrow) {
		fillNaN(out[:min(nRows, len(out))])
		return
	}
	if n == 0 {
		clear(out[:nRows])
		return
	}
	if vecDotRowsFast(w, rows, rowStride, nRows, act, n, out) {
		return
	}
	for r := range nRows {
		out[r] = vecDotChecked(w, rows[r*rowStride:r*rowStride+wrow], act, n)
	}
}

// VecDotTile computes the tile out[a*outStride+r] = VecDot(w,
// rows[r*rowStride:], acts[a*actStride:], n) for r < nRows, a < nActs:
// nRows weight rows against nActs activation rows, the shape of a
// prefill (or batched decode) matrix product, with outStride ≥ nRows
// (out is activation-major, as the backend lays out its outputs). Each
// result is bit-identical to VecDot's; Q4_0 and Q8_0 at the avx2 and
// avx512 levels, and Q5_0 at avx2, run through prompt tiles from a few
// activation rows on (qtile_amd64.go, qtileavx2_amd64.go), which round
// as the generic code, as every other kernel of those types there does. It prepares each group of four activation rows (up
// to eight for Q4_0 and Q8_0 at avx512) once and runs it against every
// weight row, decoding each weight block once for the group, so callers
// should pass a block of rows that stays in cache (a few hundred KiB) and
// all the activation rows. On bad input (as for VecDotMulti, or an out
// too short for the tile) every element of out is set to NaN; it never
// panics. It does not allocate and is safe for concurrent use on
// disjoint out.
func VecDotTile(w Type, rows []byte, rowStride, nRows int, acts []byte, actStride, nActs, n int, out []float32, outStride int) {
	if nRows <= 0 || nActs <= 0 {
		return
	}
	wrow, okw := w.RowSize(n)
	arow, oka := VecDotType(w).RowSize(n)
	if !VecDotSupported(w) || !okw || !oka || rowStride < wrow || actStride < arow || outStride < nRows ||
		!spans(len(rows), rowStride, nRows, wrow) || !spans(len(acts), actStride, nActs, arow) ||
		!spans(len(out), outStride, nActs, nRows) {
		fillNaN(out)
		return
	}
	if n == 0 {
		for a := range nActs {
			clear(out[a*outStride : a*outStride+nRows])
		}
		return
	}
	if vecDotTileFast(w, rows, rowStride, nRows, acts, actStride, nActs, n, out, outStride) {
		return
	}
	var tmp [4]float32
	for r := range nRows {
		wr := rows[r*rowStride : r*rowStride+wrow]
		for a := 0; a < nActs; a += 4 {
			k := min(4, nActs-a)
			if !vecDotMultiFast(w, wr, acts[a*actStride:], actStride, k, n, tmp[:k]) {
				for i := range k {
					tmp[i] = vecDotGeneric(w, wr, acts[(a+i)*actStride:(a+i)*actStride+arow], n)
				}
			}
			for i := range k {
				out[(a+i)*outStride+r] = tmp[i]
			}
		}
	}
}

// spans reports whether a buffer of size bytes holds count rows of rowSize
// bytes spaced stride apart, without overflowing.
func spans(size, stride, count, rowSize int) bool {
	if count <= 0 || stride < 0 || rowSize < 0 {
		return false
	}
	if count > 1 && stride > (math.MaxInt-rowSize)/(count-1) {
		return false
	}
	return (count-1)*stride+rowSize <= size
}

func fillNaN(out []float32) {
	nan := float32(math.NaN())
	for i := range out {
		out[i] = nan
	}
}
