package testutil

import (
	"sync"
	"testing"
)

// Concurrently runs body(g, i) for i from 0 to iterations-1 on each of
// goroutines goroutines, all at once, and returns when every call has.
// Each error a call returns is reported with t.Error (which, unlike
// t.Fatal, other goroutines may call) and its goroutine goes on with the
// next iteration, so one failure does not hide the others.
func Concurrently(t testing.TB, goroutines, iterations int, body func(g, i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range iterations {
				if err := body(g, i); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}
