package backend_test

import (
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/cpu"
	"github.com/churon/churon/engine/quant"
)

// TestCacheRings: what a cache with a sliding-window layer's ring says it
// holds, as a sequence grows, is cut back within the ring's margin and
// past it, and runs again from the start; and the sizes and limits a ring
// sets.
func TestCacheRings(t *testing.T) {
	d := cpu.NewDevice(1)
	defer d.Close()
	const ctx, window = 4096, 100
	ring := backend.RingRows(window, ctx)
	if ring != 640 || ring-window+1 < backend.RingMargin {
		t.Fatalf("RingRows(%d, %d) = %d", window, ctx, ring)
	}
	full := &backend.KVSpec{Type: quant.F16, Context: ctx, Dim: 64}
	banded := *full
	banded.Ring = ring
	c, err := backend.NewCache(backend.Single(d, 2), []backend.LayerSpec{{KV: full}, {KV: &banded, Window: window}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if want := full.Bytes() + 2*int64(ring)*int64(full.RowSize()); c.Bytes() != want {
		t.Fatalf("%d bytes, want %d", c.Bytes(), want)
	}
	if got := c.MaxRun(); got != ring-window+1 {
		t.Fatalf("MaxRun %d, want %d", got, ring-window+1)
	}
	check := func(what string, n, held int, holds bool) {
		t.Helper()
		if c.Held(0) != 0 || c.Held(1) != held || c.Holds(n) != holds {
			t.Fatalf("%s: held from %d and %d, holds %d: %v; want %d, %v", what, c.Held(0), c.Held(1), n, c.Holds(n), held, holds)
		}
	}
	c.Stored(500)
	check("500 positions", 500, 0, true)
	c.Stored(1500)
	check("1500", 1500, 1500-ring, true)
	c.Cut(1500 - 300)
	check("cut back 300", 1200, 1500-ring, true)
	c.Stored(1300)
	check("grown again", 1300, 1500-ring, true)
	c.Cut(900)
	check("cut back past the ring", 900, 1500-ring, false)
	c.Cut(0)
	check("cut to 0", 0, 0, true)
	c.Stored(2000)
	c.Cut(2000 - ring + window - 1)
	check("cut to the last position the ring serves", 2000-ring+window-1, 2000-ring, true)
	c.Cut(2000 - ring + window - 2)
	check("one before", 2000-ring+window-2, 2000-ring, false)
	c.Reset()
	check("reset", 1000, 0, true)
	if c.Need(0, 5000) != 0 || c.Need(1, 5000) != 5000-window+1 || c.Need(1, 10) != 0 {
		t.Fatalf("Need %d %d %d", c.Need(0, 5000), c.Need(1, 5000), c.Need(1, 10))
	}

	// A ring shorter than its window, or one as long as the context, is
	// no cache.
	short := banded
	short.Ring = window - 1
	if _, err := backend.NewCache(backend.Single(d, 1), []backend.LayerSpec{{KV: &short, Window: window}}); err == nil {
		t.Fatal("a ring shorter than its window")
	}
	whole := banded
	whole.Ring = ctx + 1
	if whole.Check() == nil || backend.RingRows(window, ring) != 0 {
		t.Fatal("a ring longer than the context")
	}
}
