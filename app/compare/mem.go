package compare

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// RSS sources reported in Result.RSSSource.
const (
	// RSSStatm: the growth of the process's resident set (/proc/self/statm)
	// from before the model was loaded to after its answer was generated.
	// Mapped weights count once their pages have been touched, so this is
	// the memory the model really occupied while answering: weights read
	// (an untied model's embedding is only paged in for the tokens used),
	// KV cache and scratch.
	RSSStatm = "statm"
	// RSSEstimate: no /proc on this system; the figure is the weights'
	// size plus the KV cache, what the resident set would reach.
	RSSEstimate = "estimate"
)

// residentBytes reads the process's resident set size from
// /proc/self/statm (Linux). ok is false where there is no such file.
func residentBytes() (n int64, ok bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}

// settle returns freed heap to the system so that the next model's
// resident-set growth is not hidden by memory the previous one left in
// the Go heap.
func settle() {
	runtime.GC()
	debug.FreeOSMemory()
}
