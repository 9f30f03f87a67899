package metal

import (
	"github.com/churon/churon/engine/backend/internal/gpucommon"
	"github.com/churon/churon/engine/quant"
)

// round encodes the rounding of n rows of cols values at x into format a
// at dst, exactly as quant.QuantizeActivations rounds them.
func (d *Device) round(a gpucommon.Act, dst, x bind, n, cols int) {
	k, blocks := gpucommon.RoundKernel(a, n*cols)
	if blocks == 0 {
		d.launch1(k, n*cols, []uint32{i32(n * cols)}, x, dst)
		return
	}
	// a SIMD group per block, eight to a threadgroup
	d.launch(k, [3]uint32{uint32((blocks + 7) / 8), 1, 1}, [3]uint32{256, 1, 1}, []uint32{i32(blocks)}, x, dst)
}

// matmuls encodes a set of products (gpucommon.MatMuls plans it): each
// distinct input is rounded once per format its weights need, then each
// product runs on it.
func (d *Device) matmuls(s *gpucommon.Products[*Weight]) {
	var base [gpucommon.NumActs]rbuf
	for a, need := range s.Need {
		if need > 0 {
			b, ok := d.ensure(&d.acts[a], need, "rounded activations")
			if !ok {
				return
			}
			base[a] = b
		}
	}
	for _, in := range s.Inputs {
		for a, at := range in.At {
			if at >= 0 {
				d.round(gpucommon.Act(a), base[a].at(at), d.buf(in.X), in.N, s.Cols)
			}
		}
	}
	for _, p := range s.Products {
		in := &s.Inputs[p.In]
		x := d.buf(in.X)
		if a := gpucommon.ActOf(p.W.T.Type); a != gpucommon.ActNone {
			x = base[a].at(in.At[a])
		}
		d.product(d.buf(p.Dst), p.W, x, in.N)
	}
}

// product encodes dst = w · A for n input rows already in w's format.
func (d *Device) product(dst bind, w *Weight, a bind, n int) {
	t := w.T
	rows, cols := t.Rows(), t.Cols()
	ks := gpucommon.MatMulKernels[t.Type]
	k := ks[0]
	grid := [3]uint32{uint32((rows + 3) / 4), 1, 1}
	tg := [3]uint32{128, 1, 1}
	if n > gpucommon.MMVMaxRows {
		k = ks[1]
		grid = [3]uint32{uint32((rows + mmqTile - 1) / mmqTile), uint32((n + mmqTile - 1) / mmqTile), 1}
		tg = [3]uint32{256, 1, 1}
	}
	var params []uint32
	switch t.Type {
	case quant.F32, quant.F16, quant.BF16:
		params = []uint32{i32(rows), i32(cols), i32(n), i32(rows)}
	default:
		wrow, _ := t.Type.RowSize(cols)
		params = []uint32{i32(rows), i32(cols / 32), i32(n), i32(wrow), i32(gpucommon.ActOf(t.Type).RowBytes(cols)), i32(rows)}
	}
	d.launch(k, grid, tg, params, w.At, a, dst)
}
