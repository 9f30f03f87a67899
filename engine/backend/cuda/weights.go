//go:build linux || windows

package cuda

import (
	"fmt"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/internal/gpucommon"
	"github.com/churon/churon/engine/quant"
)

// Weight is a tensor resident on the GPU: its bytes as stored (a
// matrix), or its values as float32 (a one-row tensor). The host tensor
// stays the reference for its name, type and shape.
type Weight struct {
	d   *Device
	t   *backend.Tensor
	ptr uint64
	vec bool
}

// Tensor implements backend.Weight.
func (w *Weight) Tensor() *backend.Tensor { return w.t }

func (d *Device) weight(w backend.Weight) *Weight {
	cw, ok := w.(*Weight)
	if !ok || cw.d != d {
		panic(fmt.Sprintf("cuda: %s got a weight of another device (%T)", d.label, w))
	}
	return cw
}

// values is the address of a one-row weight's float32 values (0 for nil).
func (d *Device) values(w backend.Weight) uint64 {
	if w == nil {
		return 0
	}
	cw := d.weight(w)
	if !cw.vec {
		panic(fmt.Sprintf("cuda: %s is not a one-row weight", cw.t.Name))
	}
	return cw.ptr
}

// residentBytes is what t takes on the device, and its bytes as they
// go there: a matrix as stored, a one-row tensor widened to float32.
func (d *Device) resident(t *backend.Tensor) ([]byte, error) {
	return gpucommon.Resident("cuda", t, d.Supports)
}

// Upload implements backend.Device.
func (d *Device) Upload(t *backend.Tensor) (backend.Weight, error) {
	ws, err := d.UploadPart([]*backend.Tensor{t})
	if err != nil {
		return nil, err
	}
	return ws[0], nil
}

// UploadPart implements backend.PartUploader: the tensors of one part of
// the model (a layer, the output head) share one allocation, each at a
// 256-byte boundary.
func (d *Device) UploadPart(ts []*backend.Tensor) ([]backend.Weight, error) {
	data := make([][]byte, len(ts))
	offs := make([]int64, len(ts))
	var total int64
	for i, t := range ts {
		b, err := d.resident(t)
		if err != nil {
			return nil, err
		}
		data[i], offs[i] = b, total
		total += (int64(len(b)) + 255) &^ 255
	}
	what := ts[0].Name
	if len(ts) > 1 {
		what = fmt.Sprintf("%s and %d more tensors", ts[0].Name, len(ts)-1)
	}
	p, err := d.alloc(max(total, 256), what)
	if err != nil {
		return nil, err
	}
	out := make([]backend.Weight, len(ts))
	for i, t := range ts {
		if err := d.copyIn(p+uint64(offs[i]), data[i]); err != nil {
			return nil, fmt.Errorf("cuda: uploading %s: %w", t.Name, err)
		}
		out[i] = &Weight{d: d, t: t, ptr: p + uint64(offs[i]), vec: t.IsVector()}
	}
	return out, nil
}

// WeightSlice implements backend.Device: a matrix slice points into its
// expert tensor's memory; a one-row slice of a stored (not widened)
// tensor is widened to float32, unless it is F32 already.
func (d *Device) WeightSlice(w backend.Weight, i int) (backend.Weight, error) {
	cw := d.weight(w)
	t := cw.t
	sub, err := t.Slice(i)
	if err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	size := len(sub.Data)
	if !sub.IsVector() || t.Type == quant.F32 {
		return &Weight{d: d, t: sub, ptr: cw.ptr + uint64(i*size), vec: sub.IsVector()}, nil
	}
	return d.Upload(sub)
}

var _ backend.PartUploader = (*Device)(nil)
