package compare

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
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
