//go:build linux || windows

package cuda

import (
	"bytes"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/internal/gpucommon"
	"github.com/churon/churon/engine/backend/internal/gputwin"
)

// chk compares this device's values with the CPU's.
var chk = gputwin.Check{Name: "GPU", On: "on the GPU"}

// TestKernels holds every kernel to its CPU twin (gputwin.Kernels), on a
// GPU (CHURON_CUDA_REAL=1) and under the emulated driver alike. Every
// result is the CPU's bit for bit (same operations, same order; the
// emulator and ptxas do not fuse them), but for the tolerances every
// backend has.
func TestKernels(t *testing.T) {
	k := gputwin.Kernels[*Device]{
		Open:       openTest,
		Check:      chk,
		Round:      roundOn,
		ReverseEnv: [2]string{"CHURON_FAKECUDA_ORDER", "reverse"},

		MatMulShapes:   [][2]int{{67, 512}, {5, 256}, {130, 768}},
		MatMulRows:     []int{1, 2, 3, 8, 9, 17, 70},
		NormDims:       []int{64, 100, 896, 4096},
		HeadDims:       []int{64, 80, 128, 256},
		DecodeContext:  301,
		PrefillRows:    37,
		ChunkContext:   200,
		ElementwiseLen: 3*8192 + 77,
		RepeatRows:     70,
	}
	k.Run(t)
}

// roundOn rounds rows×cols values at x into format a and reads the bytes
// back.
func roundOn(t *testing.T, d *Device, a gpucommon.Act, x backend.Buf, rows, cols int) []byte {
	n := rows * a.RowBytes(cols)
	dst, err := d.alloc(int64(n), "test")
	if err != nil {
		t.Fatal(err)
	}
	d.round(a, dst, d.ptr(x), rows, cols)
	src, buf := d.stage(n)
	d.record(cmd{op: opDtoH, nargs: 3, args: [maxArgs]uint64{uint64(src), dst, uint64(n)}})
	d.g.exec.do(d.waitF)
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(buf)
}
