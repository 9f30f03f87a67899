//go:build (!amd64 && !arm64) || noasm

package quant

// Without SIMD kernels (architectures other than amd64 and arm64, or the
// noasm build tag) every dot product runs the generic code.

// CHURON_CPU can only say go here.
var cpuCap, cpuKnown = cpuSetting([]string{"go"})

func vecDotFast(w Type, wRow, act []byte, n int) (float32, bool) { return 0, false }

func vecDotF32Fast(w, x []float32) (float32, bool) { return 0, false }

func quantFast(t Type, src []float32, dst []byte) int { return 0 }

func vecDotMultiFast(w Type, wRow, acts []byte, stride, nActs, n int, out []float32) bool {
	return false
}

func vecDotRowsFast(w Type, rows []byte, stride, nRows int, act []byte, n int, out []float32) bool {
	return false
}

func vecDotTileFast(w Type, rows []byte, rowStride, nRows int, acts []byte, actStride, nActs, n int, out []float32, outStride int) bool {
	return false
}

// simdLevels lists the implementations tests can select with setSIMDLevel.
func simdLevels() []string { return []string{"go"} }

// setSIMDLevel selects an implementation for tests and returns a function
// that restores the previous one.
func setSIMDLevel(level string) (restore func()) { return func() {} }

// SIMDLevel names the implementation VecDot uses on this machine: "go"
// here; "avx2" or "avx512" on amd64 CPUs that have them, "neon" or
// "dotprod" on arm64.
func SIMDLevel() string { return "go" }
