package cpu

import (
	"fmt"
	"math"

	"github.com/churon/churon/engine/backend"
)

// Slice is the i-th slice of w along its last dimension: one expert of a
// 3-D expert tensor, one expert's bias row of a 2-D one. The data is a
// view of w's (the mapped file on the CPU), so an expert's matrix product
// reads only that expert's rows; a one-row slice is widened to float32
// like any one-row weight.
func (w *Weight) Slice(i int) (*Weight, error) {
	sub, err := w.t.Slice(i)
	if err != nil {
		return nil, fmt.Errorf("cpu: %w", err)
	}
	if w.il != nil && !sub.IsVector() {
		// whole groups of w's interleave (interleavable)
		return &Weight{t: sub, il: w.il.sub(i*sub.Rows(), sub.Rows(), sub.Cols())}, nil
	}
	return NewWeight(sub)
}

// WeightSlice implements backend.Device.
func (d *Device) WeightSlice(w backend.Weight, i int) (backend.Weight, error) {
	return weight(w).Slice(i)
}

// GatherRows copies row rows[j] of src to row j of dst.
func GatherRows(dst, src []float32, cols int, rows []int32) {
	for j, r := range rows {
		copy(dst[j*cols:(j+1)*cols], src[int(r)*cols:(int(r)+1)*cols])
	}
}

// ScatterAddRows adds scale[j]·(row j of src) to row rows[j] of dst, in
// order; a nil scale adds the rows as they are.
func ScatterAddRows(dst, src []float32, cols int, rows []int32, scale []float32) {
	for j, r := range rows {
		d := dst[int(r)*cols : (int(r)+1)*cols]
		s := src[j*cols : (j+1)*cols]
		if scale == nil {
			for i, v := range s {
				d[i] += v
			}
			continue
		}
		c := scale[j]
		for i, v := range s {
			d[i] += c * v
		}
	}
}

// SwiGLUClamped computes gpt-oss's clamped SwiGLU as ggml does:
// g = min(gate, limit), u = clamp(up, −limit, limit),
// dst = g/(1+e^(−alpha·g))·(u+1).
func SwiGLUClamped(dst, gate, up []float32, alpha, limit float32) {
	for i, g := range gate {
		g = min(g, limit)
		u := max(-limit, min(up[i], limit))
		dst[i] = g / (1 + float32(math.Exp(float64(-alpha*g)))) * (u + 1)
	}
}

// MatMulEach implements backend.Device.
func (d *Device) MatMulEach(dst []backend.Buf, w []backend.Weight, x []backend.Buf, n []int) {
	d.mdst, d.mw, d.mil, d.mx = d.mdst[:0], d.mw[:0], d.mil[:0], d.mx[:0]
	for i := range dst {
		cw := d.resident(w[i])
		d.mdst = append(d.mdst, host(dst[i]))
		d.mw = append(d.mw, cw.t)
		d.mil = append(d.mil, cw.il)
		d.mx = append(d.mx, host(x[i]))
	}
	d.b.matMulEach(d.mdst, d.mw, d.mil, d.mx, n)
	clear(d.mdst)
	clear(d.mil)
	clear(d.mx)
}

// GatherRows implements backend.Device.
func (d *Device) GatherRows(dst, src backend.Buf, cols int, rows []int32) {
	GatherRows(host(dst), host(src), cols, rows)
}

// ScatterAddRows implements backend.Device.
func (d *Device) ScatterAddRows(dst, src backend.Buf, cols int, rows []int32, scale []float32) {
	ScatterAddRows(host(dst), host(src), cols, rows, scale)
}

// SwiGLUClamped implements backend.Device.
func (d *Device) SwiGLUClamped(dst, gate, up backend.Buf, alpha, limit float32) {
	SwiGLUClamped(host(dst), host(gate), host(up), alpha, limit)
}
