//go:build amd64 && !purego

package quant

import (
	"os"
	"sync"

	"golang.org/x/sys/cpu"
)

// CPU features, read once. Tests flip them (setSIMDLevel) to run every
// implementation this machine has against the generic code.
//
// The avx2 level needs AVX2 and FMA; it also uses F16C, which x/sys/cpu
// does not report but every AVX2 processor has. The avx512 level adds
// AVX-512 F, BW, VL and VNNI (Ice Lake, Zen 4 and later); a CPU with
// AVX-512 but no VNNI (Skylake-X) runs the avx2 kernels. CHURON_NOSIMD=1
// in the environment, or the purego build tag, forces the generic code.
var (
	useAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA && os.Getenv("CHURON_NOSIMD") != "1"
	useAVX512 = useAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW &&
		cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI

	hasAVX2, hasAVX512 = useAVX2, useAVX512
)

// SIMDLevel names the implementation VecDot uses on this machine: "go",
// "avx2" or "avx512".
func SIMDLevel() string {
	switch {
	case useAVX512:
		return "avx512"
	case useAVX2:
		return "avx2"
	}
	return "go"
}

// simdLevels lists the implementations this machine can run, for tests.
func simdLevels() []string {
	l := []string{"go"}
	if hasAVX2 {
		l = append(l, "avx2")
	}
	if hasAVX512 {
		l = append(l, "avx512")
	}
	return l
}

// setSIMDLevel selects an implementation for tests and returns a function
// that restores the previous one. Not safe to call while dot products run.
func setSIMDLevel(level string) (restore func()) {
	a, b := useAVX2, useAVX512
	useAVX2 = hasAVX2 && (level == "avx2" || level == "avx512")
	useAVX512 = hasAVX512 && level == "avx512"
	return func() { useAVX2, useAVX512 = a, b }
}

// vecDotFast runs the SIMD kernel for w, if there is one, on checked
// inputs with n > 0.
func vecDotFast(w Type, wRow, act []byte, n int) (float32, bool) {
	if !useAVX2 {
		return 0, false
	}
	wp, ap := &wRow[0], &act[0]
	switch w {
	case Q4_0:
		if useAVX512 {
			return dotQ4_0AVX512(wp, ap, n/32), true
		}
		return dotQ4_0AVX2(wp, ap, n/32), true
	case Q8_0:
		if useAVX512 {
			return dotQ8_0AVX512(wp, ap, n/32), true
		}
		return dotQ8_0AVX2(wp, ap, n/32), true
	case Q5_0:
		if useAVX512 {
			return dotQ5_0AVX512(wp, ap, n/32), true
		}
		return dotQ5_0AVX2(wp, ap, n/32), true
	case Q4_1:
		if useAVX512 {
			return dotQ4_1VNNI(wp, ap, n/32), true
		}
		return dotQ4_1AVX2(wp, ap, n/32), true
	case Q5_1:
		if useAVX512 {
			return dotQ5_1VNNI(wp, ap, n/32), true
		}
		return dotQ5_1AVX2(wp, ap, n/32), true
	case IQ4_NL:
		if useAVX512 {
			return dotIQ4_NLVNNI(wp, ap, n/32), true
		}
		return dotIQ4_NLAVX2(wp, ap, n/32), true
	case Q4_K:
		return dotQ4_KAVX2(wp, ap, n/QK_K), true
	case Q2_K:
		return dotQ2_KAVX2(wp, ap, n/QK_K), true
	case Q3_K:
		return dotQ3_KAVX2(wp, ap, n/QK_K), true
	case Q5_K:
		return dotQ5_KAVX2(wp, ap, n/QK_K), true
	case Q6_K:
		return dotQ6_KAVX2(wp, ap, n/QK_K), true
	case IQ4_XS:
		return dotIQ4_XSAVX2(wp, ap, n/QK_K), true
	case F16:
		return dotHalfFast(wRow, act, n, F16), true
	case BF16:
		return dotHalfFast(wRow, act, n, BF16), true
	case F32:
		return dotF32Fast(wRow, act, n), true
	}
	return 0, false
}

// dotHalfFast runs the SIMD kernel on the largest multiple of its step
// and adds the few remaining products the way the generic code does.
func dotHalfFast(w, x []byte, n int, t Type) float32 {
	step := 32
	if useAVX512 {
		step = 64
	}
	m := n &^ (step - 1)
	var s float32
	if m > 0 {
		switch {
		case t == F16 && useAVX512:
			s = dotF16AVX512(&w[0], &x[0], m)
		case t == F16:
			s = dotF16AVX2(&w[0], &x[0], m)
		case useAVX512:
			s = dotBF16AVX512(&w[0], &x[0], m)
		default:
			s = dotBF16AVX2(&w[0], &x[0], m)
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
	step := 32
	if useAVX512 {
		step = 64
	}
	m := n &^ (step - 1)
	var s float32
	if m > 0 {
		if useAVX512 {
			s = dotF32AVX512(&w[0], &x[0], m)
		} else {
			s = dotF32AVX2(&w[0], &x[0], m)
		}
	}
	if m == n {
		return s
	}
	return float32(float64(s) + float64(dotF32(w[4*m:], x[4*m:], n-m)))
}

// simdOn reports whether any kernel level is in use (the shared loops in
// simd_loops.go ask).
func simdOn() bool { return useAVX2 }

// dotX4 runs the four-activation kernel for w, if there is one. (Direct
// calls, not a function value, keep out from escaping.)
func dotX4(w Type, wp, xp *byte, stride, nb int, out *float32) bool {
	switch {
	case w == Q4_0 && useAVX512:
		dotQ4_0x4AVX512(wp, xp, stride, nb, out)
	case w == Q4_0:
		dotQ4_0x4AVX2(wp, xp, stride, nb, out)
	case w == Q8_0 && useAVX512:
		dotQ8_0x4AVX512(wp, xp, stride, nb, out)
	case w == Q5_0 && useAVX512:
		dotQ5_0x4AVX512(wp, xp, stride, nb, out)
	case w == Q8_0:
		dotQ8_0x4AVX2(wp, xp, stride, nb, out)
	case w == Q4_K:
		dotQ4_Kx4AVX2(wp, xp, stride, nb, out)
	case w == Q6_K:
		dotQ6_Kx4AVX2(wp, xp, stride, nb, out)
	default:
		return false
	}
	return true
}

// prepOffset is the offset the 512-bit kernels subtract from w's
// unsigned quants (Q4_0: q−8, Q5_0: q−16, Q8_0: (w+128)−128), or 0 when
// w has no prepared-activation kernels.
func prepOffset(w Type) int {
	switch w {
	case Q4_0:
		return 8
	case Q5_0:
		return 16
	case Q8_0:
		return 128
	}
	return 0
}

// vecDotRowsFast runs a many-rows kernel where there is one, on checked
// inputs with n > 0.
func vecDotRowsFast(w Type, rows []byte, stride, nRows int, act []byte, n int, out []float32) bool {
	nb := n / 32
	off := prepOffset(w)
	if !useAVX512 || off == 0 || nb < 2 || nb/2 > maxPreparedPairs {
		return false
	}
	prep := prepPool.Get().(*prepBuf)
	prepQ8_0Pairs(&act[0], nb/2, off, &prep[0])
	dotRows(w, &rows[0], stride, nRows, &prep[0], &act[0], nb, &out[0])
	prepPool.Put(prep)
	return true
}

func dotRows(w Type, wp *byte, stride, nRows int, prep, xp *byte, nb int, out *float32) {
	switch w {
	case Q4_0:
		dotQ4_0RowsAVX512(wp, stride, nRows, prep, xp, nb, out)
	case Q5_0:
		dotQ5_0RowsAVX512(wp, stride, nRows, prep, xp, nb, out)
	case Q8_0:
		dotQ8_0RowsAVX512(wp, stride, nRows, prep, xp, nb, out)
	}
}

func dotX4Prep(w Type, wp, prep *byte, pstride int, xp *byte, xstride, nb int, out *float32) {
	switch w {
	case Q4_0:
		dotQ4_0x4PrepAVX512(wp, prep, pstride, xp, xstride, nb, out)
	case Q5_0:
		dotQ5_0x4PrepAVX512(wp, prep, pstride, xp, xstride, nb, out)
	case Q8_0:
		dotQ8_0x4PrepAVX512(wp, prep, pstride, xp, xstride, nb, out)
	}
}

// vecDotTileFast runs the prepared-activation kernels for a tile, on
// checked inputs with n > 0: activation rows four at a time, each group
// laid out once and run against every weight row.
func vecDotTileFast(w Type, rows []byte, rowStride, nRows int, acts []byte, actStride, nActs, n int, out []float32, outStride int) bool {
	nb := n / 32
	off := prepOffset(w)
	if !useAVX512 || off == 0 || nb < 2 || nb/2 > maxPreparedPairs {
		return false
	}
	prep := prepPool.Get().(*prepBuf)
	pstride := nb / 2 * 192
	var tmp [4]float32
	a := 0
	for ; a+4 <= nActs; a += 4 {
		for i := range 4 {
			prepQ8_0Pairs(&acts[(a+i)*actStride], nb/2, off, &prep[i*pstride])
		}
		for r := range nRows {
			dotX4Prep(w, &rows[r*rowStride], &prep[0], pstride, &acts[a*actStride], actStride, nb, &tmp[0])
			for i, v := range tmp {
				out[(a+i)*outStride+r] = v
			}
		}
	}
	for ; a < nActs; a++ {
		prepQ8_0Pairs(&acts[a*actStride], nb/2, off, &prep[0])
		dotRows(w, &rows[0], rowStride, nRows, &prep[0], &acts[a*actStride], nb, &out[a*outStride])
	}
	prepPool.Put(prep)
	return true
}

// maxPreparedPairs bounds the activation block pairs the prepared kernels
// lay out (rows up to 16384 elements, Llama-3-8B's 14336 included); prepBuf
// holds four rows of them.
const maxPreparedPairs = 256

type prepBuf [4 * maxPreparedPairs * 192]byte

// prepPool recycles prepBufs, so that the kernels neither allocate nor
// zero 192 KiB of stack per call.
var prepPool = sync.Pool{New: func() any { return new(prepBuf) }}

// Kernels in dot_amd64.s. Each takes pointers to whole blocks that the
// caller has bounds-checked, and a block count (element count for the
// float types) > 0.

//go:noescape
func dotQ4_0AVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ8_0AVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ4_0x4AVX2(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ8_0x4AVX2(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ5_0AVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ4_1AVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ4_1VNNI(w, x *byte, nb int) float32

//go:noescape
func dotQ5_1AVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ5_1VNNI(w, x *byte, nb int) float32

//go:noescape
func dotIQ4_NLAVX2(w, x *byte, nb int) float32

//go:noescape
func dotIQ4_NLVNNI(w, x *byte, nb int) float32

//go:noescape
func dotQ4_KAVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ2_KAVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ3_KAVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ5_KAVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ6_KAVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ4_Kx4AVX2(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ6_Kx4AVX2(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotIQ4_XSAVX2(w, x *byte, nb int) float32

//go:noescape
func dotF16AVX2(w, x *byte, n int) float32

//go:noescape
func dotF16AVX512(w, x *byte, n int) float32

//go:noescape
func dotBF16AVX2(w, x *byte, n int) float32

//go:noescape
func dotBF16AVX512(w, x *byte, n int) float32

//go:noescape
func dotF32AVX2(w, x *byte, n int) float32

//go:noescape
func dotF32AVX512(w, x *byte, n int) float32

//go:noescape
func prepQ8_0Pairs(x *byte, npairs, off int, dst *byte)

//go:noescape
func dotQ4_0AVX512(w, x *byte, nb int) float32

//go:noescape
func dotQ4_0x4AVX512(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ4_0RowsAVX512(w *byte, wstride, nrows int, prep, x *byte, nb int, out *float32)

//go:noescape
func dotQ4_0x4PrepAVX512(w, prep *byte, pstride int, x *byte, xstride, nb int, out *float32)

//go:noescape
func dotQ5_0AVX512(w, x *byte, nb int) float32

//go:noescape
func dotQ5_0x4AVX512(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ5_0RowsAVX512(w *byte, wstride, nrows int, prep, x *byte, nb int, out *float32)

//go:noescape
func dotQ5_0x4PrepAVX512(w, prep *byte, pstride int, x *byte, xstride, nb int, out *float32)

//go:noescape
func dotQ8_0AVX512(w, x *byte, nb int) float32

//go:noescape
func dotQ8_0x4AVX512(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ8_0RowsAVX512(w *byte, wstride, nrows int, prep, x *byte, nb int, out *float32)

//go:noescape
func dotQ8_0x4PrepAVX512(w, prep *byte, pstride int, x *byte, xstride, nb int, out *float32)
