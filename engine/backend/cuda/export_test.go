//go:build linux || windows

package cuda

import "testing"

// UseTestDriver points the backend at the emulated driver for tests in
// other packages (unless CHURON_CUDA_REAL=1: then at the real one), or
// skips the test.
func UseTestDriver(t testing.TB) {
	t.Helper()
	if !realGPU() {
		t.Setenv("CHURON_CUDA_LIBRARY", fakeDriver(t))
	}
}
