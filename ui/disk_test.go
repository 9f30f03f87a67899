package ui

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/churon/churon/app/export"
	"github.com/churon/churon/app/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/internal/uitest"
)

// longChatExport is a JSON export of one chat of n messages, made in a
// library of its own (so that importing it adds a conversation).
func longChatExport(t *testing.T, n int) []byte {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "other.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ic := store.ImportConversation{Conversation: store.Conversation{Title: "A very long chat", Created: time.Unix(1_700_000_000, 0)}}
	for i := range n {
		role := store.RoleUser
		if i%2 == 1 {
			role = store.RoleAssistant
		}
		ic.Messages = append(ic.Messages, store.Message{Role: role, Content: fmt.Sprintf("Message %d: 김치찌개 **recipe**, step %d.", i, i),
			Created: time.Unix(1_700_000_000+int64(i), 0)})
	}
	res, err := st.Import(ctx, []store.ImportConversation{ic})
	if err != nil {
		t.Fatal(err)
	}
	m := session.New(st, session.Options{})
	defer m.Close()
	chats, err := m.Export(ctx, []int64{res.Conversations[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := export.WriteJSON(&b, chats, export.Options{}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestWindowNeverWaitsOnTheDisk: with the database's write lock held by
// another process — a disk that has stopped answering — the person sends
// a message in a new chat, pins a chat, imports a 2,000-message chat,
// opens another chat and types: every action returns at once, the chat
// opened shows its messages (reading is not held up by the stuck write)
// and nothing claims to be saved yet; the window goes on drawing. Once
// the disk answers, all of it lands: the message is stored and answered,
// the pin and the import are there. The longest the window's goroutine
// was held is logged, not asserted (the machines are shared).
func TestWindowNeverWaitsOnTheDisk(t *testing.T) {
	doc := longChatExport(t, 2000)
	h := newHarness(t, harnessOptions{})
	u := h.u
	h.Load(uitest.StoriesPath(t))
	older := h.addStoredChat("Older chat", "How?", "Like this.")

	// Another process takes the write lock and does not let go. It waits
	// for the lock as the app's own connections do: the app may be
	// writing at this moment (the sidebar, the model just loaded), and a
	// connection without a busy timeout fails at once with SQLITE_BUSY.
	ctx := context.Background()
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Opaque: h.St.Path(),
		RawQuery: url.Values{"_busy_timeout": {fmt.Sprint(store.BusyTimeout.Milliseconds())}}.Encode()}).String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lock, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	locked := time.Now()
	released := false
	release := func() {
		if !released {
			released = true
			if _, err := lock.ExecContext(ctx, "ROLLBACK"); err != nil {
				t.Error(err)
			}
			lock.Close()
		}
	}
	defer release()

	// Each action, and what it posts, is one "frame" of the window's
	// goroutine.
	var longest time.Duration
	frame := func(act func()) {
		start := time.Now()
		act()
		h.Drain()
		longest = max(longest, time.Since(start))
	}
	frame(u.onNewChat)
	frame(func() { u.send("Once upon a time") })
	frame(func() { u.side.onPin(store.Conversation{ID: older, Title: "Older chat"}) })
	frame(func() { u.importAsync(io.NopCloser(bytes.NewReader(doc)), "long.json") })
	frame(func() { u.openConversation(older) })
	frame(func() { test.Type(u.composer.Entry(), "still typing") })

	// The chat opened shows its messages while the write is stuck; every
	// update the window applies meanwhile is a frame too.
	deadline := time.Now().Add(uitest.WaitLimit)
	for h.shownMessages() != 2 {
		if time.Now().After(deadline) {
			t.Fatal("the chat opened never showed its messages")
		}
		frame(func() {})
		time.Sleep(2 * time.Millisecond)
	}
	if got := u.composer.Entry().Text; got != "still typing" {
		t.Errorf("the message box holds %q", got)
	}
	// Nothing was written, and nothing says it failed: it waits.
	if n := len(u.w.Notice.Objects); n != 0 {
		t.Errorf("%d banners while the disk hangs: %s", n, uitest.Text(u.w.Notice))
	}
	if convs, err := h.St.ListConversations(ctx, store.ListOptions{}); err != nil || len(convs) != 1 {
		t.Errorf("while locked the library holds %d chats (%v), want the older one only", len(convs), err)
	}
	// The window goes on drawing for a second of the hang.
	frames := 0
	for start := time.Now(); time.Since(start) < time.Second; frames++ {
		frame(func() {})
		time.Sleep(time.Second / 60)
	}
	held := time.Since(locked)
	if held >= store.BusyTimeout {
		t.Fatalf("the checks took %v, longer than a write waits for the lock (%v): the test proves nothing", held, store.BusyTimeout)
	}
	release()
	t.Logf("the window's goroutine was held %v at the longest while the disk hung for %v (%d frames in its last second)", longest, held, frames)

	sent := func() (string, bool) {
		convs, _ := h.St.ListConversations(ctx, store.ListOptions{})
		var seen []string
		for _, c := range convs {
			ms, _ := h.M.Messages(c.ID)
			seen = append(seen, fmt.Sprintf("%q: %d messages", c.Title, len(ms)))
			if c.Title == "Once upon a time" {
				return strings.Join(seen, ", "), len(ms) == 2 && ms[1].Content != "" && ms[1].FinishReason != ""
			}
		}
		return strings.Join(seen, ", "), false
	}
	for deadline := time.Now().Add(uitest.WaitLimit); ; {
		h.Drain()
		seen, ok := sent()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the message was never stored and answered: %s; the window says %q", seen, uitest.Text(u.w.Notice))
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The sidebar may show the imported chat before the import's own
	// report lands (another reload, for the answer, reads it first): wait
	// for both.
	h.Wait("the pin and the import", func() bool {
		titles := h.sidebarTitles()
		return len(titles) == 3 && titles[0] == "Older chat" && strings.Contains(strings.Join(titles, "|"), "A very long chat") &&
			strings.Contains(uitest.Text(u.w.Notice), "Imported 1 chats")
	})
	if got := uitest.Text(u.w.Notice); !strings.Contains(got, "Imported 1 chats") || strings.Contains(got, "locked") {
		t.Errorf("once the disk answered the window says: %s", got)
	}
}
