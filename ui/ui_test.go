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
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/session"
	"github.com/churon/churon/models/discover"
	"github.com/churon/churon/ui/fontcheck"
	"github.com/churon/churon/ui/markdown"
)

// TestWelcomeLoadFoundModel starts with no model: the welcome view shows,
// the message box is disabled with a hint, and a GGUF file found in a
// Hugging Face cache layout is offered and loads in place.
func TestWelcomeLoadFoundModel(t *testing.T) {
	stories := storiesPath(t)
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
	if !u.composer.entry.Disabled() || !strings.Contains(u.composer.entry.PlaceHolder, "No model loaded") {
		t.Fatalf("message box: disabled=%v hint %q", u.composer.entry.Disabled(), u.composer.entry.PlaceHolder)
	}
	if !u.composer.send.Disabled() {
		t.Error("Send is enabled with no model")
	}
	h.wait("the found model to be listed", func() bool { return len(u.welcome.found.Objects) == 1 })
	row := text(u.welcome.found)
	for _, want := range []string{"stories260K", "Hugging Face · karpathy/tinyllamas", "[Load]"} {
		if !strings.Contains(row, want) {
			t.Errorf("found row %q lacks %q", row, want)
		}
	}
	test.Tap(findButton(t, u.welcome.found, "Load"))
	h.wait("the model to load", func() bool { return u.model != nil })
	if u.model.Path != filepath.Join(snap, "stories260K.gguf") {
		t.Errorf("loaded %s, want the file where it was found", u.model.Path)
	}
	if u.center.Objects[0] != u.chat.content {
		t.Error("a model is loaded but the welcome view still shows")
	}
	if u.composer.entry.Disabled() {
		t.Error("the message box stays disabled after the model loaded")
	}
	if !strings.Contains(u.chat.emptyTx.Text, "Ask stories260K anything") {
		t.Errorf("empty chat says %q once the model is loaded", u.chat.emptyTx.Text)
	}
	status := u.status.left.Text
	if !strings.Contains(status, "stories260K") || !strings.Contains(status, u.model.Quant) || !strings.Contains(status, "memory") {
		t.Errorf("status line %q lacks the model, its quantization or the memory", status)
	}
	if u.model.Backend != "" && !strings.Contains(status, u.model.Backend) {
		t.Errorf("status line %q lacks the backend %q", status, u.model.Backend)
	}
	if got := u.recentModels(); len(got) != 1 || got[0] != u.model.Path {
		t.Errorf("recent models %v", got)
	}

	// Unload: back to the welcome view and a disabled box.
	u.picker.onUnload()
	h.wait("the model to unload", func() bool { return u.model == nil })
	if !u.composer.entry.Disabled() || u.center.Objects[0] != u.welcome.content {
		t.Errorf("after unloading: box disabled=%v, welcome shown=%v", u.composer.entry.Disabled(), u.center.Objects[0] == u.welcome.content)
	}
	if !strings.Contains(text(u.welcome.recent), "stories260K") {
		t.Errorf("the welcome view does not offer the recent model: %q", text(u.welcome.recent))
	}
}

// TestSendStreamRegenerateEdit types a message, sends it with Enter,
// watches the answer stream in as Markdown, then regenerates it and edits
// the question.
func TestSendStreamRegenerateEdit(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.load(storiesPath(t))
	u := h.u

	h.typeAndSend("Once upon a time")
	if u.composer.entry.Text != "" {
		t.Errorf("the box still holds %q after sending", u.composer.entry.Text)
	}
	if u.conv == 0 {
		t.Fatal("sending in a new chat made no conversation")
	}
	// The engine can finish a short answer between two polls, so the
	// button is checked whenever the answer is seen still streaming.
	checkStop := func() {
		if u.generating[u.conv] && u.composer.send.Text != "Stop" {
			t.Errorf("while answering the button says %q, want Stop", u.composer.send.Text)
		}
	}
	checkStop()
	var sawPartial bool
	h.wait("tokens to arrive", func() bool {
		v := h.last()
		if v != nil && v.md != nil && v.msg.Content != "" && v.streaming {
			sawPartial = true
			checkStop()
		}
		return v != nil && v.md != nil && v.msg.Content != ""
	})
	h.wait("the answer to finish", h.idle)
	if len(u.chat.views) != 2 {
		t.Fatalf("%d messages shown, want the question and the answer", len(u.chat.views))
	}
	ans := h.last()
	stored, err := h.m.Messages(u.conv)
	if err != nil {
		t.Fatal(err)
	}
	if ans.msg.Content != stored[1].Content || ans.md.Text() != stored[1].Content {
		t.Fatalf("shown %q, rendered %q, stored %q", ans.msg.Content, ans.md.Text(), stored[1].Content)
	}
	if len(ans.md.Blocks()) == 0 {
		t.Error("the answer rendered no Markdown blocks")
	}
	foot := mutedText(ans.footer)
	for _, want := range []string{"tokens", "tok/s", "first token"} {
		if !strings.Contains(foot, want) {
			t.Errorf("footer %q lacks %q", foot, want)
		}
	}
	t.Logf("answer %q; footer %q; saw it mid-stream: %v", ans.msg.Content, foot, sawPartial)
	if u.composer.send.Text != "Send" {
		t.Errorf("after the answer the button says %q", u.composer.send.Text)
	}
	if got := h.sidebarTitles(); len(got) != 1 || got[0] != "Once upon a time" {
		t.Errorf("sidebar %v", got)
	}

	// Copy the answer.
	test.Tap(ans.copyBtn)
	if got := h.a.Clipboard().Content(); got != ans.msg.Content {
		t.Errorf("copied %q, want the answer", got)
	}

	// Regenerate replaces the answer with a new one.
	oldID := ans.msg.ID
	test.Tap(ans.regen)
	h.wait("the regenerated answer", func() bool {
		v := h.last()
		return v != nil && v.md != nil && v.msg.ID != oldID && v.msg.Content != "" && h.idle()
	})
	if len(u.chat.views) != 2 {
		t.Fatalf("after Regenerate %d messages", len(u.chat.views))
	}

	// Edit the question and send it again.
	q := u.chat.views[0]
	test.Tap(q.editBtn)
	if q.editor == nil {
		t.Fatal("Edit opened no editor")
	}
	q.editor.SetText("The little dog")
	test.Tap(findButton(t, q.body, "Send"))
	h.wait("the answer to the edited question", func() bool {
		return len(u.chat.views) == 2 && u.chat.views[0].msg.Content == "The little dog" &&
			h.last().msg.Content != "" && h.idle()
	})
	stored, _ = h.m.Messages(u.conv)
	if len(stored) != 2 || stored[0].Content != "The little dog" {
		t.Fatalf("stored after edit: %+v", stored)
	}
}

// TestStop stops a long answer with Escape.
func TestStop(t *testing.T) {
	long := quick(0) // no cap: stories260K runs until the context fills
	long.Context = 4096
	h := newHarness(t, harnessOptions{settings: &long})
	h.load(storiesPath(t))
	h.typeAndSend("Once upon a time")
	// Watch the answer grow over several updates before stopping it.
	seen := map[int]bool{}
	h.wait("the answer to grow over three updates", func() bool {
		v := h.last()
		if v != nil && v.md != nil && v.streaming && v.msg.Content != "" {
			seen[len(v.msg.Content)] = true
			// Rendering may trail the text by one throttle interval.
			if !strings.HasPrefix(v.msg.Content, v.md.Text()) {
				t.Fatalf("rendered %q is not a prefix of the text %q", v.md.Text(), v.msg.Content)
			}
		}
		return len(seen) >= 3
	})
	if h.u.composer.send.Text != "Stop" {
		t.Errorf("while answering the button says %q", h.u.composer.send.Text)
	}
	h.u.composer.entry.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	h.wait("the answer to stop", h.idle)
	v := h.last()
	if v.msg.FinishReason != string(session.ReasonCancelled) {
		t.Fatalf("finish reason %q, want cancelled", v.msg.FinishReason)
	}
	if v.md.Text() != v.msg.Content {
		t.Errorf("after the stop the rendered text %q is not the whole answer %q", v.md.Text(), v.msg.Content)
	}
	if !strings.Contains(mutedText(v.footer), "stopped") {
		t.Errorf("footer %q does not say stopped", mutedText(v.footer))
	}
	stored, _ := h.m.Messages(h.u.conv)
	if got := stored[len(stored)-1]; got.FinishReason != "cancelled" || got.Content != v.msg.Content {
		t.Errorf("stored %q (%s), shown %q", got.Content, got.FinishReason, v.msg.Content)
	}
}

// TestSearchPinDeleteUndo exercises the sidebar over real conversations.
func TestSearchPinDeleteUndo(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.load(storiesPath(t))
	u := h.u
	for _, q := range []string{"The little dog", "Lily and Ben", "호랑이 이야기"} {
		u.onNewChat()
		h.typeAndSend(q)
		h.wait("an answer", func() bool { return h.idle() && h.last() != nil && h.last().msg.Content != "" })
	}
	h.wait("three chats", func() bool { return len(u.side.rows) == 3 })
	if got := h.sidebarTitles(); got[0] != "호랑이 이야기" || got[2] != "The little dog" {
		t.Fatalf("sidebar not newest first: %v", got)
	}

	// Ctrl+F focuses the search box even from the message box.
	h.w.Canvas().Focus(u.composer.entry)
	u.composer.entry.TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyF, Modifier: fyne.KeyModifierShortcutDefault})
	if h.w.Canvas().Focused() != u.side.search {
		t.Fatal("Ctrl+F did not focus the search box")
	}
	test.Type(u.side.search, "dog")
	h.wait("search results", func() bool { return u.side.query == "dog" })
	if got := h.sidebarTitles(); len(got) != 1 || got[0] != "The little dog" {
		t.Errorf("search for dog: %v", got)
	}
	u.side.search.SetText("호랑이")
	h.wait("Korean search results", func() bool { return u.side.query == "호랑이" })
	if got := h.sidebarTitles(); len(got) != 1 || got[0] != "호랑이 이야기" {
		t.Errorf("search for 호랑이: %v", got)
	}
	u.side.search.SetText("")
	h.wait("the full list", func() bool { return len(u.side.rows) == 3 })

	// Pin the oldest: it moves to the top.
	oldest := u.side.rows[2].conv
	u.side.onPin(oldest)
	h.wait("the pinned chat on top", func() bool { return u.side.rows[0].conv.ID == oldest.ID && u.side.rows[0].conv.Pinned })

	// Delete it, then undo.
	u.side.onDelete(u.side.rows[0].conv)
	h.wait("the chat to go", func() bool { return len(u.side.rows) == 2 })
	if !u.side.undo.Visible() {
		t.Fatal("no Undo offered after a delete")
	}
	test.Tap(findButton(t, u.side.undo, "Undo"))
	h.wait("the chat to come back", func() bool { return len(u.side.rows) == 3 })
	if u.conv != oldest.ID || u.side.rows[0].conv.ID != oldest.ID {
		t.Errorf("after Undo: showing %d, top row %d, want %d", u.conv, u.side.rows[0].conv.ID, oldest.ID)
	}

	// Rename through the store path the dialog uses.
	if err := h.m.Rename(oldest.ID, "개 이야기"); err != nil {
		t.Fatal(err)
	}
	h.wait("the new title", func() bool { return u.side.rows[0].conv.Title == "개 이야기" })

	// Ctrl+N opens a new chat.
	u.composer.entry.TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyN, Modifier: fyne.KeyModifierShortcutDefault})
	if u.conv != 0 || len(u.chat.views) != 0 {
		t.Errorf("Ctrl+N: conversation %d with %d messages, want a new empty chat", u.conv, len(u.chat.views))
	}
}

// TestShiftEnterAddsLine: Shift+Enter starts a new line, Enter sends.
func TestShiftEnterAddsLine(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.load(storiesPath(t))
	e := h.u.composer.entry
	h.w.Canvas().Focus(e)
	test.Type(e, "one")
	e.KeyDown(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	e.KeyUp(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	test.Type(e, "two")
	if e.Text != "one\ntwo" || h.u.conv != 0 {
		t.Fatalf("after Shift+Enter: text %q, conversation %d", e.Text, h.u.conv)
	}
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	h.wait("Enter to send", func() bool { return h.u.conv != 0 && e.Text == "" })
	h.wait("the answer", func() bool { return h.idle() && len(h.u.chat.views) == 2 })
	if got := h.u.chat.views[0].msg.Content; got != "one\ntwo" {
		t.Errorf("sent %q", got)
	}
}

// TestEnterWaitsForIMECommit: an input method commits the last syllable
// just after the Return key that ended the composition (seen with IBus and
// ibus-hangul under X11); the message must include it.
func TestEnterWaitsForIMECommit(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.load(storiesPath(t))
	e := h.u.composer.entry
	h.w.Canvas().Focus(e)
	test.Type(e, "한글 안")
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	e.TypedRune('녕') // the commit, after the key
	h.wait("the message to be sent", func() bool { return h.u.conv != 0 && e.Text == "" })
	h.wait("the answer", func() bool { return h.idle() && len(h.u.chat.views) == 2 })
	if got := h.u.chat.views[0].msg.Content; got != "한글 안녕" {
		t.Errorf("sent %q, want the committed syllable included", got)
	}
}

// TestPasteKorean pastes Hangul into the message box.
func TestPasteKorean(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.load(storiesPath(t))
	e := h.u.composer.entry
	h.w.Canvas().Focus(e)
	h.a.Clipboard().SetContent("안녕하세요, 세계!")
	e.TypedShortcut(&fyne.ShortcutPaste{Clipboard: h.a.Clipboard()})
	if e.Text != "안녕하세요, 세계!" {
		t.Errorf("pasted %q", e.Text)
	}
}

// TestKoreanUI switches the language and checks the rebuilt window, and
// the notice shown when no font covers Hangul.
func TestKoreanUI(t *testing.T) {
	h := newHarness(t, harnessOptions{fontCheck: func() (fontcheck.Result, error) {
		return fontcheck.Result{Missing: []rune("한")}, nil
	}})
	h.wait("the font check", func() bool { return h.u.hangul != nil })
	if len(h.u.notice.Objects) != 0 {
		t.Fatal("Hangul notice shown with an English UI and no Korean text")
	}
	h.u.setLanguage("ko")
	t.Cleanup(func() { h.u.setLanguage("en") })
	if got := h.u.side.newChat.Text; got != "새 대화" {
		t.Errorf("New chat button in Korean: %q", got)
	}
	if got, _ := h.u.setting(settingLanguage); got != "ko" {
		t.Errorf("language setting %q", got)
	}
	if !strings.Contains(h.u.composer.entry.PlaceHolder, "GGUF") || strings.Contains(h.u.composer.entry.PlaceHolder, "No model") {
		t.Errorf("composer hint not Korean: %q", h.u.composer.entry.PlaceHolder)
	}
}

// TestKoreanWithoutFont: a Korean UI on a system with no Hangul font falls
// back to English and says how to install one, in English.
func TestKoreanWithoutFont(t *testing.T) {
	release := make(chan struct{})
	h := newHarness(t, harnessOptions{fontCheck: func() (fontcheck.Result, error) {
		<-release // answer after the window was built in Korean
		return fontcheck.Result{Missing: []rune("한")}, nil
	}})
	h.u.setLanguage("ko")
	t.Cleanup(func() { h.u.setLanguage("en") })
	if got := h.u.side.newChat.Text; got != "새 대화" {
		t.Fatalf("New chat button in Korean: %q", got)
	}
	close(release)
	h.wait("the font check", func() bool { return h.u.hangul != nil })
	if got := h.u.side.newChat.Text; got != "New chat" {
		t.Errorf("without a Hangul font the UI stays Korean: %q", got)
	}
	if n := text(h.u.notice); !strings.Contains(n, "sudo apt install fonts-noto-cjk") || !strings.Contains(n, "Korean") {
		t.Errorf("notice %q", n)
	}
	if got, _ := h.u.setting(settingLanguage); got != "ko" {
		t.Errorf("the fallback changed the saved language to %q", got)
	}
}

// TestHangulNoticeFromText: English UI, but Korean text appears.
func TestHangulNoticeFromText(t *testing.T) {
	h := newHarness(t, harnessOptions{fontCheck: func() (fontcheck.Result, error) {
		return fontcheck.Result{Missing: []rune("한")}, nil
	}})
	h.wait("the font check", func() bool { return h.u.hangul != nil })
	h.load(storiesPath(t))
	test.Type(h.u.composer.entry, "한")
	if !strings.Contains(text(h.u.notice), "fonts-nanum") {
		t.Errorf("typing Hangul without a font shows no notice: %q", text(h.u.notice))
	}
}

// TestSettingsPresetsApply sets a preset and a system prompt for a new chat
// and checks the conversation gets them when its first message is sent.
func TestSettingsPresetsApply(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.load(storiesPath(t))
	p := newSettingsPanel(h.u)
	p.preset.SetSelected("Precise")
	if p.temp.Text != "0.2" || p.topK.Text != "20" {
		t.Fatalf("Precise preset: temperature %q top-k %q", p.temp.Text, p.topK.Text)
	}
	p.system.SetText("You tell short stories.")
	p.maxTokens.SetText("8")
	p.onSave()
	if h.u.pendingSettings == nil {
		t.Fatal("settings of a new chat were not kept")
	}
	h.typeAndSend("Once upon a time")
	h.wait("the answer", func() bool { return h.idle() && len(h.u.chat.views) == 2 })
	got, err := h.m.Settings(h.u.conv)
	if err != nil {
		t.Fatal(err)
	}
	if got.SystemPrompt != "You tell short stories." || got.Temperature != 0.2 || got.MaxTokens != 8 {
		t.Errorf("stored settings %+v", got)
	}
	bad := newSettingsPanel(h.u)
	bad.topP.SetText("two")
	if _, err := bad.values(); err == nil {
		t.Error("top-p \"two\" accepted")
	}
	bad.topP.SetText("1.5")
	if _, err := bad.values(); err == nil {
		t.Error("top-p 1.5 accepted")
	}
}

// TestMarkdownAnswerRenders puts a Markdown answer in the store and opens
// the conversation: the chat renders it as blocks.
func TestMarkdownAnswerRenders(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := context.Background()
	c, err := h.m.NewConversation("md")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.st.AddMessage(ctx, session.Message{ConversationID: c.ID, Role: "user", Content: "show code"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.st.AddMessage(ctx, session.Message{ConversationID: c.ID, Role: "assistant",
		Content: "# Title\n\n- a\n- b\n\n```go\nx := 1\n```\n\n| k | v |\n|---|---|\n| a | 1 |", FinishReason: "eos"}); err != nil {
		t.Fatal(err)
	}
	h.u.openConversation(c.ID)
	v := h.last()
	if v == nil || v.md == nil || len(v.md.Blocks()) != 4 {
		t.Fatalf("answer not rendered as 4 blocks: %+v", v)
	}
	if _, ok := v.md.Blocks()[2].(*markdown.CodeBlock); !ok {
		t.Errorf("third block is %T, want a code block", v.md.Blocks()[2])
	}
}

func findButton(t *testing.T, o fyne.CanvasObject, label string) *widget.Button {
	t.Helper()
	var found *widget.Button
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		if found != nil {
			return
		}
		switch o := o.(type) {
		case *widget.Button:
			if o.Text == label {
				found = o
			}
		case *fyne.Container:
			for _, c := range o.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(o).Objects() {
				walk(c)
			}
		}
	}
	walk(o)
	if found == nil {
		t.Fatalf("no %q button in %s", label, text(o))
	}
	return found
}
