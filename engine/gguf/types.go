package gguf

import (
	"fmt"
	"math"
	"strings"

	"github.com/churon/churon/engine/quant"
)

// ValueType is the GGUF metadata value type, numbered as in the spec.
type ValueType uint32

const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var valueTypeNames = [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"}

// Known reports whether t is a value type the spec defines.
func (t ValueType) Known() bool { return t <= TypeFloat64 }

// String returns the spec's lower-case name ("uint32"), or "valuetype(N)".
func (t ValueType) String() string {
	if t.Known() {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("valuetype(%d)", uint32(t))
}

// fixedSize is the encoded size of a scalar of type t, 0 for string, array
// and unknown types.
func (t ValueType) fixedSize() int {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// minSize is the fewest bytes one value of type t can take in a file; it
// bounds counts against the bytes left before anything is allocated.
func (t ValueType) minSize() int {
	switch t {
	case TypeString:
		return 8 // length
	case TypeArray:
		return 12 // element type + count
	}
	return t.fixedSize()
}

// Value holds one metadata value. Scalars are stored as the matching Go type
// (uint8, int8, uint16, int16, uint32, int32, float32, bool, string, uint64,
// int64, float64); arrays as Array.
type Value struct {
	Type ValueType
	V    any
}

// Array is a metadata array. Values is a typed slice matching Elem: []uint8,
// []int8, []uint16, []int16, []uint32, []int32, []float32, []bool, []string,
// []uint64, []int64, []float64, or []Array for nested arrays. An empty array
// still has a typed (empty) slice.
type Array struct {
	Elem   ValueType
	Values any
}

// Len returns the number of elements, or 0 when Values does not match Elem.
func (a Array) Len() int {
	switch v := a.Values.(type) {
	case []uint8:
		return len(v)
	case []int8:
		return len(v)
	case []uint16:
		return len(v)
	case []int16:
		return len(v)
	case []uint32:
		return len(v)
	case []int32:
		return len(v)
	case []float32:
		return len(v)
	case []bool:
		return len(v)
	case []string:
		return len(v)
	case []uint64:
		return len(v)
	case []int64:
		return len(v)
	case []float64:
		return len(v)
	case []Array:
		return len(v)
	}
	return 0
}

// String renders short values in full and long arrays as a summary, for
// logs and `churon` metadata listings.
func (v Value) String() string {
	switch x := v.V.(type) {
	case string:
		if len(x) > 80 {
			return fmt.Sprintf("%q... (%d bytes)", x[:77], len(x))
		}
		return fmt.Sprintf("%q", x)
	case Array:
		n := x.Len()
		if n > 8 {
			return fmt.Sprintf("[%d %s]", n, x.Elem)
		}
		var b strings.Builder
		b.WriteByte('[')
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			e, _ := x.index(i)
			b.WriteString(e.String())
		}
		b.WriteByte(']')
		return b.String()
	case nil:
		return "<nil>"
	}
	return fmt.Sprint(v.V)
}

// index returns element i as a Value.
func (a Array) index(i int) (Value, bool) {
	var e any
	switch v := a.Values.(type) {
	case []uint8:
		e = v[i]
	case []int8:
		e = v[i]
	case []uint16:
		e = v[i]
	case []int16:
		e = v[i]
	case []uint32:
		e = v[i]
	case []int32:
		e = v[i]
	case []float32:
		e = v[i]
	case []bool:
		e = v[i]
	case []string:
		e = v[i]
	case []uint64:
		e = v[i]
	case []int64:
		e = v[i]
	case []float64:
		e = v[i]
	case []Array:
		e = v[i]
	default:
		return Value{}, false
	}
	return Value{Type: a.Elem, V: e}, true
}

// KV is one metadata entry.
type KV struct {
	Key   string
	Value Value
}

// TensorInfo describes one tensor.
type TensorInfo struct {
	Name   string
	Shape  []uint64 // ggml "ne" order: Shape[0] is the innermost (row) length
	Type   quant.Type
	Offset uint64 // relative to the start of the data section, as stored
	Size   uint64 // bytes, computed from shape and type
}

// Elements returns the number of elements (the product of Shape).
func (t *TensorInfo) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// integer returns an integer scalar's bits as a uint64 (two's complement
// for a negative one) and whether it is negative.
func integer(x any) (bits uint64, neg, ok bool) {
	switch v := x.(type) {
	case uint8:
		return uint64(v), false, true
	case uint16:
		return uint64(v), false, true
	case uint32:
		return uint64(v), false, true
	case uint64:
		return v, false, true
	case int8:
		return uint64(v), v < 0, true
	case int16:
		return uint64(v), v < 0, true
	case int32:
		return uint64(v), v < 0, true
	case int64:
		return uint64(v), v < 0, true
	}
	return 0, false, false
}

// asUint returns an integer scalar as uint64 when it is non-negative.
func asUint(x any) (uint64, bool) {
	v, neg, ok := integer(x)
	if !ok || neg {
		return 0, false
	}
	return v, true
}

// asInt returns an integer scalar as int64 when it fits.
func asInt(x any) (int64, bool) {
	v, neg, ok := integer(x)
	if !ok || (!neg && v > math.MaxInt64) {
		return 0, false
	}
	return int64(v), true
}

// asFloat returns a float or integer scalar as float64.
func asFloat(x any) (float64, bool) {
	switch v := x.(type) {
	case float32:
		return float64(v), true
	case float64:
		return v, true
	}
	v, neg, ok := integer(x)
	switch {
	case !ok:
		return 0, false
	case neg:
		return float64(int64(v)), true
	}
	return float64(v), true
}
