package metal

import (
	"errors"
	"fmt"
	"sync"

	"github.com/churon/churon/engine/backend"
)

// KV is one attention layer's keys and values for one sequence in shared
// memory, laid out as the CPU's (cpu.KV): position p's keys at row p of
// RowSize bytes, values likewise, so rows move to and from snapshots as
// the same bytes. A ring keeps a row for every position too (as the CUDA
// backend's does): the layout stays the CPU's and the kernels simple.
type KV struct {
	d    *Device
	spec backend.KVSpec
	b    rbuf // keys, then values
	half int  // bytes of each

	once sync.Once
}

func (d *Device) kv(k backend.KV) *KV {
	c, ok := k.(*KV)
	if !ok || c.d != d {
		panic(fmt.Sprintf("metal: %s got a KV cache of another device (%T)", d.label, k))
	}
	return c
}

// NewKV implements backend.Device. The rows start zeroed, as the CPU's.
func (d *Device) NewKV(s backend.KVSpec) (backend.KV, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	half := (s.Context*s.RowSize() + 15) &^ 15
	b, err := d.alloc(2*half, "a KV cache")
	if err != nil {
		return nil, err
	}
	clear(b.bytes()) // a fresh buffer: nothing queued uses it
	return &KV{d: d, spec: s, b: b, half: half}, nil
}

// Spec implements backend.KV.
func (c *KV) Spec() backend.KVSpec { return c.spec }

func (c *KV) k() bind { return c.b.at(0) }
func (c *KV) v() bind { return c.b.at(c.half) }

func (c *KV) rows(values bool) []byte {
	if values {
		return c.b.bytes()[c.half : 2*c.half]
	}
	return c.b.bytes()[:c.half]
}

// settle waits for what is queued (its errors stay for the next Sync) so
// that the host may read and write shared memory directly.
func (d *Device) settle() error {
	if err := d.usable(); err != nil {
		return err
	}
	d.drain()
	if d.dead != nil {
		return d.dead
	}
	return d.err
}

// AppendRows implements backend.KV: it waits for the queue, then copies
// the rows out of shared memory.
func (c *KV) AppendRows(dst []byte, values bool, p0, p1 int) ([]byte, error) {
	if err := c.spec.CheckRows(p0, p1); err != nil {
		return dst, err
	}
	if err := c.d.settle(); err != nil {
		return dst, err
	}
	rs := c.spec.RowSize()
	return append(dst, c.rows(values)[p0*rs:p1*rs]...), nil
}

// SetRows implements backend.KV: it waits for the queue (work queued
// before may read the rows it replaces), then writes shared memory.
func (c *KV) SetRows(values bool, p0 int, src []byte) error {
	if _, err := c.spec.CheckSetRows("metal", p0, src); err != nil {
		return err
	}
	rs := c.spec.RowSize()
	if err := c.d.settle(); err != nil {
		return err
	}
	copy(c.rows(values)[p0*rs:], src)
	return nil
}

// Release implements backend.KV: safe after the device closed or
// failed, and from any goroutine.
func (c *KV) Release() { c.once.Do(func() { c.d.freeLater(c.b) }) }

// State is one layer's fixed-size state in shared memory.
type State struct {
	d    *Device
	n    int
	b    rbuf
	once sync.Once
}

// NewState implements backend.Device.
func (d *Device) NewState(n int) (backend.State, error) {
	if n <= 0 {
		return nil, errors.New("metal: a state of no bytes")
	}
	b, err := d.alloc((n+15)&^15, "a layer state")
	if err != nil {
		return nil, err
	}
	clear(b.bytes())
	return &State{d: d, n: n, b: b}, nil
}

// Bytes implements backend.State.
func (s *State) Bytes() int { return s.n }

// AppendTo implements backend.State.
func (s *State) AppendTo(dst []byte) ([]byte, error) {
	if err := s.d.settle(); err != nil {
		return dst, err
	}
	return append(dst, s.b.bytes()[:s.n]...), nil
}

// Set implements backend.State.
func (s *State) Set(src []byte) error {
	if err := backend.CheckStateSet("metal", src, s.n); err != nil {
		return err
	}
	if err := s.d.settle(); err != nil {
		return err
	}
	copy(s.b.bytes(), src)
	return nil
}

// Release implements backend.State.
func (s *State) Release() { s.once.Do(func() { s.d.freeLater(s.b) }) }

var (
	_ backend.KV    = (*KV)(nil)
	_ backend.State = (*State)(nil)
)
