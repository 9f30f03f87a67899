package cpu

import (
	"encoding/binary"
	"unsafe"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// KV is one attention layer's keys and values in host memory: the CPU's
// backend.KV. Keys and values of position p live in row r = Spec().Row(p)
// — p itself, or p mod Ring in a sliding-window layer's ring — at
// [r*Dim, (r+1)*Dim) of their arrays, stored as F16 (the default, as
// llama.cpp), F32, or Q8_0 (one 34-byte block per 32 values of a row:
// half the memory of F16, at some cost in quality).
type KV struct {
	spec     backend.KVSpec
	k16, v16 []uint16
	k32, v32 []float32
	k8, v8   []byte // Q8_0: RowSize() bytes per position
}

// NewKV allocates one layer's cache of s.Rows() rows.
func NewKV(s backend.KVSpec) (*KV, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	c := &KV{spec: s}
	n := s.Rows() * s.Dim
	switch s.Type {
	case quant.F16:
		c.k16, c.v16 = make([]uint16, n), make([]uint16, n)
	case quant.F32:
		c.k32, c.v32 = make([]float32, n), make([]float32, n)
	case quant.Q8_0:
		c.k8, c.v8 = make([]byte, s.Rows()*s.RowSize()), make([]byte, s.Rows()*s.RowSize())
	}
	return c, nil
}

// Spec implements backend.KV.
func (c *KV) Spec() backend.KVSpec { return c.spec }

// Release implements backend.KV; host memory goes with the garbage
// collector.
func (c *KV) Release() {}

// Store writes the key and value rows of len(pos) tokens at positions
// pos.
func (c *KV) Store(pos []int32, k, v []float32) {
	d := c.spec.Dim
	rs := c.spec.RowSize()
	for i, p := range pos {
		r := c.spec.Row(int(p))
		off := r * d
		kr, vr := k[i*d:(i+1)*d], v[i*d:(i+1)*d]
		switch c.spec.Type {
		case quant.F16:
			_ = quant.FP32ToFP16Slice(kr, c.k16[off:off+d])
			_ = quant.FP32ToFP16Slice(vr, c.v16[off:off+d])
		case quant.Q8_0:
			// Sizes are whole blocks by construction (KVSpec.Check), so
			// Quantize cannot fail here.
			b := r * rs
			_ = quant.Quantize(quant.Q8_0, kr, c.k8[b:b+rs])
			_ = quant.Quantize(quant.Q8_0, vr, c.v8[b:b+rs])
		default:
			copy(c.k32[off:off+d], kr)
			copy(c.v32[off:off+d], vr)
		}
	}
}

// F16 returns the raw F16 key and value storage (nil for other types).
func (c *KV) F16() (k, v []uint16) { return c.k16, c.v16 }

// F32 returns the raw F32 key and value storage (nil for other types).
func (c *KV) F32() (k, v []float32) { return c.k32, c.v32 }

// Q8 returns the raw Q8_0 key and value storage: RowSize() bytes per
// position, each row Dim/32 blocks of an F16 scale and 32 int8 values
// (nil for other types).
func (c *KV) Q8() (k, v []byte) { return c.k8, c.v8 }

// littleEndian: the host stores F16 and F32 values in the byte order
// snapshots use, so rows are copied as bytes instead of converted one by
// one (445 → ~1,000 MiB/s restoring an F16 cache).
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// runs splits positions [p0, p1) (at most Rows of them) into the one or
// two runs of consecutive rows they occupy: a ring's range may wrap.
func (c *KV) runs(p0, p1 int) (a0, a1, b1 int) {
	r0, n := c.spec.Row(p0), p1-p0
	if r0+n <= c.spec.Rows() {
		return r0, r0 + n, 0
	}
	return r0, c.spec.Rows(), r0 + n - c.spec.Rows()
}

// AppendRows implements backend.KV.
func (c *KV) AppendRows(dst []byte, values bool, p0, p1 int) ([]byte, error) {
	if err := c.spec.CheckRows(p0, p1); err != nil {
		return dst, err
	}
	if p0 == p1 {
		return dst, nil
	}
	a0, a1, b1 := c.runs(p0, p1)
	dst = c.appendRun(dst, values, a0, a1)
	if b1 > 0 {
		dst = c.appendRun(dst, values, 0, b1)
	}
	return dst, nil
}

// appendRun appends rows [r0, r1) (not empty) as stored.
func (c *KV) appendRun(dst []byte, values bool, r0, r1 int) []byte {
	d := c.spec.Dim
	switch c.spec.Type {
	case quant.F16:
		return appendLE(dst, keysOrValues(values, c.k16, c.v16)[r0*d:r1*d])
	case quant.Q8_0:
		rs := c.spec.RowSize()
		return append(dst, keysOrValues(values, c.k8, c.v8)[r0*rs:r1*rs]...)
	}
	return appendLE(dst, keysOrValues(values, c.k32, c.v32)[r0*d:r1*d])
}

// SetRows implements backend.KV.
func (c *KV) SetRows(values bool, p0 int, src []byte) error {
	p1, err := c.spec.CheckSetRows("cpu", p0, src)
	if err != nil {
		return err
	}
	rs := c.spec.RowSize()
	if p0 == p1 {
		return nil
	}
	a0, a1, b1 := c.runs(p0, p1)
	c.setRun(values, a0, a1, src[:(a1-a0)*rs])
	if b1 > 0 {
		c.setRun(values, 0, b1, src[(a1-a0)*rs:])
	}
	return nil
}

// setRun stores src as rows [r0, r1) (not empty).
func (c *KV) setRun(values bool, r0, r1 int, src []byte) {
	d, rs := c.spec.Dim, c.spec.RowSize()
	switch c.spec.Type {
	case quant.F16:
		setLE(keysOrValues(values, c.k16, c.v16)[r0*d:r1*d], src)
	case quant.Q8_0:
		copy(keysOrValues(values, c.k8, c.v8)[r0*rs:r1*rs], src)
	default:
		setLE(keysOrValues(values, c.k32, c.v32)[r0*d:r1*d], src)
	}
}

// keysOrValues is v if values, else k.
func keysOrValues[T any](values bool, k, v []T) []T {
	if values {
		return v
	}
	return k
}

// appendLE appends rows (not empty) little-endian, as snapshots store
// them.
func appendLE[T uint16 | float32](dst []byte, rows []T) []byte {
	if littleEndian {
		return append(dst, hostBytes(rows)...)
	}
	out, err := binary.Append(dst, binary.LittleEndian, rows)
	if err != nil {
		panic(err) // rows are fixed-size values
	}
	return out
}

// setLE is appendLE's inverse: src holds exactly len(rows) values.
func setLE[T uint16 | float32](rows []T, src []byte) {
	if littleEndian {
		copy(hostBytes(rows), src)
		return
	}
	if _, err := binary.Decode(src, binary.LittleEndian, rows); err != nil {
		panic(err) // the caller checked the length
	}
}

// hostBytes views rows (not empty) as bytes, in host order.
func hostBytes[T uint16 | float32](rows []T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&rows[0])), len(rows)*int(unsafe.Sizeof(rows[0])))
}

// State is a layer's fixed-size state in host memory: the CPU's
// backend.State.
type State struct{ b []byte }

// NewState allocates a zeroed state of n bytes.
func NewState(n int) *State { return &State{b: make([]byte, n)} }

// Bytes implements backend.State.
func (s *State) Bytes() int { return len(s.b) }

// Raw is the state's storage, for kernels.
func (s *State) Raw() []byte { return s.b }

// AppendTo implements backend.State.
func (s *State) AppendTo(dst []byte) ([]byte, error) { return append(dst, s.b...), nil }

// Set implements backend.State.
func (s *State) Set(src []byte) error {
	if err := backend.CheckStateSet("cpu", src, len(s.b)); err != nil {
		return err
	}
	copy(s.b, src)
	return nil
}

// Release implements backend.State.
func (s *State) Release() {}

var (
	_ backend.KV    = (*KV)(nil)
	_ backend.State = (*State)(nil)
)
