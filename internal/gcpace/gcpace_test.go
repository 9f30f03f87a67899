package gcpace

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestLimitFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, Floor},
		{40 << 20, Floor},
		{57 << 20, Floor}, // the long chat's scroll
		{68 << 20, 102 << 20},
		{2 << 30, 3 << 30},
	} {
		if got := LimitFor(c.live); got != c.want {
			t.Errorf("LimitFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// TestStartFollowsTheLiveHeap: with a live heap above half the floor,
// the limit after a collection is one and a half times it; set by the person, nothing
// changes.
func TestStartFollowsTheLiveHeap(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	Start(func(k string) string {
		if k == "GOGC" {
			return "100"
		}
		return ""
	})
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("with GOGC set, the limit is %d", got)
	}
	Start(func(string) string { return "" })
	if got := debug.SetMemoryLimit(-1); got != Floor {
		t.Fatalf("after Start the limit is %d, want the floor %d", got, Floor)
	}
	keep := make([]byte, 80<<20) // live: the limit must rise to 120 MiB or more
	for i := 0; i < 10 && debug.SetMemoryLimit(-1) < 120<<20; i++ {
		runtime.GC() // the finalizer runs after a collection, on its own goroutine
		time.Sleep(10 * time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got < 120<<20 {
		t.Errorf("with 80 MiB live the limit stayed at %d", got)
	}
	runtime.KeepAlive(keep)
}
