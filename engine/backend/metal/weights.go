package metal

import (
	"os"
	"unsafe"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/internal/gpucommon"
)

// Weight is a tensor resident on the GPU at its binding
// (gpucommon.Weight).
type Weight = gpucommon.Weight[*Device, bind]

func (d *Device) weight(w backend.Weight) *Weight {
	return gpucommon.WeightOf[*Device, bind]("metal", d.label, d, w)
}

// values is the binding of a one-row weight's float32 values.
func (d *Device) values(w backend.Weight) bind { return d.weight(w).Values("metal") }

// resident is t's bytes as they go to the device: a matrix as stored, a
// one-row tensor widened to float32.
func (d *Device) resident(t *backend.Tensor) ([]byte, error) {
	return gpucommon.Resident("metal", t, d.Supports)
}

// Upload implements backend.Device.
func (d *Device) Upload(t *backend.Tensor) (backend.Weight, error) {
	return gpucommon.UploadOne(t, d.UploadPart)
}

// wrapMin is the smallest matrix wrapped in place (newBufferWithBytesNoCopy)
// rather than copied: the large tensors of a mapped model file. Below it
// the page rounding would cost more than the copy saves.
var wrapMin = 1 << 20

// wrapped makes a buffer over the pages that hold b, without a copy, and
// returns the binding of b's first byte; false when the runner cannot.
// The GPU then reads the model file's mapping itself (unified memory):
// the tensor's data must outlive the device, as a loaded model's mapping
// does.
func (d *Device) wrapped(b []byte) (bind, bool) {
	if len(b) < wrapMin || os.Getenv("CHURON_METAL_NOCOPY") == "0" {
		return bind{}, false
	}
	page := uintptr(os.Getpagesize())
	p := uintptr(unsafe.Pointer(&b[0]))
	lo := p &^ (page - 1)
	hi := (p + uintptr(len(b)) + page - 1) &^ (page - 1)
	if mb := d.in.MaxBuffer; mb > 0 && int64(hi-lo) > mb {
		return bind{}, false
	}
	rb, err := d.r.wrap(unsafe.Add(unsafe.Pointer(&b[0]), -int(p-lo)), int(hi-lo))
	if err != nil {
		return bind{}, false
	}
	d.track(rb)
	return rb.at(int(p - lo)), true
}

// UploadPart implements backend.PartUploader: the large matrices of a
// part are wrapped where they lie, the rest share one buffer, each at a
// 256-byte boundary, copied in (the memory is shared: no transfer).
func (d *Device) UploadPart(ts []*backend.Tensor) ([]backend.Weight, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	data := make([][]byte, len(ts))
	offs := make([]int, len(ts))
	out := make([]backend.Weight, len(ts))
	total := 0
	for i, t := range ts {
		b, err := d.resident(t)
		if err != nil {
			return nil, err
		}
		if !t.IsVector() {
			if at, ok := d.wrapped(b); ok {
				out[i] = &Weight{Dev: d, T: t, At: at}
				continue
			}
		}
		data[i], offs[i] = b, total
		total += (len(b) + 255) &^ 255
	}
	if total == 0 {
		return out, nil
	}
	buf, err := d.alloc(total, gpucommon.PartName(ts))
	if err != nil {
		return nil, err
	}
	dst := buf.bytes()
	for i, t := range ts {
		if out[i] != nil {
			continue
		}
		copy(dst[offs[i]:], data[i])
		out[i] = &Weight{Dev: d, T: t, At: buf.at(offs[i]), Vec: t.IsVector()}
	}
	return out, nil
}

// WeightSlice implements backend.Device: a matrix slice points into its
// expert tensor's buffer; a one-row slice of a stored (not widened)
// tensor is widened to float32, unless it is F32 already.
func (d *Device) WeightSlice(w backend.Weight, i int) (backend.Weight, error) {
	return d.weight(w).Slice("metal", i, func(b bind, off int) bind { return bind{b.h, b.off + off} }, d.Upload)
}

var _ backend.PartUploader = (*Device)(nil)
