package metal

import (
	"fmt"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/internal/gpucommon"
	"github.com/churon/churon/engine/quant"
)

// act is the format a matrix product's input is rounded to
// (engine/backend/internal/gpucommon).
type act = gpucommon.Act

// round encodes the rounding of n rows of cols values at x into format a
// at dst, exactly as quant.QuantizeActivations rounds them.
func (d *Device) round(a act, dst, x bind, n, cols int) {
	switch a {
	case gpucommon.ActQ8_0, gpucommon.ActQ8_1, gpucommon.ActQ8_K:
		k := gpucommon.QuantizeKernel(a)
		blocks := n * cols / gpucommon.ActTypes[a].BlockSize()
		// a SIMD group per block, eight to a threadgroup
		d.launch(k, [3]uint32{uint32((blocks + 7) / 8), 1, 1}, [3]uint32{256, 1, 1}, []uint32{i32(blocks)}, x, dst)
	case gpucommon.ActF16:
		d.launch1(gpucommon.KRoundF16, n*cols, []uint32{i32(n * cols)}, x, dst)
	case gpucommon.ActBF16:
		d.launch1(gpucommon.KRoundBF16, n*cols, []uint32{i32(n * cols)}, x, dst)
	}
}

// input is one distinct input of a set of products: a view, its rows,
// and where it went rounded to each format.
type input struct {
	x  backend.Buf
	n  int
	at [gpucommon.NumActs]int // offset in d.acts[a], -1 when not rounded yet
}

// product is one dst = w · x of a set.
type product struct {
	dst backend.Buf
	w   *Weight
	in  int // index into the inputs
}

// matmuls encodes a set of products: each distinct input is rounded once
// per format its weights need, then each product runs on it.
func (d *Device) matmuls(ps []product, ins []input) {
	cols := ps[0].w.t.Cols()
	var need [gpucommon.NumActs]int
	for i := range ins {
		for a := range ins[i].at {
			ins[i].at[a] = -1
		}
	}
	for _, p := range ps {
		t := p.w.t
		if t.Cols() != cols {
			panic(fmt.Sprintf("metal: matmul %s: %d columns, %s has %d", t.Name, t.Cols(), ps[0].w.t.Name, cols))
		}
		a := gpucommon.ActOf(t.Type)
		in := &ins[p.in]
		if in.x.Len() < in.n*cols || p.dst.Len() < in.n*t.Rows() {
			panic(fmt.Sprintf("metal: matmul %s: buffers too small for %d rows", t.Name, in.n))
		}
		if a != gpucommon.ActNone && in.at[a] < 0 {
			in.at[a] = need[a]
			need[a] += (a.RowBytes(cols)*in.n + 255) &^ 255
		}
	}
	var base [gpucommon.NumActs]rbuf
	for a := range gpucommon.NumActs {
		if need[a] > 0 {
			b, ok := d.ensure(&d.acts[a], need[a], "rounded activations")
			if !ok {
				return
			}
			base[a] = b
		}
	}
	for i := range ins {
		in := &ins[i]
		for a := range gpucommon.NumActs {
			if in.at[a] >= 0 {
				d.round(act(a), base[a].at(in.at[a]), d.buf(in.x), in.n, cols)
			}
		}
	}
	for _, p := range ps {
		in := &ins[p.in]
		a := gpucommon.ActOf(p.w.t.Type)
		x := d.buf(in.x)
		if a != gpucommon.ActNone {
			x = base[a].at(in.at[a])
		}
		d.product(d.buf(p.dst), p.w, x, in.n)
	}
}

// product encodes dst = w · A for n input rows already in w's format.
func (d *Device) product(dst bind, w *Weight, a bind, n int) {
	t := w.t
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
	d.launch(k, grid, tg, params, w.b, a, dst)
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
		panic(fmt.Sprintf("metal: MatMulMulti: %d outputs for %d weights", len(dst), len(w)))
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
		panic(fmt.Sprintf("metal: MatMulEach: %d outputs, %d inputs and %d row counts for %d weights", len(dst), len(x), len(n), len(w)))
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
