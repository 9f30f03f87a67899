package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"

	"github.com/churon/churon/engine/internal/iocount"
	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/internal/atomicfile"
)

// MaxTensorNameLen is the longest tensor name the writer accepts: ggml
// stores names in GGML_MAX_NAME (64) bytes including the terminating NUL,
// so llama.cpp rejects longer ones.
const MaxTensorNameLen = 63

// Writer builds a GGUF v3 file: metadata in insertion order, then tensors in
// the order they were added, each padded to the alignment (32 unless
// general.alignment is set to another uint32 power of two).
//
// The Writer keeps the slices it is given (array values and tensor data)
// without copying: do not modify them until the file is written. A Writer
// is not safe for concurrent use.
type Writer struct {
	kvs     []KV
	kvIndex map[string]int
	tensors []wTensor
	tIndex  map[string]int
}

type wTensor struct {
	info TensorInfo
	data []byte
}

// NewWriter returns an empty Writer.
func NewWriter() *Writer {
	return &Writer{kvIndex: map[string]int{}, tIndex: map[string]int{}}
}

// SetKV sets a metadata value. v is a Go value of a sized type (uint8 ...
// float64, bool, string), a slice of one ([]uint8 ... []float64, []bool,
// []string), an Array (for nested arrays), or a Value. Plain int and uint
// are rejected: GGUF readers care which width a key has. Replacing a key
// keeps its position.
func (w *Writer) SetKV(key string, v any) error {
	if key == "" {
		return fmt.Errorf("gguf: SetKV: empty key")
	}
	if len(key) > MaxKeyLen {
		return fmt.Errorf("gguf: SetKV: key of %d bytes is longer than %d", len(key), MaxKeyLen)
	}
	val, err := toValue(v)
	if err != nil {
		return fmt.Errorf("gguf: SetKV %q: %w", key, err)
	}
	if key == "general.alignment" {
		a, ok := val.V.(uint32)
		if !ok {
			return fmt.Errorf("gguf: SetKV %q: alignment must be a uint32, not %s", key, val.Type)
		}
		if a == 0 || a&(a-1) != 0 {
			return fmt.Errorf("gguf: SetKV %q: alignment %d is not a non-zero power of two", key, a)
		}
	}
	if i, ok := w.kvIndex[key]; ok {
		w.kvs[i].Value = val
		return nil
	}
	w.kvIndex[key] = len(w.kvs)
	w.kvs = append(w.kvs, KV{Key: key, Value: val})
	return nil
}

// DeleteKV removes a metadata key, reporting whether it was present.
func (w *Writer) DeleteKV(key string) bool {
	return removeIndexed(&w.kvs, w.kvIndex, key, func(kv KV) string { return kv.Key })
}

// removeIndexed removes the item named name from list, whose index maps
// each item's name (nameOf) to its position, and reports whether it was
// there. The items after it move up one, and so do their positions.
func removeIndexed[T any](list *[]T, index map[string]int, name string, nameOf func(T) string) bool {
	i, ok := index[name]
	if !ok {
		return false
	}
	*list = append((*list)[:i], (*list)[i+1:]...)
	delete(index, name)
	for j := i; j < len(*list); j++ {
		index[nameOf((*list)[j])] = j
	}
	return true
}

// toValue maps a Go value to a GGUF value and checks it can be written.
func toValue(v any) (Value, error) {
	var val Value
	switch x := v.(type) {
	case Value:
		val = x
	case Array:
		val = Value{Type: TypeArray, V: x}
	case uint8:
		val = Value{TypeUint8, x}
	case int8:
		val = Value{TypeInt8, x}
	case uint16:
		val = Value{TypeUint16, x}
	case int16:
		val = Value{TypeInt16, x}
	case uint32:
		val = Value{TypeUint32, x}
	case int32:
		val = Value{TypeInt32, x}
	case float32:
		val = Value{TypeFloat32, x}
	case bool:
		val = Value{TypeBool, x}
	case string:
		val = Value{TypeString, x}
	case uint64:
		val = Value{TypeUint64, x}
	case int64:
		val = Value{TypeInt64, x}
	case float64:
		val = Value{TypeFloat64, x}
	default:
		et, ok := sliceElem(v)
		if !ok {
			return Value{}, fmt.Errorf("unsupported Go type %T (use a sized type such as uint32, or a slice of one)", v)
		}
		val = Value{TypeArray, Array{Elem: et, Values: v}}
	}
	if err := checkValue(val, 0); err != nil {
		return Value{}, err
	}
	return val, nil
}

// sliceElem returns the element type of a typed slice Array.Values may hold.
func sliceElem(v any) (ValueType, bool) {
	switch v.(type) {
	case []uint8:
		return TypeUint8, true
	case []int8:
		return TypeInt8, true
	case []uint16:
		return TypeUint16, true
	case []int16:
		return TypeInt16, true
	case []uint32:
		return TypeUint32, true
	case []int32:
		return TypeInt32, true
	case []float32:
		return TypeFloat32, true
	case []bool:
		return TypeBool, true
	case []string:
		return TypeString, true
	case []uint64:
		return TypeUint64, true
	case []int64:
		return TypeInt64, true
	case []float64:
		return TypeFloat64, true
	case []Array:
		return TypeArray, true
	}
	return 0, false
}

// checkValue checks that V holds the Go type Type calls for, recursively.
func checkValue(v Value, depth int) error {
	switch v.Type {
	case TypeString:
		s, ok := v.V.(string)
		if !ok {
			return fmt.Errorf("value of type string holds %T", v.V)
		}
		if len(s) > MaxStringLen {
			return fmt.Errorf("string of %d bytes is longer than %d", len(s), MaxStringLen)
		}
		return nil
	case TypeArray:
		a, ok := v.V.(Array)
		if !ok {
			return fmt.Errorf("value of type array holds %T", v.V)
		}
		return checkArray(a, depth+1)
	}
	want, ok := scalarGoType(v.Type)
	if !ok {
		return fmt.Errorf("unknown value type %d", uint32(v.Type))
	}
	if got := fmt.Sprintf("%T", v.V); got != want {
		return fmt.Errorf("value of type %s holds %s", v.Type, got)
	}
	return nil
}

func scalarGoType(t ValueType) (string, bool) {
	switch t {
	case TypeUint8:
		return "uint8", true
	case TypeInt8:
		return "int8", true
	case TypeUint16:
		return "uint16", true
	case TypeInt16:
		return "int16", true
	case TypeUint32:
		return "uint32", true
	case TypeInt32:
		return "int32", true
	case TypeFloat32:
		return "float32", true
	case TypeBool:
		return "bool", true
	case TypeUint64:
		return "uint64", true
	case TypeInt64:
		return "int64", true
	case TypeFloat64:
		return "float64", true
	}
	return "", false
}

func checkArray(a Array, depth int) error {
	if depth > MaxArrayDepth {
		return fmt.Errorf("arrays nested deeper than %d", MaxArrayDepth)
	}
	et, ok := sliceElem(a.Values)
	if !ok {
		return fmt.Errorf("array values of Go type %T are not a GGUF array", a.Values)
	}
	if et != a.Elem {
		return fmt.Errorf("array of %s holds %T", a.Elem, a.Values)
	}
	switch vs := a.Values.(type) {
	case []string:
		for i, s := range vs {
			if len(s) > MaxStringLen {
				return fmt.Errorf("element %d: string of %d bytes is longer than %d", i, len(s), MaxStringLen)
			}
		}
	case []Array:
		for i, sub := range vs {
			if err := checkArray(sub, depth+1); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
	}
	return nil
}

// AddTensor appends a tensor. shape is in ggml "ne" order (shape[0] is the
// row length) and data must hold exactly the bytes that shape and type
// take.
func (w *Writer) AddTensor(name string, typ quant.Type, shape []uint64, data []byte) error {
	if name == "" {
		return fmt.Errorf("gguf: AddTensor: empty name")
	}
	if len(name) > MaxTensorNameLen {
		return fmt.Errorf("gguf: AddTensor %q: name of %d bytes is longer than %d", name, len(name), MaxTensorNameLen)
	}
	if _, dup := w.tIndex[name]; dup {
		return fmt.Errorf("gguf: AddTensor %q: duplicate name", name)
	}
	if !typ.Known() {
		return fmt.Errorf("gguf: AddTensor %q: unknown tensor type %d", name, uint32(typ))
	}
	if len(shape) < 1 || len(shape) > MaxDims {
		return fmt.Errorf("gguf: AddTensor %q: %d dimensions, want 1 to %d", name, len(shape), MaxDims)
	}
	elems := uint64(1)
	for j, n := range shape {
		if n == 0 {
			return fmt.Errorf("gguf: AddTensor %q: dimension %d is 0", name, j)
		}
		hi, lo := bits.Mul64(elems, n)
		if hi != 0 || lo > MaxElements {
			return fmt.Errorf("gguf: AddTensor %q: shape %v has more than 2^62 elements", name, shape)
		}
		elems = lo
	}
	bs := uint64(typ.BlockSize())
	if shape[0]%bs != 0 {
		return fmt.Errorf("gguf: AddTensor %q: row length %d is not a multiple of the %s block size %d", name, shape[0], typ, bs)
	}
	hi, size := bits.Mul64(elems/bs, uint64(typ.TypeSize()))
	if hi != 0 || size > math.MaxInt64 {
		return fmt.Errorf("gguf: AddTensor %q: %s data of %d elements overflows", name, typ, elems)
	}
	if uint64(len(data)) != size {
		return fmt.Errorf("gguf: AddTensor %q: %d bytes of data, %s %v takes %d", name, len(data), typ, shape, size)
	}
	w.tIndex[name] = len(w.tensors)
	w.tensors = append(w.tensors, wTensor{
		info: TensorInfo{Name: name, Shape: append([]uint64(nil), shape...), Type: typ, Size: size},
		data: data,
	})
	return nil
}

func (w *Writer) alignment() uint64 {
	if i, ok := w.kvIndex["general.alignment"]; ok {
		if a, ok := w.kvs[i].Value.V.(uint32); ok {
			return uint64(a)
		}
	}
	return DefaultAlignment
}

func alignUp(n, a uint64) uint64 { return (n + a - 1) &^ (a - 1) }

// WriteTo writes the file to out and returns the bytes written.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	align := w.alignment()
	le := binary.LittleEndian

	// Lay out the data section first: tensor infos carry the offsets.
	infos := make([]TensorInfo, len(w.tensors))
	var off uint64
	for i, t := range w.tensors {
		infos[i] = t.info
		infos[i].Offset = off
		off = alignUp(off+t.info.Size, align)
	}

	hdr := make([]byte, 0, 1<<16)
	hdr = append(hdr, "GGUF"...)
	hdr = le.AppendUint32(hdr, 3)
	hdr = le.AppendUint64(hdr, uint64(len(w.tensors)))
	hdr = le.AppendUint64(hdr, uint64(len(w.kvs)))
	for _, kv := range w.kvs {
		hdr = appendString(hdr, kv.Key)
		hdr = le.AppendUint32(hdr, uint32(kv.Value.Type))
		hdr = appendValue(hdr, kv.Value.Type, kv.Value.V)
	}
	for _, ti := range infos {
		hdr = appendString(hdr, ti.Name)
		hdr = le.AppendUint32(hdr, uint32(len(ti.Shape)))
		for _, n := range ti.Shape {
			hdr = le.AppendUint64(hdr, n)
		}
		hdr = le.AppendUint32(hdr, uint32(ti.Type))
		hdr = le.AppendUint64(hdr, ti.Offset)
	}
	if len(w.tensors) > 0 {
		// Without tensors llama.cpp writes no padding; keep vocab-only files
		// byte-compatible.
		hdr = append(hdr, make([]byte, alignUp(uint64(len(hdr)), align)-uint64(len(hdr)))...)
	}

	cw := &iocount.Writer{W: out}
	bw := bufio.NewWriterSize(cw, 1<<20)
	if _, err := bw.Write(hdr); err != nil {
		return cw.N, fmt.Errorf("gguf: write header: %w", err)
	}
	var zeros [256]byte
	for _, t := range w.tensors {
		if _, err := bw.Write(t.data); err != nil {
			return cw.N, fmt.Errorf("gguf: write tensor %q: %w", t.info.Name, err)
		}
		for pad := alignUp(t.info.Size, align) - t.info.Size; pad > 0; {
			k := min(pad, uint64(len(zeros)))
			if _, err := bw.Write(zeros[:k]); err != nil {
				return cw.N, fmt.Errorf("gguf: write padding: %w", err)
			}
			pad -= k
		}
	}
	if err := bw.Flush(); err != nil {
		return cw.N, fmt.Errorf("gguf: write: %w", err)
	}
	return cw.N, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

// appendValue encodes v, already checked by checkValue.
func appendValue(b []byte, t ValueType, v any) []byte {
	le := binary.LittleEndian
	switch x := v.(type) {
	case uint8, int8, bool, uint16, int16, uint32, int32, float32, uint64, int64, float64:
		return appendFixed(b, x)
	case string:
		return appendString(b, x)
	case Array:
		b = le.AppendUint32(b, uint32(x.Elem))
		b = le.AppendUint64(b, uint64(x.Len()))
		switch vs := x.Values.(type) {
		case []string:
			for _, s := range vs {
				b = appendString(b, s)
			}
		case []Array:
			for _, a := range vs {
				b = appendValue(b, TypeArray, a)
			}
		case []uint8, []int8, []bool, []uint16, []int16, []uint32, []int32, []float32, []uint64, []int64, []float64:
			b = appendFixed(b, vs)
		}
		return b
	}
	return b
}

// appendFixed encodes a number or a bool, or a slice of them, as GGUF
// stores them: little-endian, a bool as one byte (0 or 1).
func appendFixed(b []byte, v any) []byte {
	out, err := binary.Append(b, binary.LittleEndian, v)
	if err != nil {
		panic(fmt.Sprintf("gguf: encoding a %T: %v", v, err)) // only fixed-size types come here
	}
	return out
}

// WriteFile writes the file atomically (internal/atomicfile): on failure
// path is untouched and no temporary file is left.
func (w *Writer) WriteFile(path string) error {
	err := atomicfile.Write(path, 0o644, func(out io.Writer) error {
		_, err := w.WriteTo(out)
		return err
	})
	if err != nil {
		return fmt.Errorf("gguf: %s: %w", path, err)
	}
	return nil
}
