//go:build linux || darwin

package metal

import (
	"bytes"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/internal/gpucommon"
	"github.com/churon/churon/engine/backend/internal/gputwin"
)

// chk compares this device's values with the CPU's.
var chk = gputwin.Check{Name: "Metal", On: "on Metal"}

// TestKernels holds every kernel to its CPU twin (gputwin.Kernels), on a
// Mac and under the emulated runner alike. Metal's results are the CPU's
// bit for bit, but for those that call exp or tanh, which the CPU takes
// in float64 and Metal in float (metal::precise): within 2 ulps; and
// RMSNorm, whose sums the CPU keeps in float64 and Metal in a float pair:
// within 1 ulp.
func TestKernels(t *testing.T) {
	k := gputwin.Kernels[*Device]{
		Open:       openTest,
		Check:      chk,
		Round:      roundOn,
		ReverseEnv: [2]string{"CHURON_FAKEMETAL_ORDER", "reverse"},

		MatMulShapes:   [][2]int{{67, 512}, {5, 256}},
		MatMulRows:     []int{1, 3, 8, 9, 37},
		NormDims:       []int{64, 100, 896, 2048},
		HeadDims:       []int{64, 80, 256},
		DecodeContext:  151,
		PrefillRows:    21,
		ChunkContext:   60,
		ElementwiseLen: 2*4096 + 77,
		RepeatRows:     40,

		NormULP: 1,
		ExpULP:  2,
	}
	k.Run(t)
}

// roundOn rounds rows×cols values at x into format a and reads the bytes
// back after a Sync.
func roundOn(t *testing.T, d *Device, a gpucommon.Act, x backend.Buf, rows, cols int) []byte {
	n := rows * a.RowBytes(cols)
	dst, err := d.alloc(n, "test")
	if err != nil {
		t.Fatal(err)
	}
	d.round(a, dst.at(0), d.buf(x), rows, cols)
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(dst.bytes()[:n])
}
