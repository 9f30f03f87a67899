package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestGrowsWithWork: the CPU time of the process and of the calling
// thread grow while it computes (where the system tells them at all).
func TestGrowsWithWork(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, tc := range []struct {
		name string
		read func() time.Duration
	}{{"process", Process}, {"thread", Thread}} {
		t.Run(tc.name, func(t *testing.T) {
			start := tc.read()
			if start == 0 {
				t.Skip("not measured on this system")
			}
			// Spin until the clock moves (its tick is coarse), for at most
			// a minute of wall time on a loaded machine.
			for end := time.Now().Add(time.Minute); tc.read() == start; {
				if time.Now().After(end) {
					t.Fatalf("%s CPU time still %v after a minute of work", tc.name, start)
				}
			}
			if tc.read() < start {
				t.Errorf("%s CPU time went back", tc.name)
			}
		})
	}
}
