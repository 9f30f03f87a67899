//go:build linux || windows

package cuda

import (
	"os"
	"runtime"
	"testing"

	"github.com/churon/churon/engine/backend/internal/gputwin"
)

// The emulated driver (emu/fakecuda.cpp) is a libcuda.so.1 that runs the
// kernels' CUDA C source on the CPU. Tests build it with the host's C++
// compiler, once per version of the sources, and point the backend at it
// with CHURON_CUDA_LIBRARY; with a real GPU (CHURON_CUDA_REAL=1) the same
// tests run on it instead.

// emu is the emulated driver.
var emu = gputwin.Emulator{
	What:    "the emulated driver",
	Lib:     "libcuda.so.1",
	Dir:     "fakecuda",
	Sources: []string{"emu/fakecuda.cpp", "emu/emu.h", "kernels/kernels.cu", "kernels/common.cuh"},
	Main:    "emu/fakecuda.cpp",
	Flags: []string{"-std=c++17", "-O2", "-g", "-fPIC", "-shared", "-ffp-contract=off", "-fvisibility=hidden",
		"-Wall", "-Wno-unknown-pragmas", "-Wno-unused-function", "-Ikernels", "-Iemu"},
}

// fakeDriver returns the emulated driver's path, or skips the test (it
// says why) where it cannot be built.
func fakeDriver(t testing.TB) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the emulated driver is built for Linux only")
	}
	return emu.Path(t, "no emulated CUDA driver")
}

// realGPU reports whether the tests run on a real GPU.
func realGPU() bool { return os.Getenv("CHURON_CUDA_REAL") == "1" }

// openTest opens a device for a test: the real GPU with
// CHURON_CUDA_REAL=1, otherwise the emulated driver, configured by env
// (CHURON_FAKECUDA_* variables, see emu/fakecuda.cpp).
func openTest(t testing.TB, env ...string) *Device {
	t.Helper()
	if !realGPU() {
		t.Setenv("CHURON_CUDA_LIBRARY", fakeDriver(t))
		for i := 0; i+1 < len(env); i += 2 {
			t.Setenv(env[i], env[i+1])
		}
	}
	d, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}
