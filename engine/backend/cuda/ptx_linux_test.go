package cuda

import (
	"errors"
	"testing"

	"github.com/churon/churon/engine/backend/cuda/internal/nvrtc"
)

// TestPTXUpToDate regenerates the PTX where NVRTC is installed (Debian
// non-free: apt-get install libnvrtc11.2) and requires the committed
// file byte for byte.
func TestPTXUpToDate(t *testing.T) {
	l, err := nvrtc.Load()
	if errors.Is(err, nvrtc.ErrNotFound) {
		t.Skipf("SKIP: cannot check that kernels.ptx is what the generator makes: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	got, err := nvrtc.Generate(l, "kernels")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != kernelsPTX {
		t.Fatal("kernels.ptx differs from what the generator makes now: run go generate in engine/backend/cuda (and check the NVRTC version in its header)")
	}
}
