//go:build linux || windows

package cuda

import (
	"errors"
	"fmt"
	"sync"

	"github.com/churon/churon/engine/backend"
)

// KV is one attention layer's keys and values for one sequence in GPU
// memory, laid out as the CPU's (cpu.KV): position p's keys at row p of
// RowSize bytes, values likewise, so rows move to and from snapshots as
// the same bytes.
type KV struct {
	d    *Device
	spec backend.KVSpec
	k, v uint64 // one allocation: keys, then values

	once sync.Once
}

func (d *Device) kv(k backend.KV) *KV {
	c, ok := k.(*KV)
	if !ok || c.d != d {
		panic(fmt.Sprintf("cuda: %s got a KV cache of another device (%T)", d.label, k))
	}
	return c
}

// NewKV implements backend.Device. The rows start zeroed, as the CPU's.
func (d *Device) NewKV(s backend.KVSpec) (backend.KV, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	half := int64(s.Context) * int64(s.RowSize())
	p, err := d.alloc(2*half, "a KV cache")
	if err != nil {
		return nil, err
	}
	d.record(cmd{op: opMemset32, nargs: 3, args: [maxArgs]uint64{p, 0, uint64(2 * half / 4)}})
	return &KV{d: d, spec: s, k: p, v: p + uint64(half)}, nil
}

// Spec implements backend.KV.
func (c *KV) Spec() backend.KVSpec { return c.spec }

func (c *KV) rows(values bool) uint64 {
	if values {
		return c.v
	}
	return c.k
}

// AppendRows implements backend.KV: it waits for the device's queue,
// then copies the rows out through staging.
func (c *KV) AppendRows(dst []byte, values bool, p0, p1 int) ([]byte, error) {
	if err := c.spec.CheckRows(p0, p1); err != nil {
		return dst, err
	}
	d := c.d
	if err := d.usable(); err != nil {
		return dst, err
	}
	rs := c.spec.RowSize()
	const chunkRows = 4 << 20
	for q := p0; q < p1; {
		n := min(p1-q, max(1, chunkRows/rs))
		src, buf := d.stage(n * rs)
		d.record(cmd{op: opDtoH, nargs: 3, args: [maxArgs]uint64{uint64(src), c.rows(values) + uint64(q*rs), uint64(n * rs)}})
		d.g.exec.do(d.waitF)
		if d.err != nil {
			return dst, d.err // and again at the next Sync
		}
		if err := d.g.failure(); err != nil {
			return dst, err
		}
		dst = append(dst, buf...)
		q += n
	}
	return dst, nil
}

// SetRows implements backend.KV: the rows are staged now and copied in
// stream order.
func (c *KV) SetRows(values bool, p0 int, src []byte) error {
	if _, err := c.spec.CheckSetRows("cuda", p0, src); err != nil {
		return err
	}
	rs := c.spec.RowSize()
	d := c.d
	if err := d.usable(); err != nil {
		return err
	}
	const chunk = 4 << 20
	for off := 0; off < len(src); off += chunk {
		n := min(chunk, len(src)-off)
		h, buf := d.stage(n)
		copy(buf, src[off:off+n])
		d.record(cmd{op: opHtoD, nargs: 3, args: [maxArgs]uint64{c.rows(values) + uint64(p0*rs+off), uint64(h), uint64(n)}})
	}
	return nil
}

// Release implements backend.KV: safe after the device closed or
// failed, and from any goroutine.
func (c *KV) Release() { c.once.Do(func() { c.d.freeLater(c.k) }) }

// State is one layer's fixed-size state in GPU memory.
type State struct {
	d    *Device
	n    int
	p    uint64
	once sync.Once
}

// NewState implements backend.Device.
func (d *Device) NewState(n int) (backend.State, error) {
	if n <= 0 {
		return nil, errors.New("cuda: a state of no bytes")
	}
	p, err := d.alloc(int64(n+3)&^3, "a layer state")
	if err != nil {
		return nil, err
	}
	d.record(cmd{op: opMemset32, nargs: 3, args: [maxArgs]uint64{p, 0, uint64((n + 3) / 4)}})
	return &State{d: d, n: n, p: p}, nil
}

// Bytes implements backend.State.
func (s *State) Bytes() int { return s.n }

// AppendTo implements backend.State.
func (s *State) AppendTo(dst []byte) ([]byte, error) {
	d := s.d
	if err := d.usable(); err != nil {
		return dst, err
	}
	src, buf := d.stage(s.n)
	d.record(cmd{op: opDtoH, nargs: 3, args: [maxArgs]uint64{uint64(src), s.p, uint64(s.n)}})
	d.g.exec.do(d.waitF)
	if d.err != nil {
		return dst, d.err
	}
	if err := d.g.failure(); err != nil {
		return dst, err
	}
	return append(dst, buf...), nil
}

// Set implements backend.State.
func (s *State) Set(src []byte) error {
	if err := backend.CheckStateSet("cuda", src, s.n); err != nil {
		return err
	}
	d := s.d
	if err := d.usable(); err != nil {
		return err
	}
	h, buf := d.stage(s.n)
	copy(buf, src)
	d.record(cmd{op: opHtoD, nargs: 3, args: [maxArgs]uint64{s.p, uint64(h), uint64(s.n)}})
	return nil
}

// Release implements backend.State.
func (s *State) Release() { s.once.Do(func() { s.d.freeLater(s.p) }) }

var (
	_ backend.KV    = (*KV)(nil)
	_ backend.State = (*State)(nil)
)
