//go:build linux || windows

package cuda

import (
	"github.com/churon/churon/engine/backend/internal/gpucommon"
	"github.com/churon/churon/engine/quant"
)

// round queues the rounding of n rows of cols values at x into format
// a at dst, exactly as quant.QuantizeActivations rounds them.
func (d *Device) round(a gpucommon.Act, dst, x uint64, n, cols int) {
	k, blocks := gpucommon.RoundKernel(a, n*cols)
	if blocks == 0 {
		d.launch1(k, n*cols, x, dst, i32(n*cols))
		return
	}
	// a warp per block, eight to a thread block
	d.launch(k, [3]uint32{uint32((blocks + 7) / 8), 1, 1}, [3]uint32{256, 1, 1}, x, dst, i32(blocks))
}

// matmuls runs a set of products (gpucommon.MatMuls plans it): each
// distinct input is rounded once per format its weights need, then each
// product runs on it.
func (d *Device) matmuls(s *gpucommon.Products[*Weight]) {
	var base [gpucommon.NumActs]uint64
	for a, need := range s.Need {
		if need > 0 {
			if base[a] = d.ensure(&d.acts[a], int64(need), "rounded activations"); base[a] == 0 {
				return
			}
		}
	}
	for _, in := range s.Inputs {
		for a, at := range in.At {
			if at >= 0 {
				d.round(gpucommon.Act(a), base[a]+uint64(at), d.ptr(in.X), in.N, s.Cols)
			}
		}
	}
	for _, p := range s.Products {
		in := &s.Inputs[p.In]
		x := d.ptr(in.X)
		if a := gpucommon.ActOf(p.W.T.Type); a != gpucommon.ActNone {
			x = base[a] + uint64(in.At[a])
		}
		d.product(d.ptr(p.Dst), p.W, x, in.N)
	}
}

// product launches dst = w · A for n input rows already in w's format.
func (d *Device) product(dst uint64, w *Weight, a uint64, n int) {
	t := w.T
	rows, cols := t.Rows(), t.Cols()
	ks := gpucommon.MatMulKernels[t.Type]
	tiled := n > gpucommon.MMVMaxRows
	k := ks[0]
	grid := [3]uint32{uint32((rows + 3) / 4), 1, 1}
	block := [3]uint32{128, 1, 1}
	if tiled {
		k = ks[1]
		grid = [3]uint32{uint32((rows + 63) / 64), uint32((n + 63) / 64), 1}
		block = [3]uint32{256, 1, 1}
	}
	for r0 := 0; r0 < n; r0 += 65535 * 64 {
		// the grid's second dimension holds up to 65535 tiles of 64 rows
		rn := min(n-r0, 65535*64)
		aoff := uint64(r0) * uint64(gpucommon.ActOf(t.Type).RowBytes(cols))
		yoff := uint64(r0) * uint64(rows) * 4
		if tiled {
			grid[1] = uint32((rn + 63) / 64)
		}
		switch t.Type {
		case quant.F32, quant.F16, quant.BF16:
			d.launch(k, grid, block, w.At, a+aoff, dst+yoff, i32(rows), i32(cols), i32(rn), i32(rows))
		default:
			wrow, _ := t.Type.RowSize(cols)
			d.launch(k, grid, block, w.At, a+aoff, dst+yoff, i32(rows), i32(cols/32), i32(rn), i64(wrow),
				i64(gpucommon.ActOf(t.Type).RowBytes(cols)), i32(rows))
		}
	}
}
