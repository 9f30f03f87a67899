package cputime

import (
	"crypto/sha256"
	"runtime"
	"testing"
	"time"
)

// TestClocks: work moves both CPU clocks forward; a sleep moves the
// thread's not at all (where it is a CPU clock), however long the wait.
func TestClocks(t *testing.T) {
	work := func() {
		b := make([]byte, 1<<20)
		for range 20 {
			s := sha256.Sum256(b)
			b[0] = s[0]
		}
	}
	p0 := Process()
	if d := Of(work); d <= 0 {
		t.Errorf("20 MiB hashed in %v of the thread's CPU time", d)
	}
	if p1 := Process(); p1 <= p0 {
		t.Errorf("the process's CPU time went from %v to %v over 20 MiB hashed", p0, p1)
	}
	if runtime.GOOS != "linux" {
		return
	}
	const nap = 200 * time.Millisecond
	if d := Of(func() { time.Sleep(nap) }); d >= nap/2 {
		t.Errorf("a %v sleep took %v of the thread's CPU time", nap, d)
	}
}
