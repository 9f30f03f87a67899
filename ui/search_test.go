package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"

	"github.com/churon/churon/app/store"
	"github.com/churon/churon/internal/uitest"
)

// TestSearchOpensTheMatch clicks a search result in a long chat: the chat
// opens scrolled to the message that matched, not to its end, with the
// match marked; a match in an earlier version of a message brings that
// version up.
func TestSearchOpensTheMatch(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := context.Background()
	var msgs []store.Message
	for i := range 40 {
		role, text := store.RoleUser, fmt.Sprintf("Question %d about the weather today.", i)
		if i%2 == 1 {
			role, text = store.RoleAssistant, fmt.Sprintf("Answer %d: it is **sunny**, as\n\nit was yesterday.", i)
		}
		if i == 5 {
			text = "Answer 5: the Zebra crossed the road."
		}
		msgs = append(msgs, store.Message{Role: role, Content: text})
	}
	conv, stored := h.StoredChat("long chat", msgs...)
	target, old := stored[5], stored[8]
	// An earlier version of question 8, not shown.
	if _, err := h.St.AddVersion(ctx, old.ID, store.Message{ConversationID: conv, Role: store.RoleUser, Content: "What does a giraffe eat?"}); err != nil {
		t.Fatal(err)
	}
	if err := h.St.SelectMessage(ctx, old.ID); err != nil {
		t.Fatal(err)
	}
	u := h.u
	u.side.reload()
	h.Settle()

	scroll, ok := uitest.Find[*container.Scroll](u.chat.Content(), nil)
	if !ok {
		t.Fatal("the chat has no scrolled column")
	}
	open := func(query string, notEnd bool, want func(id int64) bool) {
		t.Helper()
		u.side.search.SetText(query)
		h.Wait("the search "+query, func() bool { return u.side.query == query && len(u.side.rows) == 1 && u.side.rows[0].msg != 0 })
		h.Settle()
		item := findConvItem(h.W.Canvas().Content(), conv)
		if item == nil {
			t.Fatal("no row for the hit")
		}
		test.Tap(fyne.CanvasObject(item).(fyne.Tappable))
		h.Wait("the match to be shown", func() bool {
			id, _, _ := u.chat.Highlighted()
			return u.w.Conv == conv && want(id)
		})
		_, marked, top := u.chat.Highlighted()
		if len(marked) == 0 || !strings.EqualFold(marked[0], query) {
			t.Fatalf("marked %q, want %q", marked, query)
		}
		off, height := scroll.Offset.Y, scroll.Size().Height
		if top < off || top >= off+height {
			t.Fatalf("the match starts at %v, the view shows %v to %v", top, off, off+height)
		}
		if notEnd && off+height >= scroll.Content.MinSize().Height-1 {
			t.Fatalf("the chat is scrolled to its end (%v of %v), not to the match", off+height, scroll.Content.MinSize().Height)
		}
	}
	open("zebra", true, func(id int64) bool { return id == target.ID })
	open("giraffe", false, func(id int64) bool {
		ms, _ := h.M.Messages(conv)
		return id != 0 && id != old.ID && len(ms) == 9 && ms[8].Content == "What does a giraffe eat?"
	})
}
