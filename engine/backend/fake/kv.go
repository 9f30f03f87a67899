package fake

import (
	"errors"
	"fmt"
	"slices"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/cpu"
)

// kv is one layer's cache on a fake device: the CPU's layout, in the
// fake device's keeping.
type kv struct {
	dev      *Device
	c        *cpu.KV
	released bool
}

func (d *Device) kv(k backend.KV) *cpu.KV {
	fk, ok := k.(*kv)
	if !ok || fk.dev != d {
		panic(fmt.Sprintf("fake: %s got a KV cache of another device (%T)", d.opt.Name, k))
	}
	if fk.released {
		panic("fake: a released KV cache used")
	}
	return fk.c
}

// NewKV implements backend.Device.
func (d *Device) NewKV(s backend.KVSpec) (backend.KV, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	err := d.take(s.Bytes(), "a KV cache")
	d.mu.Unlock()
	if err != nil {
		return nil, err
	}
	c, err := cpu.NewKV(s)
	if err != nil {
		d.give(s.Bytes())
		return nil, err
	}
	return &kv{dev: d, c: c}, nil
}

func (k *kv) Spec() backend.KVSpec { return k.c.Spec() }

// usable says why the device can take no more work, if it cannot.
func (d *Device) usable() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.unusable()
}

// unusable is usable for a caller that holds d.mu.
func (d *Device) unusable() error {
	switch {
	case d.fault != nil:
		return d.fault
	case d.closed:
		return errors.New("fake: device closed")
	}
	return nil
}

// AppendRows waits for the queue, as a copy to the host does.
func (k *kv) AppendRows(dst []byte, values bool, p0, p1 int) ([]byte, error) {
	d := k.dev
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.run(); err != nil {
		return dst, err
	}
	return k.c.AppendRows(dst, values, p0, p1)
}

// SetRows checks its arguments now and queues the copy, as an
// asynchronous copy to the device does.
func (k *kv) SetRows(values bool, p0 int, src []byte) error {
	if _, err := k.c.Spec().CheckSetRows("fake", p0, src); err != nil {
		return err
	}
	if err := k.dev.usable(); err != nil {
		return err
	}
	b := slices.Clone(src)
	k.dev.enqueue(func() { _ = k.c.SetRows(values, p0, b) })
	return nil
}

// Release gives the cache's memory back; it is safe after the device
// closed or failed.
func (k *kv) Release() {
	if k.released {
		return
	}
	k.released = true
	k.dev.give(k.c.Spec().Bytes())
}

// state is one layer's state on a fake device.
type state struct {
	dev      *Device
	s        *cpu.State
	released bool
}

// NewState implements backend.Device.
func (d *Device) NewState(n int) (backend.State, error) {
	d.mu.Lock()
	err := d.take(int64(n), "a layer state")
	d.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return &state{dev: d, s: cpu.NewState(n)}, nil
}

func (s *state) Bytes() int { return s.s.Bytes() }

func (s *state) AppendTo(dst []byte) ([]byte, error) {
	d := s.dev
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.run(); err != nil {
		return dst, err
	}
	return s.s.AppendTo(dst)
}

func (s *state) Set(src []byte) error {
	if err := backend.CheckStateSet("fake", src, s.s.Bytes()); err != nil {
		return err
	}
	if err := s.dev.usable(); err != nil {
		return err
	}
	b := slices.Clone(src)
	s.dev.enqueue(func() { _ = s.s.Set(b) })
	return nil
}

func (s *state) Release() {
	if s.released {
		return
	}
	s.released = true
	s.dev.give(int64(s.s.Bytes()))
}

// DeltaNet implements backend.DeltaNetRunner with the CPU's kernel, run
// at Sync like every other operation.
func (d *Device) DeltaNet(dst, qkv, alpha, beta backend.Buf, st backend.State, n int, p *backend.DeltaNet) {
	s, ok := st.(*state)
	if !ok || s.dev != d {
		panic(fmt.Sprintf("fake: %s: a state of another device (%T)", d.opt.Name, st))
	}
	hd, hq, ha, hb, pc := d.host(dst), d.host(qkv), d.host(alpha), d.host(beta), *p
	d.enqueue(func() {
		if err := d.k.DeltaNet(hd, hq, ha, hb, s.s.Raw(), n, &pc); err != nil {
			panic(err) // the architecture sizes its states
		}
	})
}

var _ backend.DeltaNetRunner = (*Device)(nil)
