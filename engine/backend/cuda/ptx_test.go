//go:build linux || windows

package cuda

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/churon/churon/engine/backend/cuda/internal/nvrtc"
	"github.com/churon/churon/engine/backend/internal/gpucommon"
)

// TestPTXMatchesSources runs everywhere: the embedded PTX was made from
// the kernel sources as they are (its header records their hash), so a
// kernel edited without `go generate` fails here, with no toolkit.
func TestPTXMatchesSources(t *testing.T) {
	want, err := nvrtc.SourceHash("kernels")
	if err != nil {
		t.Fatal(err)
	}
	if got := nvrtc.HeaderHash([]byte(kernelsPTX)); got != want {
		t.Fatalf("kernels.ptx was made from other sources (hash %q, the sources' is %s): run go generate in engine/backend/cuda", got, want)
	}
	for k := range gpucommon.NumKernels {
		if !strings.Contains(kernelsPTX, ".entry "+gpucommon.KernelNames[k]+"(") {
			t.Errorf("kernels.ptx has no kernel %s", gpucommon.KernelNames[k])
		}
	}
}

// ptxasPath finds ptxas: $PTXAS, the PATH, Debian's toolkit, $CUDA_HOME.
func ptxasPath() string {
	for _, p := range []string{os.Getenv("PTXAS"), "ptxas", "/usr/lib/nvidia-cuda-toolkit/bin/ptxas", filepath.Join(os.Getenv("CUDA_HOME"), "bin", "ptxas"), "/usr/local/cuda/bin/ptxas"} {
		if p == "" {
			continue
		}
		if q, err := exec.LookPath(p); err == nil {
			return q
		}
	}
	return ""
}

// TestPTXAssembles has ptxas (the toolkit's assembler, which needs no
// GPU) compile the embedded PTX, under the ISA version it declares, for
// the architectures from the oldest the kernels support to Hopper, and
// fails on register spills: they would cost every launch.
func TestPTXAssembles(t *testing.T) {
	ptxas := ptxasPath()
	if ptxas == "" {
		t.Skip("SKIP: no ptxas (apt-get install nvidia-cuda-toolkit from Debian non-free, or set PTXAS): the PTX is not assembled here")
	}
	src := filepath.Join(t.TempDir(), "kernels.ptx")
	if err := os.WriteFile(src, []byte(kernelsPTX), 0o644); err != nil {
		t.Fatal(err)
	}
	spill := regexp.MustCompile(`(\d+) bytes spill stores, (\d+) bytes spill loads`)
	for _, arch := range []string{"sm_61", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90"} {
		out, err := exec.Command(ptxas, "-arch="+arch, "-v", "-o", os.DevNull, src).CombinedOutput()
		if err != nil {
			t.Fatalf("ptxas -arch=%s: %v\n%s", arch, err, out)
		}
		for _, m := range spill.FindAllStringSubmatch(string(out), -1) {
			if a, _ := strconv.Atoi(m[1]); a > 0 {
				t.Errorf("%s: a kernel spills registers (%s)", arch, m[0])
			}
		}
	}
}
