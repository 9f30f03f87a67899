package ui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"

	"github.com/churon/churon/internal/uitest"
	"github.com/churon/churon/models/discover"
	"github.com/churon/churon/ui/core"
)

// TestWelcomeLoadFoundModel starts with no model: the welcome view shows,
// the message box is disabled with a hint, and a GGUF file found in a
// Hugging Face cache layout is offered and loads in place.
func TestWelcomeLoadFoundModel(t *testing.T) {
	stories := uitest.StoriesPath(t)
	hub := filepath.Join(t.TempDir(), "hub")
	snap := filepath.Join(hub, "models--karpathy--tinyllamas", "snapshots", "abc123")
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(stories, filepath.Join(snap, "stories260K.gguf")); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
	h := newHarness(t, harnessOptions{discover: func(ctx context.Context) ([]discover.Model, error) {
		return discover.Find(ctx, []discover.Location{{Dir: hub, Source: discover.HuggingFace}})
	}})
	u := h.u
	if u.center.Objects[0] != u.welcome.content {
		t.Fatal("no model and no chat: the welcome view is not shown")
	}
	if !u.composer.Entry().Disabled() || !strings.Contains(u.composer.Entry().PlaceHolder, "No model loaded") {
		t.Fatalf("message box: disabled=%v hint %q", u.composer.Entry().Disabled(), u.composer.Entry().PlaceHolder)
	}
	if !uitest.FindButton(t, u.composer.Content(), "Send").Disabled() {
		t.Error("Send is enabled with no model")
	}
	h.Wait("the found model to be listed", func() bool { return len(u.welcome.found.Objects) == 1 })
	row := uitest.Text(u.welcome.found)
	for _, want := range []string{"stories260K", "Hugging Face · karpathy/tinyllamas", "[Load]"} {
		if !strings.Contains(row, want) {
			t.Errorf("found row %q lacks %q", row, want)
		}
	}
	test.Tap(uitest.FindButton(t, u.welcome.found, "Load"))
	h.Wait("the model to load", func() bool { return u.w.Model != nil })
	if u.w.Model.Path != filepath.Join(snap, "stories260K.gguf") {
		t.Errorf("loaded %s, want the file where it was found", u.w.Model.Path)
	}
	if u.center.Objects[0] != u.chat.Content() {
		t.Error("a model is loaded but the welcome view still shows")
	}
	if u.composer.Entry().Disabled() {
		t.Error("the message box stays disabled after the model loaded")
	}
	if empty := uitest.Text(u.chat.Content()); !strings.Contains(empty, "Ask stories260K anything") {
		t.Errorf("empty chat says %q once the model is loaded", empty)
	}
	status := u.status.left.Text
	if !strings.Contains(status, "stories260K") || !strings.Contains(status, u.w.Model.Quant) || !strings.Contains(status, "memory") {
		t.Errorf("status line %q lacks the model, its quantization or the memory", status)
	}
	if u.w.Model.Backend != "" && !strings.Contains(status, u.w.Model.Backend) {
		t.Errorf("status line %q lacks the backend %q", status, u.w.Model.Backend)
	}
	if got := u.recentModels(); len(got) != 1 || got[0] != u.w.Model.Path {
		t.Errorf("recent models %v", got)
	}

	// Unload: back to the welcome view and a disabled box.
	u.picker.onUnload()
	h.Wait("the model to unload", func() bool { return u.w.Model == nil })
	if !u.composer.Entry().Disabled() || u.center.Objects[0] != u.welcome.content {
		t.Errorf("after unloading: box disabled=%v, welcome shown=%v", u.composer.Entry().Disabled(), u.center.Objects[0] == u.welcome.content)
	}
	if !strings.Contains(uitest.Text(u.welcome.recent), "stories260K") {
		t.Errorf("the welcome view does not offer the recent model: %q", uitest.Text(u.welcome.recent))
	}
}

// TestSearchPinDeleteUndo exercises the sidebar over real conversations.
func TestSearchPinDeleteUndo(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.Load(uitest.StoriesPath(t))
	u := h.u
	for _, q := range []string{"The little dog", "Lily and Ben", "호랑이 이야기"} {
		u.onNewChat()
		h.typeAndSend(q)
		h.Wait("an answer", h.answered)
	}
	h.Wait("three chats", func() bool { return len(u.side.rows) == 3 })
	if got := h.sidebarTitles(); got[0] != "호랑이 이야기" || got[2] != "The little dog" {
		t.Fatalf("sidebar not newest first: %v", got)
	}

	// Ctrl+F focuses the search box even from the message box.
	h.W.Canvas().Focus(u.composer.Entry())
	u.composer.Entry().TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyF, Modifier: fyne.KeyModifierShortcutDefault})
	if h.W.Canvas().Focused() != u.side.search {
		t.Fatal("Ctrl+F did not focus the search box")
	}
	test.Type(u.side.search, "dog")
	h.Wait("search results", func() bool { return u.side.query == "dog" })
	h.Settle() // the list is read off Fyne's goroutine
	if got := h.sidebarTitles(); len(got) != 1 || got[0] != "The little dog" {
		t.Errorf("search for dog: %v", got)
	}
	u.side.search.SetText("호랑이")
	h.Wait("Korean search results", func() bool { return u.side.query == "호랑이" })
	h.Settle()
	if got := h.sidebarTitles(); len(got) != 1 || got[0] != "호랑이 이야기" {
		t.Errorf("search for 호랑이: %v", got)
	}
	u.side.search.SetText("")
	h.Wait("the full list", func() bool { return len(u.side.rows) == 3 })

	// Pin the oldest: it moves to the top.
	oldest := u.side.rows[2].conv
	u.side.onPin(oldest)
	h.Wait("the pinned chat on top", func() bool { return u.side.rows[0].conv.ID == oldest.ID && u.side.rows[0].conv.Pinned })

	// Delete it, then undo.
	u.side.onDelete(u.side.rows[0].conv)
	h.Wait("the chat to go", func() bool { return len(u.side.rows) == 2 })
	if !u.side.undo.Visible() {
		t.Fatal("no Undo offered after a delete")
	}
	test.Tap(uitest.FindButton(t, u.side.undo, "Undo"))
	h.Wait("the chat to come back", func() bool { return len(u.side.rows) == 3 })
	if u.w.Conv != oldest.ID || u.side.rows[0].conv.ID != oldest.ID {
		t.Errorf("after Undo: showing %d, top row %d, want %d", u.w.Conv, u.side.rows[0].conv.ID, oldest.ID)
	}

	// Rename through the store path the dialog uses.
	if err := h.M.Rename(oldest.ID, "개 이야기"); err != nil {
		t.Fatal(err)
	}
	h.Wait("the new title", func() bool { return u.side.rows[0].conv.Title == "개 이야기" })

	// Ctrl+N opens a new chat.
	u.composer.Entry().TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyN, Modifier: fyne.KeyModifierShortcutDefault})
	if u.w.Conv != 0 || h.shownMessages() != 0 {
		t.Errorf("Ctrl+N: conversation %d with %d messages, want a new empty chat", u.w.Conv, h.shownMessages())
	}
}

// TestKoreanUI switches the language and checks the rebuilt window. (That
// its Hangul is drawn, whatever fonts the system has: core.TestHangulFaces.)
func TestKoreanUI(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.u.setLanguage("ko")
	t.Cleanup(func() { h.u.setLanguage("en") })
	if got := h.u.side.newChat.Text; got != "새 대화" {
		t.Errorf("New chat button in Korean: %q", got)
	}
	if got, _ := h.u.w.Setting(core.SettingLanguage); got != "ko" {
		t.Errorf("language setting %q", got)
	}
	if !strings.Contains(h.u.composer.Entry().PlaceHolder, "GGUF") || strings.Contains(h.u.composer.Entry().PlaceHolder, "No model") {
		t.Errorf("composer hint not Korean: %q", h.u.composer.Entry().PlaceHolder)
	}
}

// TestNewChatTakesItsTitle: a new chat is listed in the sidebar under its
// first message. (The chat's side of sending is chat.TestSendStreamRegenerateEdit.)
func TestNewChatTakesItsTitle(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.Load(uitest.StoriesPath(t))
	h.typeAndSend("Once upon a time")
	h.Wait("the answer to finish", h.Idle)
	if got := h.sidebarTitles(); len(got) != 1 || got[0] != "Once upon a time" {
		t.Errorf("sidebar %v", got)
	}
}

// TestCacheStatusLine: the status line says where the open chat's KV
// cache is, once an answer was given and after reopening the chat. (The
// footers' side of it is chat.TestCacheVisible.)
func TestCacheStatusLine(t *testing.T) {
	set := uitest.Quick(8)
	set.Context = 320
	h := newHarness(t, harnessOptions{settings: &set})
	h.Load(uitest.StoriesPath(t))
	u := h.u

	h.typeAndSend("Once upon a time")
	h.Wait("the answer", func() bool { return h.Idle() && h.Stored(u.w.Conv) == 2 })
	h.Wait("the cache state", func() bool { return strings.Contains(u.status.left.Text, "tokens in memory") })

	h.typeAndSend("The little dog")
	h.Wait("the follow-up", func() bool { return h.Idle() && h.Stored(u.w.Conv) == 4 })
	conv := u.w.Conv
	u.openConversation(0)
	u.openConversation(conv)
	// The chat's messages, then where its cache is, are asked off Fyne's
	// goroutine.
	h.Wait("the status line to say where the cache is", func() bool { return strings.Contains(u.status.left.Text, "cache: ") })
}
