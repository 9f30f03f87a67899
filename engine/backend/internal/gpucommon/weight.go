package gpucommon

import (
	"fmt"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// Weight is a tensor resident on the device Dev at At (a CUDA address, a
// Metal binding): its bytes as stored (a matrix), or its values as float32
// (a one-row tensor, Vec). The host tensor T stays the reference for its
// name, type and shape.
type Weight[D comparable, H any] struct {
	Dev D
	T   *backend.Tensor
	At  H
	Vec bool
}

// Tensor implements backend.Weight.
func (w *Weight[D, H]) Tensor() *backend.Tensor { return w.T }

// WeightOf is w as a weight of d, the device called label; it panics,
// naming the backend (prefix), when w is another device's.
func WeightOf[D comparable, H any](prefix, label string, d D, w backend.Weight) *Weight[D, H] {
	dw, ok := w.(*Weight[D, H])
	if !ok || dw.Dev != d {
		panic(fmt.Sprintf("%s: %s got a weight of another device (%T)", prefix, label, w))
	}
	return dw
}

// Values is where a one-row weight's float32 values are; it panics,
// naming the backend (prefix), on a matrix.
func (w *Weight[D, H]) Values(prefix string) H {
	if !w.Vec {
		panic(fmt.Sprintf("%s: %s is not a one-row weight", prefix, w.T.Name))
	}
	return w.At
}

// Slice implements backend.Device's WeightSlice for w: a matrix slice
// points into its expert tensor's memory (at(w.At, off) is the handle off
// bytes on); a one-row slice of a stored (not widened) tensor goes through
// upload, widened to float32, unless it is F32 already.
func (w *Weight[D, H]) Slice(prefix string, i int, at func(H, int) H, upload func(*backend.Tensor) (backend.Weight, error)) (backend.Weight, error) {
	sub, err := w.T.Slice(i)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", prefix, err)
	}
	if !sub.IsVector() || w.T.Type == quant.F32 {
		return &Weight[D, H]{Dev: w.Dev, T: sub, At: at(w.At, i*len(sub.Data)), Vec: sub.IsVector()}, nil
	}
	return upload(sub)
}

// UploadOne uploads t as a part of one tensor.
func UploadOne(t *backend.Tensor, part func([]*backend.Tensor) ([]backend.Weight, error)) (backend.Weight, error) {
	ws, err := part([]*backend.Tensor{t})
	if err != nil {
		return nil, err
	}
	return ws[0], nil
}

// PartName is how an allocation for the tensors ts is named in errors.
func PartName(ts []*backend.Tensor) string {
	if len(ts) > 1 {
		return fmt.Sprintf("%s and %d more tensors", ts[0].Name, len(ts)-1)
	}
	return ts[0].Name
}
