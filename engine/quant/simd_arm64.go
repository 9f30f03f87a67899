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
// generic code.
var (
	useNEON    = cpu.ARM64.HasASIMD && os.Getenv("CHURON_NOSIMD") != "1"
	useDotProd = useNEON && cpu.ARM64.HasASIMDDP

	hasNEON, hasDotProd = useNEON, useDotProd
)

// SIMDLevel names the implementation VecDot uses on this machine: "go",
// "neon" or "dotprod".
func SIMDLevel() string {
	switch {
	case useDotProd:
		return "dotprod"
	case useNEON:
		return "neon"
	}
	return "go"
}

// simdLevels lists the implementations this machine can run, for tests.
func simdLevels() []string {
	l := []string{"go"}
	if hasNEON {
		l = append(l, "neon")
	}
	if hasDotProd {
		l = append(l, "dotprod")
	}
	return l
}

// setSIMDLevel selects an implementation for tests and returns a function
// that restores the previous one. Not safe to call while dot products run.
func setSIMDLevel(level string) (restore func()) {
	a, b := useNEON, useDotProd
	useNEON = hasNEON && (level == "neon" || level == "dotprod")
	useDotProd = hasDotProd && level == "dotprod"
	return func() { useNEON, useDotProd = a, b }
}

// vecDotFast runs the SIMD kernel for w, if there is one, on checked
// inputs with n > 0.
func vecDotFast(w Type, wRow, act []byte, n int) (float32, bool) {
	if !useNEON {
		return 0, false
	}
	wp, ap := &wRow[0], &act[0]
	switch w {
	case Q4_0:
		if useDotProd {
			return dotQ4_0DOT(wp, ap, n/32), true
		}
		return dotQ4_0NEON(wp, ap, n/32), true
	case Q8_0:
		if useDotProd {
			return dotQ8_0DOT(wp, ap, n/32), true
		}
		return dotQ8_0NEON(wp, ap, n/32), true
	case Q5_0:
		if useDotProd {
			return dotQ5_0DOT(wp, ap, n/32), true
		}
		return dotQ5_0NEON(wp, ap, n/32), true
	case Q4_1:
		if useDotProd {
			return dotQ4_1DOT(wp, ap, n/32), true
		}
		return dotQ4_1NEON(wp, ap, n/32), true
	case Q5_1:
		if useDotProd {
			return dotQ5_1DOT(wp, ap, n/32), true
		}
		return dotQ5_1NEON(wp, ap, n/32), true
	case IQ4_NL:
		if useDotProd {
			return dotIQ4_NLDOT(wp, ap, n/32), true
		}
		return dotIQ4_NLNEON(wp, ap, n/32), true
	case Q2_K:
		if useDotProd {
			return dotQ2_KDOT(wp, ap, n/QK_K), true
		}
		return dotQ2_KNEON(wp, ap, n/QK_K), true
	case Q3_K:
		if useDotProd {
			return dotQ3_KDOT(wp, ap, n/QK_K), true
		}
		return dotQ3_KNEON(wp, ap, n/QK_K), true
	case Q4_K:
		if useDotProd {
			return dotQ4_KDOT(wp, ap, n/QK_K), true
		}
		return dotQ4_KNEON(wp, ap, n/QK_K), true
	case Q5_K:
		if useDotProd {
			return dotQ5_KDOT(wp, ap, n/QK_K), true
		}
		return dotQ5_KNEON(wp, ap, n/QK_K), true
	case Q6_K:
		if useDotProd {
			return dotQ6_KDOT(wp, ap, n/QK_K), true
		}
		return dotQ6_KNEON(wp, ap, n/QK_K), true
	case IQ4_XS:
		if useDotProd {
			return dotIQ4_XSDOT(wp, ap, n/QK_K), true
		}
		return dotIQ4_XSNEON(wp, ap, n/QK_K), true
	case F16, BF16:
		return dotHalfFast(wRow, act, n, w), true
	case F32:
		return dotF32Fast(wRow, act, n), true
	}
	return 0, false
}

// floatStep is the element count the float kernels take per iteration.
const floatStep = 32

// dotHalfFast runs the SIMD kernel on the largest multiple of its step
// and adds the few remaining products the way the generic code does.
func dotHalfFast(w, x []byte, n int, t Type) float32 {
	m := n &^ (floatStep - 1)
	var s float32
	if m > 0 {
		if t == F16 {
			s = dotF16NEON(&w[0], &x[0], m)
		} else {
			s = dotBF16NEON(&w[0], &x[0], m)
		}
	}
	if m == n {
		return s
	}
	tail := float64(s)
	if t == F16 {
		tail += float64(dotF16(w[2*m:], x[2*m:], n-m))
	} else {
		tail += float64(dotBF16(w[2*m:], x[2*m:], n-m))
	}
	return float32(tail)
}

func dotF32Fast(w, x []byte, n int) float32 {
	m := n &^ (floatStep - 1)
	var s float32
	if m > 0 {
		s = dotF32NEON(&w[0], &x[0], m)
	}
	if m == n {
		return s
	}
	return float32(float64(s) + float64(dotF32(w[4*m:], x[4*m:], n-m)))
}

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
// multiple of floatStep, for the float types) > 0. The DOT kernels need
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

// quantQ8_0Fast: the Go code rounds activations on arm64.
func quantQ8_0Fast(src []float32, dst []byte) int { return 0 }

// dotXn runs a two- or three-activation kernel for w: none on arm64,
// where the leftover rows of a batch run the one-row kernels.
func dotXn(w Type, n int, wp, xp *byte, stride, nb int, out *float32) bool { return false }
