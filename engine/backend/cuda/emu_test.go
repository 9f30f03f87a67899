//go:build linux || windows

package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// The emulated driver (emu/fakecuda.cpp) is a libcuda.so.1 that runs the
// kernels' CUDA C source on the CPU. Tests build it with the host's C++
// compiler, once per version of the sources, and point the backend at it
// with CHURON_CUDA_LIBRARY; with a real GPU (CHURON_CUDA_REAL=1) the same
// tests run on it instead.

var (
	fakeOnce sync.Once
	fakePath string
	fakeErr  error
)

// emuSources are the files the emulated driver is built from.
var emuSources = []string{"emu/fakecuda.cpp", "emu/emu.h", "kernels/kernels.cu", "kernels/common.cuh"}

// buildFake compiles the emulated driver into dir.
func buildFake(dir string) (string, error) {
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "g++"
	}
	if _, err := exec.LookPath(cxx); err != nil {
		return "", fmt.Errorf("no C++ compiler (%s): %w", cxx, err)
	}
	h := sha256.New()
	for _, f := range emuSources {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	out := filepath.Join(dir, "fakecuda-"+hex.EncodeToString(h.Sum(nil))[:16], "libcuda.so.1")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	tmp := out + fmt.Sprintf(".%d.tmp", os.Getpid())
	cmd := exec.Command(cxx, "-std=c++17", "-O2", "-g", "-fPIC", "-shared", "-ffp-contract=off", "-fvisibility=hidden",
		"-Wall", "-Wno-unknown-pragmas", "-Wno-unused-function", "-Ikernels", "-Iemu", "-o", tmp, "emu/fakecuda.cpp")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the emulated driver: %v\n%s", err, b)
	}
	return out, os.Rename(tmp, out)
}

// fakeDriver returns the emulated driver's path, or skips the test (it
// says why) where it cannot be built.
func fakeDriver(t testing.TB) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the emulated driver is built for Linux only")
	}
	fakeOnce.Do(func() {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		fakePath, fakeErr = buildFake(filepath.Join(cache, "churon-test"))
	})
	if fakeErr != nil {
		t.Skipf("SKIP: no emulated CUDA driver: %v", fakeErr)
	}
	return fakePath
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
