package arch

import (
	"fmt"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/quant"
)

// loader reads tensors and hyperparameters of one architecture from a file
// and remembers the first error, so builders read as a list of fields.
type loader struct {
	f    *gguf.File
	arch string
	err  error
}

func (l *loader) fail(format string, args ...any) {
	if l.err == nil {
		l.err = fmt.Errorf(format, args...)
	}
}

// uint reads "<arch>.<key>", falling back to def when absent (def < 0
// makes the key required).
func (l *loader) uint(key string, def int) int {
	full := l.arch + "." + key
	v, ok := l.f.Uint(full)
	if !ok {
		if _, present := l.f.Lookup(full); present {
			l.fail("metadata %s: not a non-negative integer", full)
			return 0
		}
		if def < 0 {
			l.fail("metadata %s: missing", full)
			return 0
		}
		return def
	}
	if v > 1<<24 {
		l.fail("metadata %s: %d is out of range", full, v)
		return 0
	}
	return int(v)
}

func (l *loader) float(key string, def float32) float32 {
	v, ok := l.f.Float(l.arch + "." + key)
	if !ok {
		return def
	}
	return float32(v)
}

func (l *loader) str(key string) string {
	v, _ := l.f.String(l.arch + "." + key)
	return v
}

// tensor returns the named tensor, checking its shape. want lists the
// expected ne dims (trailing 1s may be omitted). Absent optional tensors
// give nil.
func (l *loader) tensor(name string, optional bool, want ...int) *backend.Tensor {
	ti, ok := l.f.Tensor(name)
	if !ok {
		if !optional {
			l.fail("tensor %s: missing", name)
		}
		return nil
	}
	t := &backend.Tensor{Name: name, Type: ti.Type, Ne: [4]int{1, 1, 1, 1}}
	for i, d := range ti.Shape {
		t.Ne[i] = int(d)
	}
	for i, w := range want {
		if t.Ne[i] != w {
			l.fail("tensor %s: shape %v, want %v", name, ti.Shape, want)
			return nil
		}
	}
	data, err := l.f.TensorData(ti)
	if err != nil {
		l.fail("tensor %s: %v", name, err)
		return nil
	}
	t.Data = data
	return t
}

// matrix is a weight used in a matrix product: its type must have a dot
// product and its rows must be whole blocks.
func (l *loader) matrix(name string, optional bool, cols, rows int) *backend.Tensor {
	t := l.tensor(name, optional, cols, rows)
	if t == nil {
		return nil
	}
	if !quant.VecDotSupported(t.Type) {
		l.fail("tensor %s: type %v is not supported for matrix products", name, t.Type)
		return nil
	}
	if _, ok := quant.VecDotType(t.Type).RowSize(cols); !ok {
		l.fail("tensor %s: row length %d is not a multiple of the %v block", name, cols, t.Type)
		return nil
	}
	return t
}

// vector reads a 1-D tensor (norm weight, bias) as float32.
func (l *loader) vector(name string, optional bool, n int) []float32 {
	t := l.tensor(name, optional, n)
	if t == nil {
		return nil
	}
	if t.Elements() != n {
		l.fail("tensor %s: %d elements, want %d", name, t.Elements(), n)
		return nil
	}
	out := make([]float32, n)
	if err := quant.Dequantize(t.Type, t.Data, out); err != nil {
		l.fail("tensor %s: %v", name, err)
		return nil
	}
	return out
}
