//go:build (amd64 || arm64) && !noasm

package quant

import "unsafe"

// The loops here are the same on every architecture with kernels; each
// architecture supplies simdOn, dotF32Fast, dotX4 and vecDotChecked's
// kernels.

// vecDotF32Fast is VecDotF32's SIMD path: VecDot(F32) on the same bytes.
func vecDotF32Fast(w, x []float32) (float32, bool) {
	if !simdOn() {
		return 0, false
	}
	wb := unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), 4*len(w))
	xb := unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 4*len(x))
	return dotF32Fast(wb, xb, len(w)), true
}

// vecDotMultiFast runs the four-activation kernels on groups of four, a
// two- or three-activation kernel on the rest where there is one, else
// the one-activation kernels, on checked inputs with n > 0.
func vecDotMultiFast(w Type, wRow, acts []byte, stride, nActs, n int, out []float32) bool {
	if !simdOn() {
		return false
	}
	arow, _ := VecDotType(w).RowSize(n)
	nb := n / w.BlockSize()
	i := 0
	for ; i+4 <= nActs; i += 4 {
		if !dotX4(w, &wRow[0], &acts[i*stride], stride, nb, &out[i]) {
			break
		}
	}
	if r := nActs - i; r >= 2 && dotXn(w, r, &wRow[0], &acts[i*stride], stride, nb, &out[i]) {
		return true
	}
	for ; i < nActs; i++ {
		out[i] = vecDotChecked(w, wRow, acts[i*stride:i*stride+arow], n)
	}
	return true
}
