package metal

import (
	"fmt"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// act is the format a matrix product's input is rounded to, by weight
// type (quant.VecDotType): the device keeps one buffer for each.
type act int

const (
	actQ8_0 act = iota
	actQ8_1
	actQ8_K
	actF16
	actBF16
	numActs
	actNone act = -1 // F32 weights multiply the input as it is
)

func actOf(t quant.Type) act {
	switch quant.VecDotType(t) {
	case quant.Q8_0:
		return actQ8_0
	case quant.Q8_1:
		return actQ8_1
	case quant.Q8_K:
		return actQ8_K
	case quant.F16:
		return actF16
	case quant.BF16:
		return actBF16
	}
	return actNone
}

var actTypes = [numActs]quant.Type{actQ8_0: quant.Q8_0, actQ8_1: quant.Q8_1, actQ8_K: quant.Q8_K, actF16: quant.F16, actBF16: quant.BF16}

// rowBytes is the bytes of one input row of cols values in format a.
func (a act) rowBytes(cols int) int {
	if a == actNone {
		return 4 * cols
	}
	n, _ := actTypes[a].RowSize(cols)
	return n
}

// round encodes the rounding of n rows of cols values at x into format a
// at dst, exactly as quant.QuantizeActivations rounds them.
func (d *Device) round(a act, dst, x bind, n, cols int) {
	switch a {
	case actQ8_0, actQ8_1, actQ8_K:
		k := [...]kernel{actQ8_0: kQuantizeQ8_0, actQ8_1: kQuantizeQ8_1, actQ8_K: kQuantizeQ8_K}[a]
		blocks := n * cols / actTypes[a].BlockSize()
		// a SIMD group per block, eight to a threadgroup
		d.launch(k, [3]uint32{uint32((blocks + 7) / 8), 1, 1}, [3]uint32{256, 1, 1}, []uint32{i32(blocks)}, x, dst)
	case actF16:
		d.launch1(kRoundF16, n*cols, []uint32{i32(n * cols)}, x, dst)
	case actBF16:
		d.launch1(kRoundBF16, n*cols, []uint32{i32(n * cols)}, x, dst)
	}
}

// input is one distinct input of a set of products: a view, its rows,
// and where it went rounded to each format.
type input struct {
	x  backend.Buf
	n  int
	at [numActs]int // offset in d.acts[a], -1 when not rounded yet
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
	var need [numActs]int
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
		a := actOf(t.Type)
		in := &ins[p.in]
		if in.x.Len() < in.n*cols || p.dst.Len() < in.n*t.Rows() {
			panic(fmt.Sprintf("metal: matmul %s: buffers too small for %d rows", t.Name, in.n))
		}
		if a != actNone && in.at[a] < 0 {
			in.at[a] = need[a]
			need[a] += (a.rowBytes(cols)*in.n + 255) &^ 255
		}
	}
	var base [numActs]rbuf
	for a := range numActs {
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
		for a := range numActs {
			if in.at[a] >= 0 {
				d.round(act(a), base[a].at(in.at[a]), d.buf(in.x), in.n, cols)
			}
		}
	}
	for _, p := range ps {
		in := &ins[p.in]
		a := actOf(p.w.t.Type)
		x := d.buf(in.x)
		if a != actNone {
			x = base[a].at(in.at[a])
		}
		d.product(d.buf(p.dst), p.w, x, in.n)
	}
}

// product encodes dst = w · A for n input rows already in w's format.
func (d *Device) product(dst bind, w *Weight, a bind, n int) {
	t := w.t
	rows, cols := t.Rows(), t.Cols()
	ks := matmulKernels[t.Type]
	k := ks[0]
	grid := [3]uint32{uint32((rows + 3) / 4), 1, 1}
	tg := [3]uint32{128, 1, 1}
	if n > mmvMaxRows {
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
		params = []uint32{i32(rows), i32(cols / 32), i32(n), i32(wrow), i32(actOf(t.Type).rowBytes(cols)), i32(rows)}
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
