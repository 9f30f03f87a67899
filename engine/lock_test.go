package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/churon/churon/models/synth"
)

// TestLock: a locked model works like any other, or Load says why the
// system refused to lock it.
func TestLock(t *testing.T) {
	path := synthFile(t, "m.gguf", synth.Tiny("llama"))
	for _, inMemory := range []bool{false, true} {
		m, err := Load(context.Background(), path, LoadOptions{Lock: true, InMemory: inMemory, Threads: 2})
		if err != nil {
			if !strings.Contains(err.Error(), "lock") {
				t.Fatalf("in memory %v: %v", inMemory, err)
			}
			t.Logf("locking refused here: %v", err)
			continue
		}
		seq, _ := m.NewSequence(SequenceOptions{})
		if err := seq.Feed(context.Background(), []int32{1, 300, 17}); err != nil {
			t.Fatal(err)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
