package ui

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/churon/churon/internal/uitest"
)

// TestClickingARowOpensIt taps a conversation row the way the desktop
// driver does. The driver sends a click to the topmost object that takes
// taps or right taps; a row that only took right taps (for its menu)
// swallowed left clicks, so a person could not open a conversation.
func TestClickingARowOpensIt(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	var ids []int64
	for _, title := range []string{"first", "second"} {
		id, _ := h.StoredChat(title)
		ids = append(ids, id)
	}
	h.u.side.reload()
	h.u.openConversation(0)
	h.Settle() // the list is read off Fyne's goroutine
	for _, id := range ids {
		item := findConvItem(h.W.Canvas().Content(), id)
		if item == nil {
			t.Fatalf("no row for conversation %d", id)
		}
		tappable, ok := fyne.CanvasObject(item).(fyne.Tappable)
		if !ok {
			t.Fatal("a conversation row takes right taps but not taps: the driver would deliver clicks to it and drop them")
		}
		test.Tap(tappable)
		h.Drain()
		if h.u.w.Conv != id {
			t.Errorf("after clicking conversation %d the window shows %d", id, h.u.w.Conv)
		}
	}
}

func findConvItem(o fyne.CanvasObject, id int64) *convItem {
	it, _ := uitest.Find(o, func(it *convItem) bool { return it.row.conv.ID == id && it.Visible() })
	return it
}
