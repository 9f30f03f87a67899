//go:build arm64 && !noasm

package quant

import (
	"os"

	"golang.org/x/sys/cpu"
)

// CPU features, read once. Tests flip them (setSIMDLevel) to run every
// implementation this machine has against the generic code.
//
// The neon level needs only Advanced SIMD, which every arm64 processor
// has (the half-float widening FCVTL is part of it, so F16 needs no
// FEAT_FP16). The dotprod level adds FEAT_DotProd's SDOT for the integer
// sums (Apple M1 and later, Cortex-A76/Neoverse N1 and later).
// CHURON_NOSIMD=1 in the environment, or the noasm build tag, forces the
// generic code; CHURON_CPU=go|neon|dotprod caps the level.
var (
	hasNEON    = cpu.ARM64.HasASIMD && os.Getenv("CHURON_NOSIMD") != "1"
	hasDotProd = hasNEON && cpu.ARM64.HasASIMDDP

	cpuCap, cpuKnown = cpuSetting([]string{"go", "neon", "dotprod"})
	useNEON          = hasNEON && cpuCap != "go"
	useDotProd       = hasDotProd && cpuCap == "dotprod"
)

// levels are arm64's kernel levels (see simd_loops.go).
var levels = [...]simdLevel{{"neon", &hasNEON, &useNEON}, {"dotprod", &hasDotProd, &useDotProd}}

// rowKernels are the one-row kernels in dot_arm64.s, by weight type: the
// neon kernel and the dotprod one.
var rowKernels = [...]levelKernels{
	Q4_0:   {dotQ4_0NEON, dotQ4_0DOT},
	Q8_0:   {dotQ8_0NEON, dotQ8_0DOT},
	Q5_0:   {dotQ5_0NEON, dotQ5_0DOT},
	Q4_1:   {dotQ4_1NEON, dotQ4_1DOT},
	Q5_1:   {dotQ5_1NEON, dotQ5_1DOT},
	IQ4_NL: {dotIQ4_NLNEON, dotIQ4_NLDOT},
	Q2_K:   {dotQ2_KNEON, dotQ2_KDOT},
	Q3_K:   {dotQ3_KNEON, dotQ3_KDOT},
	Q4_K:   {dotQ4_KNEON, dotQ4_KDOT},
	Q5_K:   {dotQ5_KNEON, dotQ5_KDOT},
	Q6_K:   {dotQ6_KNEON, dotQ6_KDOT},
	IQ4_XS: {dotIQ4_XSNEON, dotIQ4_XSDOT},
}

// vecDotFast runs the SIMD kernel for w, if there is one, on checked
// inputs with n > 0.
func vecDotFast(w Type, wRow, act []byte, n int) (float32, bool) {
	return vecDotKernel(w, wRow, act, n)
}

// floatStep is the element count the float kernels take per iteration.
func floatStep() int { return 32 }

// dotHalfKernel runs the F16 or BF16 kernel on m elements, a multiple of
// floatStep.
func dotHalfKernel(w, x *byte, m int, t Type) float32 {
	if t == F16 {
		return dotF16NEON(w, x, m)
	}
	return dotBF16NEON(w, x, m)
}

// dotF32Kernel runs the F32 kernel on m elements, a multiple of floatStep.
func dotF32Kernel(w, x *byte, m int) float32 { return dotF32NEON(w, x, m) }

// simdOn reports whether any kernel level is in use (the shared loops in
// simd_loops.go ask).
func simdOn() bool { return useNEON }

// dotX4 runs the four-activation kernel for w, if there is one. (Direct
// calls, not a function value, keep out from escaping.)
func dotX4(w Type, wp, xp *byte, stride, nb int, out *float32) bool {
	switch {
	case w == Q4_0 && useDotProd:
		dotQ4_0x4DOT(wp, xp, stride, nb, out)
	case w == Q4_0:
		dotQ4_0x4NEON(wp, xp, stride, nb, out)
	case w == Q8_0 && useDotProd:
		dotQ8_0x4DOT(wp, xp, stride, nb, out)
	case w == Q8_0:
		dotQ8_0x4NEON(wp, xp, stride, nb, out)
	case w == Q5_0 && useDotProd:
		dotQ5_0x4DOT(wp, xp, stride, nb, out)
	case w == Q5_0:
		dotQ5_0x4NEON(wp, xp, stride, nb, out)
	default:
		return false
	}
	return true
}

// vecDotRowsFast runs the four-weight-row kernels (each activation block
// loaded once for four rows) on groups of four rows and the one-row
// kernel on the rest, on checked inputs with n > 0; other types run
// VecDotRows' loop of one-row kernels.
func vecDotRowsFast(w Type, rows []byte, stride, nRows int, act []byte, n int, out []float32) bool {
	if !useNEON || (w != Q4_0 && w != Q5_0 && w != Q8_0) {
		return false
	}
	wrow, _ := w.RowSize(n)
	nb := n / 32
	r := 0
	for ; r+4 <= nRows; r += 4 {
		dotR4(w, &rows[r*stride], stride, &act[0], nb, &out[r])
	}
	for ; r < nRows; r++ {
		out[r] = vecDotChecked(w, rows[r*stride:r*stride+wrow], act, n)
	}
	return true
}

// dotR4 runs the four-weight-row kernel for w (Q4_0, Q5_0 or Q8_0).
func dotR4(w Type, wp *byte, stride int, xp *byte, nb int, out *float32) {
	switch {
	case w == Q4_0 && useDotProd:
		dotQ4_0r4DOT(wp, stride, xp, nb, out)
	case w == Q4_0:
		dotQ4_0r4NEON(wp, stride, xp, nb, out)
	case w == Q5_0 && useDotProd:
		dotQ5_0r4DOT(wp, stride, xp, nb, out)
	case w == Q5_0:
		dotQ5_0r4NEON(wp, stride, xp, nb, out)
	case w == Q8_0 && useDotProd:
		dotQ8_0r4DOT(wp, stride, xp, nb, out)
	default:
		dotQ8_0r4NEON(wp, stride, xp, nb, out)
	}
}

// vecDotTileFast: VecDotTile runs the four-activation kernels through
// vecDotMultiFast, weight row by weight row.
func vecDotTileFast(w Type, rows []byte, rowStride, nRows int, acts []byte, actStride, nActs, n int, out []float32, outStride int) bool {
	return false
}

// Kernels in dot_arm64.s. Each takes pointers to whole blocks that the
// caller has bounds-checked, and a block count (element count, a
// multiple of floatStep(), for the float types) > 0. The DOT kernels need
// FEAT_DotProd.

//go:noescape
func dotQ4_0NEON(w, x *byte, nb int) float32

//go:noescape
func dotQ4_0DOT(w, x *byte, nb int) float32

//go:noescape
func dotQ8_0NEON(w, x *byte, nb int) float32

//go:noescape
func dotQ8_0DOT(w, x *byte, nb int) float32

//go:noescape
func dotQ4_0x4NEON(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ4_0x4DOT(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ8_0x4NEON(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ8_0x4DOT(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ5_0NEON(w, x *byte, nb int) float32

//go:noescape
func dotQ5_0DOT(w, x *byte, nb int) float32

//go:noescape
func dotQ5_0x4NEON(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ5_0x4DOT(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ4_1NEON(w, x *byte, nb int) float32

//go:noescape
func dotQ4_1DOT(w, x *byte, nb int) float32

//go:noescape
func dotQ5_1NEON(w, x *byte, nb int) float32

//go:noescape
func dotQ5_1DOT(w, x *byte, nb int) float32

//go:noescape
func dotIQ4_NLNEON(w, x *byte, nb int) float32

//go:noescape
func dotIQ4_NLDOT(w, x *byte, nb int) float32

//go:noescape
func dotQ2_KNEON(w, x *byte, nb int) float32

//go:noescape
func dotQ2_KDOT(w, x *byte, nb int) float32

//go:noescape
func dotQ3_KNEON(w, x *byte, nb int) float32

//go:noescape
func dotQ3_KDOT(w, x *byte, nb int) float32

//go:noescape
func dotQ4_0r4NEON(w *byte, wstride int, x *byte, nb int, out *float32)

//go:noescape
func dotQ4_0r4DOT(w *byte, wstride int, x *byte, nb int, out *float32)

//go:noescape
func dotQ5_0r4NEON(w *byte, wstride int, x *byte, nb int, out *float32)

//go:noescape
func dotQ5_0r4DOT(w *byte, wstride int, x *byte, nb int, out *float32)

//go:noescape
func dotQ8_0r4NEON(w *byte, wstride int, x *byte, nb int, out *float32)

//go:noescape
func dotQ8_0r4DOT(w *byte, wstride int, x *byte, nb int, out *float32)

//go:noescape
func dotQ4_KNEON(w, x *byte, nb int) float32

//go:noescape
func dotQ4_KDOT(w, x *byte, nb int) float32

//go:noescape
func dotQ5_KNEON(w, x *byte, nb int) float32

//go:noescape
func dotQ5_KDOT(w, x *byte, nb int) float32

//go:noescape
func dotQ6_KNEON(w, x *byte, nb int) float32

//go:noescape
func dotQ6_KDOT(w, x *byte, nb int) float32

//go:noescape
func dotIQ4_XSNEON(w, x *byte, nb int) float32

//go:noescape
func dotIQ4_XSDOT(w, x *byte, nb int) float32

//go:noescape
func dotF16NEON(w, x *byte, n int) float32

//go:noescape
func dotBF16NEON(w, x *byte, n int) float32

//go:noescape
func dotF32NEON(w, x *byte, n int) float32

// quantFast: the Go code rounds activations on arm64.
func quantFast(t Type, src []float32, dst []byte) int { return 0 }

// dotXn runs a two- or three-activation kernel for w: none on arm64,
// where the leftover rows of a batch run the one-row kernels.
func dotXn(w Type, n int, wp, xp *byte, stride, nb int, out *float32) bool { return false }
