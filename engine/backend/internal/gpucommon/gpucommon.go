// Package gpucommon holds what the GPU backends (cuda, metal) share
// exactly: the formats a matrix product's input is rounded to, and the
// host-side preparation of weights and embedding rows. Only those
// backends import it.
package gpucommon

import (
	"fmt"
	"unsafe"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// Act is the format a matrix product's input is rounded to, by weight
// type (quant.VecDotType): a device keeps one buffer for each.
type Act int

const (
	ActQ8_0 Act = iota
	ActQ8_1
	ActQ8_K
	ActF16
	ActBF16
	NumActs
	ActNone Act = -1 // F32 weights multiply the input as it is
)

// ActOf is the format t's products round their input to.
func ActOf(t quant.Type) Act {
	switch quant.VecDotType(t) {
	case quant.Q8_0:
		return ActQ8_0
	case quant.Q8_1:
		return ActQ8_1
	case quant.Q8_K:
		return ActQ8_K
	case quant.F16:
		return ActF16
	case quant.BF16:
		return ActBF16
	}
	return ActNone
}

// ActTypes is each format's quant.Type.
var ActTypes = [NumActs]quant.Type{ActQ8_0: quant.Q8_0, ActQ8_1: quant.Q8_1, ActQ8_K: quant.Q8_K, ActF16: quant.F16, ActBF16: quant.BF16}

// RowBytes is the bytes of one input row of cols values in format a.
func (a Act) RowBytes(cols int) int {
	if a == ActNone {
		return 4 * cols
	}
	n, _ := ActTypes[a].RowSize(cols)
	return n
}

// EmbedRows is the rows of table t for ids, dequantized to float32; its
// errors name the backend (prefix).
func EmbedRows(prefix string, t *backend.Tensor, ids []int32) ([]float32, error) {
	cols := t.Cols()
	rb, _ := t.Type.RowSize(cols)
	rows := make([]float32, len(ids)*cols)
	for i, id := range ids {
		if err := quant.Dequantize(t.Type, t.Data[int(id)*rb:(int(id)+1)*rb], rows[i*cols:(i+1)*cols]); err != nil {
			return nil, fmt.Errorf("%s: embed %s: %w", prefix, t.Name, err)
		}
	}
	return rows, nil
}

// Resident is t's bytes as they go to a device: a matrix as stored (when
// supports its type), a one-row tensor widened to float32. Its errors
// name the backend (prefix).
func Resident(prefix string, t *backend.Tensor, supports func(quant.Type) bool) ([]byte, error) {
	if t.IsVector() {
		f := make([]float32, t.Elements())
		if err := quant.Dequantize(t.Type, t.Data, f); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", prefix, t.Name, err)
		}
		return BytesOf(f), nil
	}
	if !supports(t.Type) {
		return nil, fmt.Errorf("%w: %s is %v", backend.ErrUnsupported, t.Name, t.Type)
	}
	rb, ok := t.Type.RowSize(t.Cols())
	if !ok || len(t.Data) < rb*t.Rows() {
		return nil, fmt.Errorf("%s: %s: %d bytes for %d rows of %d %v values", prefix, t.Name, len(t.Data), t.Rows(), t.Cols(), t.Type)
	}
	return t.Data[:rb*t.Rows()], nil
}

// BytesOf views a slice's values as bytes.
func BytesOf[T any](v []T) []byte {
	if len(v) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*int(unsafe.Sizeof(z)))
}
