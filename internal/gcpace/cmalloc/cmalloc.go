package cmalloc

import (
	"sync"
	"time"
)

// Stats is the C heap's: the bytes malloc handed out and not freed
// (InUse, mmapped blocks included), and those freed but kept (Free).
type Stats struct{ InUse, Free uint64 }

// Read returns the C heap's figures; false where they cannot be read
// (no cgo, not glibc, or a glibc older than 2.33).
func Read() (Stats, bool) { return read() }

// Trim gives the C heap's free pages back to the system.
func Trim() { trim() }

// Every is how often the trimmer looks, and MinFree how much must be
// free for it to trim: a frame's worth of textures is a few MB, freed and
// taken again at every wheel step, which is no reason to give it back.
const (
	Every   = 5 * time.Second
	MinFree = 16 << 20
)

// worth reports whether a trim is worth it, the heap's figures now s (ok:
// read) and at the last trim last: with the figures, when MinFree or more
// is free and the heap changed since (an idle window's does not, and what
// was free then went back then); without them, always (a trim with
// nothing to give back walks the free lists and returns).
func worth(s Stats, ok bool, last Stats) bool {
	return !ok || s.Free >= MinFree && s != last
}

var startOnce sync.Once

// Start trims the C heap every Every, when worth it, for the life of the
// process; more calls do nothing. Where the package cannot trim, it
// starts nothing.
func Start() {
	if !supported {
		return
	}
	startOnce.Do(func() {
		go func() {
			var last Stats
			for range time.Tick(Every) {
				if s, ok := Read(); worth(s, ok, last) {
					Trim()
					last = s
				}
			}
		}()
	})
}
