package cmalloc

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestWorth(t *testing.T) {
	big := Stats{InUse: 80 << 20, Free: MinFree}
	for _, c := range []struct {
		name string
		s    Stats
		ok   bool
		last Stats
		want bool
	}{
		{"no figures: always", Stats{}, false, Stats{}, true},
		{"little free", Stats{InUse: 80 << 20, Free: MinFree - 1}, true, Stats{}, false},
		{"much free, new", big, true, Stats{}, true},
		{"much free, as at the last trim", big, true, big, false},
		{"much free, changed since", Stats{InUse: 81 << 20, Free: MinFree}, true, big, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := worth(c.s, c.ok, c.last); got != c.want {
				t.Errorf("worth(%+v, %v, %+v) = %v, want %v", c.s, c.ok, c.last, got, c.want)
			}
		})
	}
}

// TestTrimGivesFreePagesBack leaves 64 MB freed but resident under a
// block in use, which glibc keeps, and checks that Trim gives most of it
// back to the system.
func TestTrimGivesFreePagesBack(t *testing.T) {
	if !supported {
		t.Skip("no cgo or not Linux: Trim does nothing here")
	}
	const n, size = 16384, 4096 // under glibc's mmap threshold: heap blocks
	release := fillHeap(n, size)
	defer release()
	s, ok := Read()
	if ok && s.Free < n*size/2 {
		t.Fatalf("after freeing %d MB the C heap says %d MB free", n*size>>20, s.Free>>20)
	}
	before := residentBytes(t)
	Trim()
	after := residentBytes(t)
	if gone := before - after; gone < n*size/2 {
		t.Errorf("Trim gave back %d MB of the %d MB freed (resident %d → %d MB)", gone>>20, n*size>>20, before>>20, after>>20)
	}
}

// residentBytes is the process's resident memory, from /proc/self/statm.
func residentBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Fatalf("read statm: %v", err)
	}
	f := strings.Fields(string(b))
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatalf("statm %q: %v", b, err)
	}
	return pages * int64(os.Getpagesize())
}
