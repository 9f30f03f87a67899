//go:build linux || windows

package cuda

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/churon/churon/engine/backend"
)

// The probe's one-line reasons, for every way the GPU can be out of
// reach. They run everywhere: a library that does not exist, libraries
// that are not CUDA (the C library; a small one the test builds with
// cc), and the emulated driver told to fail each step.

// probeCUDA probes the registered backend with the driver at lib.
func probeCUDA(t *testing.T, lib string, env ...string) error {
	t.Helper()
	t.Setenv("CHURON_CUDA_LIBRARY", lib)
	for i := 0; i+1 < len(env); i += 2 {
		t.Setenv(env[i], env[i+1])
	}
	d, err := backend.ProbeNamed("cuda")
	if err == nil {
		d.Close()
		t.Fatalf("the probe found %s", d.Name())
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("the reason is more than one line: %q", err)
	}
	return err
}

func mustSay(t *testing.T, err error, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("reason %q does not say %q", err, p)
		}
	}
}

func TestProbeNoLibrary(t *testing.T) {
	lib := filepath.Join(t.TempDir(), "libcuda.so.1")
	if runtime.GOOS == "windows" {
		lib = filepath.Join(t.TempDir(), "nvcuda.dll")
	}
	err := probeCUDA(t, lib)
	mustSay(t, err, "no NVIDIA driver found", lib)
	var le *LoadError
	if !errors.As(err, &le) || le.Missing != "" {
		t.Errorf("want a LoadError without a missing symbol, got %#v", err)
	}
}

func TestProbeNotCUDA(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("uses the C library by its Linux name")
	}
	err := probeCUDA(t, "libc.so.6")
	mustSay(t, err, "libc.so.6 is not the NVIDIA driver", "it has no cuInit")
}

// TestProbeMissingSymbol: a library with cuInit but not the rest, as a
// driver older than the backend needs would be.
func TestProbeMissingSymbol(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("builds a shared library with cc")
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("SKIP: no C compiler to build a stand-in driver: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "old.c")
	lib := filepath.Join(dir, "libcuda.so.1")
	code := "int cuInit(unsigned f) { return 0; }\nint cuDriverGetVersion(int *v) { *v = 10020; return 0; }\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	err := probeCUDA(t, lib)
	mustSay(t, err, "the NVIDIA driver is too old", "has no cuDeviceGetCount", "R450")
}

func TestProbeFailures(t *testing.T) {
	if realGPU() {
		t.Skip("tells the emulated driver to fail")
	}
	lib := fakeDriver(t)
	for _, tc := range []struct {
		name string
		env  []string
		say  []string
	}{
		{"no GPU", []string{"CHURON_FAKECUDA_DEVICES", "0"},
			[]string{"no NVIDIA GPU found", "CUDA_ERROR_NO_DEVICE"}},
		{"driver not started", []string{"CHURON_FAKECUDA_INIT_ERROR", "999"},
			[]string{"the NVIDIA driver did not start", "nvidia-smi"}},
		{"library and module differ", []string{"CHURON_FAKECUDA_INIT_ERROR", "803"},
			[]string{"different versions", "restart"}},
		{"GPU too old", []string{"CHURON_FAKECUDA_CC", "52"},
			[]string{"(sm_52) is older than Churon's kernels support", "sm_61"}},
		{"driver too old for the PTX", []string{"CHURON_FAKECUDA_DRIVER", "10020"},
			[]string{"the NVIDIA driver (CUDA 10.2) is too old for Churon's kernels", "PTX ISA " + ptxISA, "update the driver", "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"}},
		{"JIT error", []string{"CHURON_FAKECUDA_JIT_ERROR", "ptxas fatal   : Out of memory\nmore detail"},
			[]string{"compiling Churon's kernels for Churon emulated GPU failed: ptxas fatal   : Out of memory", "CUDA_ERROR_INVALID_PTX"}},
		{"another device", []string{"CHURON_CUDA_DEVICE", "3"},
			[]string{"CHURON_CUDA_DEVICE=3", "sees 1 GPU"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := probeCUDA(t, lib, tc.env...)
			mustSay(t, err, tc.say...)
		})
	}
}

// TestOutOfMemory: an allocation the device cannot make is
// backend.ErrOutOfMemory with its size and the device named.
func TestOutOfMemory(t *testing.T) {
	d := openTest(t, "CHURON_FAKECUDA_MEMORY", "1073741824")
	if realGPU() {
		t.Skip("sizes the emulated GPU's memory")
	}
	if f, want := d.FreeBytes(), int64(1<<30)-reserveBytes(1<<30)-d.Used(); f > want || f < want-(1<<20) {
		t.Errorf("a 1 GiB GPU leaves %d bytes for the planner, want %d (what is free less the reserve)", f, want)
	}
	_, err := d.Alloc(1 << 29) // 2 GiB of floats
	if !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("got %v, want ErrOutOfMemory", err)
	}
	mustSay(t, err, "2048 MiB", "Churon emulated GPU")
	// the device still works
	b, err := d.Alloc(16)
	if err != nil {
		t.Fatal(err)
	}
	d.Free(b)
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}

// TestStickyFault: a kernel fault fails the next Sync and every Sync
// after, cache reads too, and the device refuses new memory; closing it
// and opening anew gives a working GPU.
func TestStickyFault(t *testing.T) {
	if realGPU() {
		t.Skip("injects a fault in the emulated driver")
	}
	d := openTest(t, "CHURON_FAKECUDA_FAULT_AFTER", "3")
	b, _ := d.Alloc(8)
	kv, err := d.NewKV(backend.KVSpec{Type: 0, Context: 4, Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	d.Write(b, []float32{1, 2, 3, 4, 5, 6, 7, 8})
	d.Scale(b, 2) // launch 1
	d.Scale(b, 2) // launch 2
	if err := d.Sync(); err != nil {
		t.Fatalf("before the fault: %v", err)
	}
	d.Add(b, b) // launch 3: faults
	out := make([]float32, 8)
	d.Read(out, b)
	for range 2 {
		err := d.Sync()
		var ce *Error
		if !errors.As(err, &ce) || !ce.Sticky() || !strings.Contains(err.Error(), "CUDA_ERROR_ILLEGAL_ADDRESS") {
			t.Fatalf("Sync after the fault: %v", err)
		}
	}
	if out[0] != 0 {
		t.Errorf("a Read after the fault delivered %v", out)
	}
	if _, err := kv.AppendRows(nil, false, 0, 1); err == nil {
		t.Error("reading cache rows after the fault worked")
	}
	if _, err := d.Alloc(4); err == nil {
		t.Error("Alloc after the fault worked")
	}
	kv.Release()
	d.Close()
	d.Free(b) // after Close: nothing happens
	t.Setenv("CHURON_FAKECUDA_FAULT_AFTER", "0")
	d2, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	c, _ := d2.Alloc(2)
	d2.Write(c, []float32{3, 4})
	d2.Add(c, c)
	got := make([]float32, 2)
	d2.Read(got, c)
	if err := d2.Sync(); err != nil || got[1] != 8 {
		t.Fatalf("a new device after the fault: %v %v", got, err)
	}
}
