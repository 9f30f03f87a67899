package outbox

import (
	"slices"
	"testing"
)

// TestBoxKeepsOrderAndMerges: with no reader, pushes queue in order,
// merge where the hook says, and the channel closes after the last one.
func TestBoxKeepsOrderAndMerges(t *testing.T) {
	b := New(Hooks[int]{Merge: func(last, next int) bool { return last == next }})
	for _, v := range []int{1, 1, 2, 3, 3, 3, 1} {
		b.Push(v)
	}
	b.Close()
	b.Push(9) // after Close: dropped
	var got []int
	for v := range b.Out() {
		got = append(got, v)
	}
	// The pump may take the first 1 before the second arrives.
	want, wantSplit := []int{1, 2, 3, 1}, []int{1, 1, 2, 3, 1}
	if !slices.Equal(got, want) && !slices.Equal(got, wantSplit) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestWorkerRunsInOrder: queued work runs in order; Sync waits for it;
// Close runs what is left.
func TestWorkerRunsInOrder(t *testing.T) {
	w := NewWorker()
	var got []int
	for i := range 100 {
		w.Queue(func() { got = append(got, i) })
	}
	w.Sync()
	if len(got) != 100 {
		t.Fatalf("after Sync %d of 100 ran", len(got))
	}
	w.Queue(func() { got = append(got, 100) })
	w.Close()
	for i, v := range got {
		if v != i {
			t.Fatalf("ran out of order: %v", got)
		}
	}
	if len(got) != 101 {
		t.Fatalf("Close left work undone: %d ran", len(got))
	}
}
