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
		{50 << 20, Floor},
		{51 << 20, 102 << 20},
		{3 << 30, 6 << 30},
	} {
		if got := LimitFor(c.live); got != c.want {
			t.Errorf("LimitFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// TestStartFollowsTheLiveHeap: with a live heap above half the floor,
// the limit after a collection is twice it; set by the person, nothing
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
	keep := make([]byte, 80<<20) // live: the limit must rise above 160 MiB
	for i := 0; i < 10 && debug.SetMemoryLimit(-1) < 160<<20; i++ {
		runtime.GC() // the finalizer runs after a collection, on its own goroutine
		time.Sleep(10 * time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got < 160<<20 {
		t.Errorf("with 80 MiB live the limit stayed at %d", got)
	}
	runtime.KeepAlive(keep)
}
