package backend

import (
	"fmt"

	"github.com/churon/churon/internal/kvring"
)

// LayerSpec says what state one layer keeps per sequence: KV rows (an
// attention layer), a fixed-size state (a recurrent or convolution
// layer), or both.
type LayerSpec struct {
	KV         *KVSpec // nil: no KV rows
	StateBytes int     // 0: no state
	// Window is the sliding window of a KV layer's attention (0: none):
	// a query at position p needs the rows of (p−Window, p] only, which
	// is what lets its KV be a ring (KVSpec.Ring, RingRows).
	Window int
}

// RingMargin is how many rows a sliding-window layer's ring keeps beyond
// its window: the most positions one pass may add, and how far back a
// sequence can be cut and go on from its cache (internal/kvring says
// why 512).
const RingMargin = kvring.Margin

// RingRows is the rows a sliding-window layer of the given window keeps
// for a sequence of context positions: window − 1 + RingMargin, rounded
// up to a multiple of 64 (the CPU's attention blocks, so a block never
// wraps); 0 (a row per position) when that would not be less than the
// context.
func RingRows(window, context int) int { return kvring.Rows(window, context) }

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
	// window is the layer's LayerSpec.Window; held the first position
	// whose rows the layer still holds (a ring drops the oldest).
	window, held int
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
		lc.window = s.Window
		if s.KV != nil {
			if err := s.KV.Check(); err != nil {
				c.Release()
				return nil, err
			}
			if r := s.KV.Ring; r > 0 && r < s.Window {
				c.Release()
				return nil, fmt.Errorf("backend: layer %d: a ring of %d rows for a window of %d", i, r, s.Window)
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

// The rows a layer holds. Of a sequence of n positions, layer i holds
// the rows of [Held(i), n): all of them unless its KV is a ring, which
// holds the last Ring at most. The sequence tells the cache what it does
// (Stored, Cut, Reset); Holds says whether the next position can be run
// from what is held, or the sequence must run its tokens again from the
// start (a cut further back than the ring reaches).

// Held is the first position whose rows layer i holds.
func (c *Cache) Held(i int) int { return c.layers[i].held }

// SetHeld says that layer i holds the rows from position p on (a
// snapshot's reader, which writes rows itself).
func (c *Cache) SetHeld(i, p int) { c.layers[i].held = p }

// Need is the first position whose rows layer i needs for a query at
// position n: n − Window + 1 for a sliding-window layer, else 0.
func (c *Cache) Need(i, n int) int {
	if w := c.layers[i].window; w > 0 {
		return max(0, n-w+1)
	}
	return 0
}

// Stored records a pass that wrote the rows of every layer up to
// position p1 (exclusive), from the sequence's end: each ring has
// dropped the positions its new rows overwrote.
func (c *Cache) Stored(p1 int) {
	for i := range c.layers {
		l := &c.layers[i]
		if l.KV != nil {
			if r := l.KV.Spec().Ring; r > 0 {
				l.held = max(l.held, p1-r)
			}
		}
	}
}

// Cut records that the sequence was cut to n positions.
func (c *Cache) Cut(n int) {
	for i := range c.layers {
		c.layers[i].held = min(c.layers[i].held, n)
	}
}

// Reset records that the sequence runs its positions again from 0.
func (c *Cache) Reset() {
	for i := range c.layers {
		c.layers[i].held = 0
	}
}

// Holds reports whether every layer holds the rows a query at position
// n needs, that is whether a sequence of n positions can go on.
func (c *Cache) Holds(n int) bool {
	for i := range c.layers {
		if c.layers[i].KV != nil && c.layers[i].held > c.Need(i, n) {
			return false
		}
	}
	return true
}

// MaxRun is the most positions one pass may add to a sequence, so that
// its first query still finds its window in every ring: the smallest
// Ring − Window + 1; 0 without rings (no limit).
func (c *Cache) MaxRun() int {
	run := 0
	for _, l := range c.layers {
		if l.KV == nil {
			continue
		}
		if r := l.KV.Spec().Ring; r > 0 {
			k := r - max(1, l.window) + 1
			if run == 0 || k < run {
				run = k
			}
		}
	}
	return run
}

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
