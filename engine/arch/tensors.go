package arch

import (
	"fmt"
	"strings"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/quant"
)

// loader reads tensors and hyperparameters of one architecture from a file
// and remembers the first error, so builders read as a list of fields. It
// records each weight it hands out with the part being read (at), so that
// placing the model on devices is data, not code per architecture, and
// the tensors it read, so that finish can refuse a file holding tensors
// the architecture would silently not apply.
type loader struct {
	f       *gguf.File
	arch    string
	err     error
	part    int
	weights []*weight
	read    map[string]bool
}

// at makes the weights read next belong to part (InputPart, a layer, or
// the number of layers for the output head).
func (l *loader) at(part int) { l.part = part }

// finish refuses tensors of the file that no field read: a model whose
// file holds weights the forward pass would not apply would compute
// something else than its authors' model, quietly.
func (l *loader) finish() {
	if l.err != nil {
		return
	}
	var extra []string
	for _, ti := range l.f.Tensors {
		if !l.read[ti.Name] {
			extra = append(extra, ti.Name)
		}
	}
	switch {
	case len(extra) == 1:
		l.fail("tensor %s: not applied by the %s architecture (is the file for another one?)", extra[0], l.arch)
	case len(extra) > 1:
		more := ""
		if len(extra) > 3 {
			extra, more = extra[:3], fmt.Sprintf(" and %d more", len(extra)-3)
		}
		l.fail("tensors %s%s: not applied by the %s architecture (is the file for another one?)", strings.Join(extra, ", "), more, l.arch)
	}
}

// known marks a tensor the architecture knows and deliberately does not
// apply, so finish does not refuse the file for it.
func (l *loader) known(name string) {
	if l.read == nil {
		l.read = map[string]bool{}
	}
	l.read[name] = true
}

// weight is one tensor of the file, the part of the model it belongs to,
// and its resident copy on the device the plan runs that part on.
type weight struct {
	t    *backend.Tensor
	part int
	on   backend.Weight // set by Place
	dev  backend.Device // where on lives
}

// resident holds an architecture's weights and places them: embedded in
// every architecture, it implements Model's Weights and Place.
type resident struct {
	weights []*weight
	plan    *backend.Plan
}

// Weights implements Model.
func (r *resident) Weights() []Part {
	out := make([]Part, len(r.weights))
	for i, w := range r.weights {
		out[i] = Part{Part: w.part, Tensor: w.t}
	}
	return out
}

// Place implements Model. A part's weights go to its device together
// (backend.PartUploader), part by part.
func (r *resident) Place(p *backend.Plan) error {
	var todo []*weight
	for _, w := range r.weights {
		if p.Stage(w.part) != w.dev {
			todo = append(todo, w)
		}
	}
	for len(todo) > 0 {
		part := todo[0].part
		var group, rest []*weight
		for _, w := range todo {
			if w.part == part {
				group = append(group, w)
			} else {
				rest = append(rest, w)
			}
		}
		todo = rest
		if err := placePart(p.Stage(part), group); err != nil {
			return err
		}
	}
	r.plan = p
	return nil
}

// placePart makes the weights of one part resident on d.
func placePart(d backend.Device, ws []*weight) error {
	if pu, ok := d.(backend.PartUploader); ok && len(ws) > 1 {
		ts := make([]*backend.Tensor, len(ws))
		for i, w := range ws {
			ts[i] = w.t
		}
		on, err := pu.UploadPart(ts)
		if err != nil {
			return fmt.Errorf("place %s and the rest of its part on %s: %w", ws[0].t.Name, d.Name(), err)
		}
		for i, w := range ws {
			w.on, w.dev = on[i], d
		}
		return nil
	}
	for _, w := range ws {
		on, err := d.Upload(w.t)
		if err != nil {
			return fmt.Errorf("place %s on %s: %w", w.t.Name, d.Name(), err)
		}
		w.on, w.dev = on, d
	}
	return nil
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
	if l.read == nil {
		l.read = map[string]bool{}
	}
	l.read[name] = true
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

// add records t as a weight of the current part.
func (l *loader) add(t *backend.Tensor) *weight {
	if t == nil {
		return nil
	}
	w := &weight{t: t, part: l.part}
	l.weights = append(l.weights, w)
	return w
}

// matrix is a weight used in a matrix product: its type must have a dot
// product and its rows must be whole blocks.
func (l *loader) matrix(name string, optional bool, cols, rows int) *weight {
	return l.add(l.matrixTensor(name, optional, cols, rows))
}

// table is a matrix whose rows are read (the embedding): any type that
// dequantizes.
func (l *loader) table(name string, cols int) *weight {
	return l.add(l.tensor(name, false, cols))
}

func (l *loader) matrixTensor(name string, optional bool, cols, rows int) *backend.Tensor {
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

// vector is a 1-D weight (norm weight, bias) of n values.
func (l *loader) vector(name string, optional bool, n int) *weight {
	t := l.vectorTensor(name, optional, n)
	if t == nil {
		return nil
	}
	// Checked now, so a bad vector fails the load, not the placing.
	if err := quant.Dequantize(t.Type, t.Data, make([]float32, n)); err != nil {
		l.fail("tensor %s: %v", name, err)
		return nil
	}
	return l.add(t)
}

func (l *loader) vectorTensor(name string, optional bool, n int) *backend.Tensor {
	t := l.tensor(name, optional, n)
	if t == nil {
		return nil
	}
	if t.Elements() != n {
		l.fail("tensor %s: %d elements, want %d", name, t.Elements(), n)
		return nil
	}
	return t
}

// tensor2D is a tensor of exactly cols×rows values: tensor checks only
// the dimensions it is given, so a third one would pass it.
func (l *loader) tensor2D(name string, optional bool, cols, rows int) *backend.Tensor {
	t := l.tensor(name, optional, cols, rows)
	if t == nil {
		return nil
	}
	if t.Elements() != cols*rows {
		l.fail("tensor %s: shape %v, want [%d %d]", name, t.Ne, cols, rows)
		return nil
	}
	return t
}

// hostVector reads a 1-D tensor of parameters (RoPE frequency factors) as
// float32 values: not a weight any device holds.
func (l *loader) hostVector(name string, optional bool, n int) []float32 {
	t := l.vectorTensor(name, optional, n)
	if t == nil {
		return nil
	}
	out := make([]float32, n)
	if err := quant.Dequantize(t.Type, t.Data, out); err != nil {
		l.fail("tensor %s: %v", name, err)
		return nil
	}
	return out
}
