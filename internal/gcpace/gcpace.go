// Package gcpace gives the desktop app's Go heap a soft memory limit
// that follows its live heap, so that the collector's garbage does not
// double the window's memory while a long chat scrolls.
//
// Why: scrolling a 2,000-message chat keeps about 57 MB live but
// allocates gigabytes (Fyne re-wraps text), and with GOGC=100 the heap
// grows to twice the live heap before each collection. Measured on the
// window scroll (tools/scale child -mode window -what open, the
// 10,000 × 12 + 2,000 library, 280 s, under xvfb-run; two runs at once,
// load 3–7, issue 25, docs/performance.md), RSS added by the open and
// the scroll, and the steps scrolled in the time:
//
//	GOGC=100 (Go's default)     140 MB   2,188 steps
//	GOGC=50                     122 MB   2,173 steps
//	GOGC=25                     111 MB   2,008 steps
//	GOMEMLIMIT=100MiB           109 MB   2,089 steps
//
// A fixed limit would make the collector run without pause once the live
// heap nears it (a model's caches, a huge import), so the limit is
// Floor or one and a half times the live heap, whichever is larger: for
// the chat's 57 MB live that is the 100 MiB measured; a larger heap
// keeps half of it as room, as GOGC=50 would (the collector still runs
// at GOGC=100's pace when that comes first). It is set again at the end of every collection (a
// finalizer re-armed each cycle): no timer, nothing while the app idles.
//
// A GOMEMLIMIT or GOGC the person sets wins: Start then does nothing.
package gcpace

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// Floor is the smallest limit: the 100 MiB measured above.
const Floor = 100 << 20

// LimitFor is the memory limit for a live heap of live bytes.
func LimitFor(live uint64) int64 {
	if l := int64(live + live/2); l > Floor {
		return l
	}
	return Floor
}

// Start sets the limit and keeps it following the live heap, unless
// getenv (os.Getenv) says GOMEMLIMIT or GOGC is set.
func Start(getenv func(string) string) {
	if getenv("GOMEMLIMIT") != "" || getenv("GOGC") != "" {
		return
	}
	debug.SetMemoryLimit(Floor)
	arm()
}

// sentinel is garbage from birth: its finalizer runs after the next
// collection, and makes the next one.
type sentinel struct{ _ [16]byte } // not zero-sized: those are never collected

func arm() {
	runtime.SetFinalizer(new(sentinel), func(*sentinel) {
		follow()
		arm()
	})
}

var liveSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

// follow sets the limit for the heap the last collection left live.
func follow() {
	metrics.Read(liveSample)
	if liveSample[0].Value.Kind() == metrics.KindUint64 {
		debug.SetMemoryLimit(LimitFor(liveSample[0].Value.Uint64()))
	}
}
