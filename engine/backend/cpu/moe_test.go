package cpu

import (
	"math"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// TestWeightSlice: an expert's slice of a 3-D tensor views the parent's
// bytes (no copy) and multiplies like a matrix made of those rows alone;
// a slice of a 2-D tensor of expert biases is one row of float32 values.
func TestWeightSlice(t *testing.T) {
	const cols, rows, experts = 64, 5, 3
	vals := make([]float32, cols*rows*experts)
	for i := range vals {
		vals[i] = float32(math.Sin(float64(i)))
	}
	rowBytes, _ := quant.Q8_0.RowSize(cols)
	data := make([]byte, rowBytes*rows*experts)
	if err := quant.Quantize(quant.Q8_0, vals, data); err != nil {
		t.Fatal(err)
	}
	w, err := NewWeight(&backend.Tensor{Name: "exps", Type: quant.Q8_0, Ne: [4]int{cols, rows, experts, 1}, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	d := NewDevice(1)
	defer d.Close()
	x := make([]float32, cols)
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	for e := range experts {
		sw, err := w.Slice(e)
		if err != nil {
			t.Fatal(err)
		}
		st := sw.Tensor()
		if st.Ne != [4]int{cols, rows, 1, 1} || &st.Data[0] != &data[e*rows*rowBytes] {
			t.Fatalf("expert %d: shape %v, or its data is not a view of the parent's", e, st.Ne)
		}
		alone := &backend.Tensor{Name: "alone", Type: quant.Q8_0, Ne: [4]int{cols, rows, 1, 1},
			Data: append([]byte(nil), data[e*rows*rowBytes:(e+1)*rows*rowBytes]...)}
		got, want := make([]float32, rows), make([]float32, rows)
		d.Kernels().MatMul(got, st, x, 1)
		d.Kernels().MatMul(want, alone, x, 1)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("expert %d row %d: %v through the slice, %v alone", e, i, got[i], want[i])
			}
		}
	}
	bias := make([]byte, 4*cols*experts)
	for i := range cols * experts {
		bits := math.Float32bits(float32(i))
		bias[4*i], bias[4*i+1], bias[4*i+2], bias[4*i+3] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
	}
	bw, err := NewWeight(&backend.Tensor{Name: "b", Type: quant.F32, Ne: [4]int{cols, experts, 1, 1}, Data: bias})
	if err != nil {
		t.Fatal(err)
	}
	row, err := bw.Slice(2)
	if err != nil {
		t.Fatal(err)
	}
	if v := row.Values(); len(v) != cols || v[0] != float32(2*cols) || v[cols-1] != float32(3*cols-1) {
		t.Fatalf("bias row 2: %v", v)
	}
}

func TestGatherScatter(t *testing.T) {
	src := []float32{0, 1, 10, 11, 20, 21}
	dst := make([]float32, 4)
	GatherRows(dst, src, 2, []int32{2, 0})
	if want := []float32{20, 21, 0, 1}; !equal(dst, want) {
		t.Fatalf("gather: %v, want %v", dst, want)
	}
	acc := []float32{1, 1, 1, 1, 1, 1}
	ScatterAddRows(acc, []float32{1, 2, 3, 4}, 2, []int32{2, 0}, []float32{0.5, 2})
	if want := []float32{7, 9, 1, 1, 1.5, 2}; !equal(acc, want) {
		t.Fatalf("scatter-add: %v, want %v", acc, want)
	}
	ScatterAddRows(acc, []float32{1, 1}, 2, []int32{1}, nil)
	if want := []float32{7, 9, 2, 2, 1.5, 2}; !equal(acc, want) {
		t.Fatalf("scatter-add without scales: %v, want %v", acc, want)
	}
}

// TestSwiGLUClamped against its definition, across the clamps.
func TestSwiGLUClamped(t *testing.T) {
	gate := []float32{-9, -1, 0, 0.5, 6.9, 7, 12}
	up := []float32{-12, -7, -0.5, 0, 3, 7.5, 100}
	dst := make([]float32, len(gate))
	SwiGLUClamped(dst, gate, up, 1.702, 7)
	for i := range gate {
		g := math.Min(float64(gate[i]), 7)
		u := math.Max(-7, math.Min(float64(up[i]), 7))
		want := g / (1 + math.Exp(-1.702*g)) * (u + 1)
		if math.Abs(float64(dst[i])-want) > 1e-5*math.Max(1, math.Abs(want)) {
			t.Errorf("gate %v up %v: %v, want %v", gate[i], up[i], dst[i], want)
		}
	}
}

func equal(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestMatMulEach: each product with its own input (of its own rows)
// equals MatMul's, bit for bit, for any number of weights (more than one
// loop's worth too), of mixed types, with some inputs shared.
func TestMatMulEach(t *testing.T) {
	const cols, rows = 64, 24
	b := New(2)
	defer b.Close()
	types := []quant.Type{quant.Q8_0, quant.F16, quant.Q4_0, quant.F32}
	for _, most := range []int{1, 3, 20} {
		var ws []*backend.Tensor
		var xs, got [][]float32
		var ns []int
		for j := range 19 {
			typ := types[j%len(types)]
			vals := make([]float32, cols*rows)
			for i := range vals {
				vals[i] = float32(math.Sin(float64(i*(j+1)) * 0.37))
			}
			rb, _ := typ.RowSize(cols)
			data := make([]byte, rb*rows)
			if err := quant.Quantize(typ, vals, data); err != nil {
				t.Fatal(err)
			}
			ws = append(ws, &backend.Tensor{Name: "w", Type: typ, Ne: [4]int{cols, rows, 1, 1}, Data: data})
			n := 1 + (j*7)%most
			if j%3 == 2 {
				// the previous weight's input again, as gate and up share one
				xs, ns = append(xs, xs[j-1]), append(ns, ns[j-1])
			} else {
				x := make([]float32, n*cols)
				for i := range x {
					x[i] = float32(math.Cos(float64(i+7*j)) * 2)
				}
				xs, ns = append(xs, x), append(ns, n)
			}
			got = append(got, make([]float32, ns[j]*rows))
		}
		b.MatMulEach(got, ws, xs, ns)
		for j, w := range ws {
			want := make([]float32, ns[j]*rows)
			b.MatMul(want, w, xs[j], ns[j])
			if !equal(got[j], want) {
				t.Fatalf("up to %d rows, weight %d (%v, %d rows): MatMulEach differs from MatMul", most, j, w.Type, ns[j])
			}
		}
	}
}
