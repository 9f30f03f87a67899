//go:build linux || windows

package cuda

import (
	"fmt"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/internal/gpucommon"
	"github.com/churon/churon/engine/quant"
)

// act is the format a matrix product's input is rounded to
// (engine/backend/internal/gpucommon).
type act = gpucommon.Act

// round queues the rounding of n rows of cols values at x into format
// a at dst, exactly as quant.QuantizeActivations rounds them.
func (d *Device) round(a act, dst, x uint64, n, cols int) {
	switch a {
	case gpucommon.ActQ8_0, gpucommon.ActQ8_1, gpucommon.ActQ8_K:
		k := gpucommon.QuantizeKernel(a)
		bs := gpucommon.ActTypes[a].BlockSize()
		blocks := n * cols / bs
		// a warp per block, eight to a thread block
		d.launch(k, [3]uint32{uint32((blocks + 7) / 8), 1, 1}, [3]uint32{256, 1, 1}, x, dst, i32(blocks))
	case gpucommon.ActF16:
		d.launch1(gpucommon.KRoundF16, n*cols, x, dst, i32(n*cols))
	case gpucommon.ActBF16:
		d.launch1(gpucommon.KRoundBF16, n*cols, x, dst, i32(n*cols))
	}
}

// input is one distinct input of a set of products: a view, its rows,
// and where it went rounded to each format.
type input struct {
	x    backend.Buf
	n    int
	at   [gpucommon.NumActs]int64 // offset in d.acts[a], -1 when not rounded yet
	cols int
}

// product is one dst = w · x of a set.
type product struct {
	dst backend.Buf
	w   *Weight
	in  int // index into the inputs
}

// matmuls runs a set of products: each distinct input is rounded once
// per format its weights need, then each product runs on it.
func (d *Device) matmuls(ps []product, ins []input) {
	cols := ps[0].w.t.Cols()
	// Room for every rounded input, per format.
	var need [gpucommon.NumActs]int64
	for i := range ins {
		for a := range ins[i].at {
			ins[i].at[a] = -1
		}
	}
	for _, p := range ps {
		t := p.w.t
		if t.Cols() != cols {
			panic(fmt.Sprintf("cuda: matmul %s: %d columns, %s has %d", t.Name, t.Cols(), ps[0].w.t.Name, cols))
		}
		a := gpucommon.ActOf(t.Type)
		in := &ins[p.in]
		if in.x.Len() < in.n*cols || p.dst.Len() < in.n*t.Rows() {
			panic(fmt.Sprintf("cuda: matmul %s: buffers too small for %d rows", t.Name, in.n))
		}
		if a != gpucommon.ActNone && in.at[a] < 0 {
			in.at[a] = need[a]
			need[a] += (int64(a.RowBytes(cols))*int64(in.n) + 255) &^ 255
		}
	}
	var base [gpucommon.NumActs]uint64
	for a := range gpucommon.NumActs {
		if need[a] > 0 {
			if base[a] = d.ensure(&d.acts[a], need[a], "rounded activations"); base[a] == 0 {
				return
			}
		}
	}
	for i := range ins {
		in := &ins[i]
		for a := range gpucommon.NumActs {
			if in.at[a] >= 0 {
				d.round(act(a), base[a]+uint64(in.at[a]), d.ptr(in.x), in.n, cols)
			}
		}
	}
	for _, p := range ps {
		in := &ins[p.in]
		a := gpucommon.ActOf(p.w.t.Type)
		x := d.ptr(in.x)
		if a != gpucommon.ActNone {
			x = base[a] + uint64(in.at[a])
		}
		d.product(d.ptr(p.dst), p.w, x, in.n)
	}
}

// product launches dst = w · A for n input rows already in w's format.
func (d *Device) product(dst uint64, w *Weight, a uint64, n int) {
	t := w.t
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
			d.launch(k, grid, block, w.ptr, a+aoff, dst+yoff, i32(rows), i32(cols), i32(rn), i32(rows))
		default:
			wrow, _ := t.Type.RowSize(cols)
			d.launch(k, grid, block, w.ptr, a+aoff, dst+yoff, i32(rows), i32(cols/32), i32(rn), i64(wrow),
				i64(gpucommon.ActOf(t.Type).RowBytes(cols)), i32(rows))
		}
	}
}

// MatMul implements backend.Device.
func (d *Device) MatMul(dst backend.Buf, w backend.Weight, x backend.Buf, n int) {
	if n <= 0 {
		return
	}
	d.matmuls([]product{{dst: dst, w: d.weight(w)}}, []input{{x: x, n: n}})
}

// MatMulMulti implements backend.Device: the input is rounded once per
// format.
func (d *Device) MatMulMulti(dst []backend.Buf, w []backend.Weight, x backend.Buf, n int) {
	if len(dst) != len(w) || len(w) == 0 {
		panic(fmt.Sprintf("cuda: MatMulMulti: %d outputs for %d weights", len(dst), len(w)))
	}
	if n <= 0 {
		return
	}
	ps := make([]product, len(w))
	for i := range w {
		ps[i] = product{dst: dst[i], w: d.weight(w[i])}
	}
	d.matmuls(ps, []input{{x: x, n: n}})
}

// MatMulEach implements backend.Device: products given the same view of
// the same rows share its rounding.
func (d *Device) MatMulEach(dst []backend.Buf, w []backend.Weight, x []backend.Buf, n []int) {
	if len(dst) != len(w) || len(x) != len(w) || len(n) != len(w) || len(w) == 0 {
		panic(fmt.Sprintf("cuda: MatMulEach: %d outputs, %d inputs and %d row counts for %d weights", len(dst), len(x), len(n), len(w)))
	}
	var ps []product
	var ins []input
	for i := range w {
		if n[i] <= 0 {
			continue
		}
		in := -1
		for j := range ins {
			if ins[j].x == x[i] && ins[j].n == n[i] {
				in = j
			}
		}
		if in < 0 {
			in = len(ins)
			ins = append(ins, input{x: x[i], n: n[i]})
		}
		ps = append(ps, product{dst: dst[i], w: d.weight(w[i]), in: in})
	}
	if len(ps) > 0 {
		d.matmuls(ps, ins)
	}
}
