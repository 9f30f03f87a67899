package ui

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/churon/churon/app/store"
	"github.com/churon/churon/internal/uitest"
)

// TestSidebarCostsWhatIsVisible: with 10,000 chats the sidebar reads a
// page of them, holds row widgets for what fits on the screen only, and
// keeps to that while it is scrolled to the very end (every chat then
// read, in order, once) and while it shows search results.
func TestSidebarCostsWhatIsVisible(t *testing.T) {
	const n = 10000
	h := newHarness(t, harnessOptions{})
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	convs := make([]store.ImportConversation, n)
	for i := range convs {
		at := base.Add(time.Duration(i) * time.Minute)
		text := fmt.Sprintf("message of chat %d", i)
		if i%50 == 7 {
			text += ", a needle in it"
		}
		convs[i] = store.ImportConversation{Conversation: store.Conversation{Title: fmt.Sprintf("Chat %05d", i), Created: at, Updated: at},
			Messages: []store.Message{{Role: store.RoleUser, Content: text, Created: at, Updated: at}}}
	}
	if _, err := h.St.Import(context.Background(), convs); err != nil {
		t.Fatal(err)
	}
	u := h.u
	u.side.reload()
	h.Wait("the first rows", func() bool { return len(u.side.rows) > 0 })
	if got := len(u.side.rows); got > 2*pageSize {
		t.Fatalf("the sidebar read %d rows of %d to start", got, n)
	}
	if got := u.side.rows[0].conv.Title; got != "Chat 09999" {
		t.Errorf("top row %q, want the newest chat", got)
	}

	// What fits: the list's height over a row's, and one more row for
	// one cut at each edge.
	rowH := newConvItem(u.side).MinSize().Height
	fits := int(math.Ceil(float64(u.side.list.Size().Height/rowH))) + 2
	if fits < 5 {
		t.Fatalf("the list is %v tall", u.side.list.Size())
	}
	checkWidgets := func(when string) {
		t.Helper()
		items := 0
		uitest.Walk(u.side.list, func(o fyne.CanvasObject) bool {
			if _, ok := o.(*convItem); ok {
				items++
			}
			return true
		})
		if items == 0 || items > fits {
			t.Errorf("%s: %d row widgets, %d rows fit", when, items, fits)
		}
		t.Logf("%s: %d row widgets for %d rows read (%d fit)", when, items, len(u.side.rows), fits)
	}
	checkWidgets("at start")

	// Scrolled to the end, page after page.
	for last := -1; len(u.side.rows) != last; {
		last = len(u.side.rows)
		u.side.list.ScrollToBottom()
		h.Settle()
	}
	if len(u.side.rows) != n {
		t.Fatalf("%d rows after scrolling to the end, want %d", len(u.side.rows), n)
	}
	seen := map[int64]bool{}
	for i, r := range u.side.rows {
		if want := fmt.Sprintf("Chat %05d", n-1-i); r.conv.Title != want || seen[r.conv.ID] {
			t.Fatalf("row %d: %q (seen before: %v), want %q", i, r.conv.Title, seen[r.conv.ID], want)
		}
		seen[r.conv.ID] = true
	}
	checkWidgets("at the end")

	// Search results: a page, two-line rows, the same few widgets.
	test.Type(u.side.search, "needle")
	h.Wait("search results", func() bool { return u.side.query == "needle" && len(u.side.rows) > 0 })
	if got := len(u.side.rows); got > 2*pageSize || u.side.rows[0].msg == 0 {
		t.Errorf("search: %d rows read (of %d matching), the first with message %d", got, n/50, u.side.rows[0].msg)
	}
	fits = int(math.Ceil(float64(u.side.list.Size().Height/rowH))) + 2 // an upper bound: these rows are taller
	checkWidgets("search")
}
