package core

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// TestCommandsKeepOrderAndNeverBlock: a command that hangs holds up the
// commands after it, never the caller; the outcomes arrive in order.
func TestCommandsKeepOrderAndNeverBlock(t *testing.T) {
	var mu sync.Mutex
	var got []string
	applied := make(chan struct{}, 16)
	do := func(f func()) { f(); applied <- struct{}{} }
	c := NewCommands(do)
	release := make(chan struct{})
	c.Run(func() error { <-release; return errors.New("first") }, func(err error) {
		mu.Lock()
		got = append(got, err.Error())
		mu.Unlock()
	})
	for _, s := range []string{"second", "third"} {
		Then(c, func() (string, error) { return s, nil }, func(v string, _ error) {
			mu.Lock()
			got = append(got, v)
			mu.Unlock()
		})
	}
	// The caller was not held up by the hanging command.
	close(release)
	for range 3 {
		select {
		case <-applied:
		case <-time.After(30 * time.Second):
			t.Fatal("a command never ran")
		}
	}
	c.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 || got[0] != "first" || got[1] != "second" || got[2] != "third" {
		t.Fatalf("outcomes %q", got)
	}
}
