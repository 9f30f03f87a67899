package fake

import (
	"slices"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/cpu"
)

// WeightSlice implements backend.Device: a view of the uploaded copy,
// as a GPU's would be a pointer into the expert tensor; a widened bias
// row is counted against the budget.
func (d *Device) WeightSlice(w backend.Weight, i int) (backend.Weight, error) {
	sub, err := d.weight(w).Slice(i)
	if err != nil {
		return nil, err
	}
	if v := sub.Values(); v != nil {
		d.mu.Lock()
		err := d.take(4*int64(len(v)), sub.Tensor().Name)
		d.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	return &weight{dev: d, w: sub}, nil
}

// MatMulEach implements backend.Device.
func (d *Device) MatMulEach(dst []backend.Buf, w []backend.Weight, x []backend.Buf, n []int) {
	hd := make([][]float32, len(dst))
	ts := make([]*backend.Tensor, len(w))
	hx := make([][]float32, len(x))
	for i := range dst {
		hd[i], ts[i], hx[i] = d.host(dst[i]), d.weight(w[i]).Tensor(), d.host(x[i])
	}
	nc := slices.Clone(n)
	d.enqueue(func() { d.k.MatMulEach(hd, ts, hx, nc) })
}

// GatherRows implements backend.Device.
func (d *Device) GatherRows(dst, src backend.Buf, cols int, rows []int32) {
	hd, hs, r := d.host(dst), d.host(src), slices.Clone(rows)
	d.enqueue(func() { cpu.GatherRows(hd, hs, cols, r) })
}

// ScatterAddRows implements backend.Device.
func (d *Device) ScatterAddRows(dst, src backend.Buf, cols int, rows []int32, scale []float32) {
	hd, hs, r, sc := d.host(dst), d.host(src), slices.Clone(rows), slices.Clone(scale)
	d.enqueue(func() { cpu.ScatterAddRows(hd, hs, cols, r, sc) })
}

// SwiGLUClamped implements backend.Device.
func (d *Device) SwiGLUClamped(dst, gate, up backend.Buf, alpha, limit float32) {
	hd, hg, hu := d.host(dst), d.host(gate), d.host(up)
	d.enqueue(func() { cpu.SwiGLUClamped(hd, hg, hu, alpha, limit) })
}
