//go:build (amd64 || arm64) && !noasm

package quant

import "unsafe"

// The levels, the one-row kernel table and the loops here are the same on
// every architecture with kernels; each architecture supplies its levels
// and rowKernels, simdOn, floatStep, dotHalfKernel, dotF32Kernel, dotX4,
// dotXn and vecDotFast (which runs vecDotKernel where it has no better
// path).

// A simdLevel is one kernel level above the generic code ("go"): its name
// for CHURON_CPU and the tests, whether the CPU has it, and whether it is
// in use. levels lists them from lowest to highest; a level in use implies
// every lower one is.
type simdLevel struct {
	name      string
	has, used *bool
}

// SIMDLevel names the implementation VecDot uses on this machine: "go",
// or the highest level in use ("avx2" or "avx512" on amd64, "neon" or
// "dotprod" on arm64).
func SIMDLevel() string {
	for i := len(levels) - 1; i >= 0; i-- {
		if *levels[i].used {
			return levels[i].name
		}
	}
	return "go"
}

// simdLevels lists the implementations this machine can run, for tests.
func simdLevels() []string {
	l := []string{"go"}
	for _, v := range levels {
		if *v.has {
			l = append(l, v.name)
		}
	}
	return l
}

// setSIMDLevel selects an implementation for tests and returns a function
// that restores the previous one: level and every lower one this machine
// has are used ("go", or a name not in levels, uses none). Not safe to
// call while dot products run.
func setSIMDLevel(level string) (restore func()) {
	var saved [len(levels)]bool
	on := false
	for i := len(levels) - 1; i >= 0; i-- {
		on = on || levels[i].name == level
		saved[i] = *levels[i].used
		*levels[i].used = *levels[i].has && on
	}
	return func() {
		for i, v := range saved {
			*levels[i].used = v
		}
	}
}

// topLevel reports whether the highest level (avx512, dotprod) is in use.
func topLevel() bool { return *levels[len(levels)-1].used }

// A rowKernel is a one-row kernel in assembly: the dot product of nb
// whole blocks at w and x, which the caller has bounds-checked.
type rowKernel func(w, x *byte, nb int) float32

// levelKernels are a type's one-row kernels: base for the lower level,
// top for the highest (nil where base serves it too).
type levelKernels struct{ base, top rowKernel }

// vecDotKernel runs w's one-row kernel from rowKernels, or the float
// kernels, on checked inputs with n > 0; false where w has none. (A call
// through a function value lets the rows' contents escape: fine for the
// weight and activation buffers, which live on the heap — no caller in
// the engine is moved there by it, per go build -gcflags=-m — but the
// four-activation kernels, whose out is often a stack array, stay direct
// calls in dotX4.)
func vecDotKernel(w Type, wRow, act []byte, n int) (float32, bool) {
	if !simdOn() {
		return 0, false
	}
	switch w {
	case F16, BF16:
		return dotHalfFast(wRow, act, n, w), true
	case F32:
		return dotF32Fast(wRow, act, n), true
	}
	if int(w) >= len(rowKernels) {
		return 0, false
	}
	k := rowKernels[w]
	if k.top != nil && topLevel() {
		k.base = k.top
	}
	if k.base == nil {
		return 0, false
	}
	return k.base(&wRow[0], &act[0], n/w.BlockSize()), true
}

// dotHalfFast runs the SIMD kernel on the largest multiple of its step
// and adds the few remaining products the way the generic code does.
func dotHalfFast(w, x []byte, n int, t Type) float32 {
	m := n &^ (floatStep() - 1)
	var s float32
	if m > 0 {
		s = dotHalfKernel(&w[0], &x[0], m, t)
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

// dotF32Fast is dotHalfFast for F32.
func dotF32Fast(w, x []byte, n int) float32 {
	m := n &^ (floatStep() - 1)
	var s float32
	if m > 0 {
		s = dotF32Kernel(&w[0], &x[0], m)
	}
	if m == n {
		return s
	}
	return float32(float64(s) + float64(dotF32(w[4*m:], x[4*m:], n-m)))
}

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
