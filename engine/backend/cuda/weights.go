//go:build linux || windows

package cuda

import (
	"fmt"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/internal/gpucommon"
)

// Weight is a tensor resident on the GPU at its device address
// (gpucommon.Weight).
type Weight = gpucommon.Weight[*Device, uint64]

func (d *Device) weight(w backend.Weight) *Weight {
	return gpucommon.WeightOf[*Device, uint64]("cuda", d.label, d, w)
}

// values is the address of a one-row weight's float32 values (0 for nil).
func (d *Device) values(w backend.Weight) uint64 {
	if w == nil {
		return 0
	}
	return d.weight(w).Values("cuda")
}

// residentBytes is what t takes on the device, and its bytes as they
// go there: a matrix as stored, a one-row tensor widened to float32.
func (d *Device) resident(t *backend.Tensor) ([]byte, error) {
	return gpucommon.Resident("cuda", t, d.Supports)
}

// Upload implements backend.Device.
func (d *Device) Upload(t *backend.Tensor) (backend.Weight, error) {
	return gpucommon.UploadOne(t, d.UploadPart)
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
	p, err := d.alloc(max(total, 256), gpucommon.PartName(ts))
	if err != nil {
		return nil, err
	}
	out := make([]backend.Weight, len(ts))
	for i, t := range ts {
		if err := d.copyIn(p+uint64(offs[i]), data[i]); err != nil {
			return nil, fmt.Errorf("cuda: uploading %s: %w", t.Name, err)
		}
		out[i] = &Weight{Dev: d, T: t, At: p + uint64(offs[i]), Vec: t.IsVector()}
	}
	return out, nil
}

// WeightSlice implements backend.Device: a matrix slice points into its
// expert tensor's memory; a one-row slice of a stored (not widened)
// tensor is widened to float32, unless it is F32 already.
func (d *Device) WeightSlice(w backend.Weight, i int) (backend.Weight, error) {
	return d.weight(w).Slice("cuda", i, func(p uint64, off int) uint64 { return p + uint64(off) }, d.Upload)
}

var _ backend.PartUploader = (*Device)(nil)
