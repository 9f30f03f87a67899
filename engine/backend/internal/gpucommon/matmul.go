package gpucommon

import (
	"fmt"

	"github.com/churon/churon/engine/backend"
)

// Input is one distinct input of a set of products: a view, its rows,
// and where it goes rounded to each format (an offset into that format's
// buffer; -1 where no product of the set needs it).
type Input struct {
	X  backend.Buf
	N  int
	At [NumActs]int
}

// Product is one dst = w · x of a set; In is the index of its input.
type Product[W backend.Weight] struct {
	Dst backend.Buf
	W   W
	In  int
}

// Products is a set of matrix products of Cols columns: each distinct
// input is rounded once per format its weights need, into Need[a] bytes
// of rounded rows of format a, and then each product runs on it.
type Products[W backend.Weight] struct {
	Products []Product[W]
	Inputs   []Input
	Cols     int
	Need     [NumActs]int
}

// MatMuls gives a GPU device backend.Device's three matrix products
// (MatMul, MatMulMulti, MatMulEach): a device embeds it, and each plans a
// set of products and hands it to the device's run.
type MatMuls[W backend.Weight] struct {
	prefix string
	weight func(backend.Weight) W
	run    func(*Products[W])
}

// NewMatMuls makes the products of a device whose own weight of a
// backend.Weight is weight (it panics on another device's), which runs a
// set with run; prefix names the backend in panics.
func NewMatMuls[W backend.Weight](prefix string, weight func(backend.Weight) W, run func(*Products[W])) MatMuls[W] {
	return MatMuls[W]{prefix: prefix, weight: weight, run: run}
}

// MatMul implements backend.Device.
func (m MatMuls[W]) MatMul(dst backend.Buf, w backend.Weight, x backend.Buf, n int) {
	if n <= 0 {
		return
	}
	m.plan([]Product[W]{{Dst: dst, W: m.weight(w)}}, []Input{{X: x, N: n}})
}

// MatMulMulti implements backend.Device: the input is rounded once per
// format.
func (m MatMuls[W]) MatMulMulti(dst []backend.Buf, w []backend.Weight, x backend.Buf, n int) {
	if len(dst) != len(w) || len(w) == 0 {
		panic(fmt.Sprintf("%s: MatMulMulti: %d outputs for %d weights", m.prefix, len(dst), len(w)))
	}
	if n <= 0 {
		return
	}
	ps := make([]Product[W], len(w))
	for i := range w {
		ps[i] = Product[W]{Dst: dst[i], W: m.weight(w[i])}
	}
	m.plan(ps, []Input{{X: x, N: n}})
}

// MatMulEach implements backend.Device: products given the same view of
// the same rows share its rounding.
func (m MatMuls[W]) MatMulEach(dst []backend.Buf, w []backend.Weight, x []backend.Buf, n []int) {
	if len(dst) != len(w) || len(x) != len(w) || len(n) != len(w) || len(w) == 0 {
		panic(fmt.Sprintf("%s: MatMulEach: %d outputs, %d inputs and %d row counts for %d weights", m.prefix, len(dst), len(x), len(n), len(w)))
	}
	var ps []Product[W]
	var ins []Input
	for i := range w {
		if n[i] <= 0 {
			continue
		}
		in := -1
		for j := range ins {
			if ins[j].X == x[i] && ins[j].N == n[i] {
				in = j
			}
		}
		if in < 0 {
			in = len(ins)
			ins = append(ins, Input{X: x[i], N: n[i]})
		}
		ps = append(ps, Product[W]{Dst: dst[i], W: m.weight(w[i]), In: in})
	}
	if len(ps) > 0 {
		m.plan(ps, ins)
	}
}

// plan lays the rounded inputs out in their formats' buffers and hands
// the set to run.
func (m MatMuls[W]) plan(ps []Product[W], ins []Input) {
	s := &Products[W]{Products: ps, Inputs: ins, Cols: ps[0].W.Tensor().Cols()}
	for i := range ins {
		for a := range ins[i].At {
			ins[i].At[a] = -1
		}
	}
	for _, p := range ps {
		t := p.W.Tensor()
		if t.Cols() != s.Cols {
			panic(fmt.Sprintf("%s: matmul %s: %d columns, %s has %d", m.prefix, t.Name, t.Cols(), ps[0].W.Tensor().Name, s.Cols))
		}
		a := ActOf(t.Type)
		in := &ins[p.In]
		if in.X.Len() < in.N*s.Cols || p.Dst.Len() < in.N*t.Rows() {
			panic(fmt.Sprintf("%s: matmul %s: buffers too small for %d rows", m.prefix, t.Name, in.N))
		}
		if a != ActNone && in.At[a] < 0 {
			in.At[a] = s.Need[a]
			s.Need[a] += (a.RowBytes(s.Cols)*in.N + 255) &^ 255
		}
	}
	m.run(s)
}
