package backend

import "fmt"

// LayerSpec says what state one layer keeps per sequence: KV rows (an
// attention layer), a fixed-size state (a recurrent or convolution
// layer), or both.
type LayerSpec struct {
	KV         *KVSpec // nil: no KV rows
	StateBytes int     // 0: no state
}

// Cache is one sequence's state in every layer, each layer's in the
// memory of the device the plan runs that layer on.
type Cache struct {
	layers []LayerCache
	plan   *Plan
}

// LayerCache is one layer's part of a Cache.
type LayerCache struct {
	KV    KV    // nil for a layer without KV rows
	State State // nil for a layer without state
}

// NewCache makes the state of every layer on the device p puts it on.
// specs has one entry per layer. On failure nothing stays allocated, and
// a device that could not make its part is named by a *DeviceError.
func NewCache(p *Plan, specs []LayerSpec) (*Cache, error) {
	if len(specs) != len(p.Layers) {
		return nil, fmt.Errorf("backend: cache of %d layers for a plan of %d", len(specs), len(p.Layers))
	}
	c := &Cache{layers: make([]LayerCache, len(specs)), plan: p}
	for i, s := range specs {
		d := p.Layers[i]
		lc := &c.layers[i]
		if s.KV != nil {
			if err := s.KV.Check(); err != nil {
				c.Release()
				return nil, err
			}
			kv, err := d.NewKV(*s.KV)
			if err != nil {
				c.Release()
				return nil, &DeviceError{Device: d, Err: fmt.Errorf("layer %d's KV cache: %w", i, err)}
			}
			lc.KV = kv
		}
		if s.StateBytes > 0 {
			st, err := d.NewState(s.StateBytes)
			if err != nil {
				c.Release()
				return nil, &DeviceError{Device: d, Err: fmt.Errorf("layer %d's state: %w", i, err)}
			}
			lc.State = st
		}
	}
	return c, nil
}

// Plan is the plan the cache was made for.
func (c *Cache) Plan() *Plan { return c.plan }

// Layers is the number of layers.
func (c *Cache) Layers() int { return len(c.layers) }

// Layer is layer i's state.
func (c *Cache) Layer(i int) *LayerCache { return &c.layers[i] }

// KV is layer i's KV rows (nil for a layer without).
func (c *Cache) KV(i int) KV { return c.layers[i].KV }

// Bytes is the memory the cache holds, on every device together.
func (c *Cache) Bytes() int64 {
	var n int64
	for _, l := range c.layers {
		if l.KV != nil {
			n += l.KV.Spec().Bytes()
		}
		if l.State != nil {
			n += int64(l.State.Bytes())
		}
	}
	return n
}

// Release returns every layer's memory to its device. It may be called
// more than once.
func (c *Cache) Release() {
	for i := range c.layers {
		l := &c.layers[i]
		if l.KV != nil {
			l.KV.Release()
			l.KV = nil
		}
		if l.State != nil {
			l.State.Release()
			l.State = nil
		}
	}
}
