package storetest

import (
	"context"
	"testing"

	"github.com/churon/churon/app/store"
)

// TestTemp: each store is empty, separate from the others, and usable
// until the test ends.
func TestTemp(t *testing.T) {
	ctx := context.Background()
	a, b := Temp(t), Temp(t)
	if _, err := a.CreateConversation(ctx, store.Conversation{Title: "a"}); err != nil {
		t.Fatal(err)
	}
	for name, st := range map[string]*store.Store{"a": a, "b": b} {
		list, err := st.ListConversations(ctx, store.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"a": 1, "b": 0}[name]; len(list) != want {
			t.Errorf("store %s: %d conversations, want %d", name, len(list), want)
		}
	}
}
