package chat

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"

	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/internal/uitest"
	"github.com/churon/churon/ui/core"
	"github.com/churon/churon/ui/markdown"
)

// TestSendStreamRegenerateEdit types a message, sends it with Enter,
// watches the answer stream in as Markdown, then regenerates it and edits
// the question.
func TestSendStreamRegenerateEdit(t *testing.T) {
	h := newHarness(t, uitest.Options{})
	h.Load(uitest.StoriesPath(t))

	h.typeAndSend("Once upon a time")
	if h.composer().entry.Text != "" {
		t.Errorf("the box still holds %q after sending", h.composer().entry.Text)
	}
	if h.Core.Conv == 0 {
		t.Fatal("sending in a new chat made no conversation")
	}
	// The engine can finish a short answer between two polls, so the
	// button is checked whenever the answer is seen still streaming.
	checkStop := func() {
		if h.Core.Generating[h.Core.Conv] && h.composer().send.Text != "Stop" {
			t.Errorf("while answering the button says %q, want Stop", h.composer().send.Text)
		}
	}
	checkStop()
	var sawPartial bool
	h.Wait("tokens to arrive", func() bool {
		v := h.last()
		if v != nil && v.md != nil && v.msg.Content != "" && v.streaming {
			sawPartial = true
			checkStop()
		}
		return v != nil && v.md != nil && v.msg.Content != ""
	})
	h.Wait("the answer to finish", h.Idle)
	if len(h.view().views) != 2 {
		t.Fatalf("%d messages shown, want the question and the answer", len(h.view().views))
	}
	ans := h.last()
	stored, err := h.M.Messages(h.Core.Conv)
	if err != nil {
		t.Fatal(err)
	}
	if ans.msg.Content != stored[1].Content || ans.md.Text() != stored[1].Content {
		t.Fatalf("shown %q, rendered %q, stored %q", ans.msg.Content, ans.md.Text(), stored[1].Content)
	}
	if len(ans.md.Blocks()) == 0 {
		t.Error("the answer rendered no Markdown blocks")
	}
	foot := core.MutedText(ans.footer)
	for _, want := range []string{"tokens", "tok/s", "first token"} {
		if !strings.Contains(foot, want) {
			t.Errorf("footer %q lacks %q", foot, want)
		}
	}
	t.Logf("answer %q; footer %q; saw it mid-stream: %v", ans.msg.Content, foot, sawPartial)
	if h.composer().send.Text != "Send" {
		t.Errorf("after the answer the button says %q", h.composer().send.Text)
	}

	// Copy the answer.
	test.Tap(ans.copyBtn)
	if got := h.A.Clipboard().Content(); got != ans.msg.Content {
		t.Errorf("copied %q, want the answer", got)
	}

	// Regenerate replaces the answer with a new one.
	oldID := ans.msg.ID
	test.Tap(ans.regen)
	h.Wait("the regenerated answer", func() bool {
		v := h.last()
		return v != nil && v.md != nil && v.msg.ID != oldID && v.msg.Content != "" && h.Idle()
	})
	if len(h.view().views) != 2 {
		t.Fatalf("after Regenerate %d messages", len(h.view().views))
	}

	// Edit the question and send it again.
	q := h.view().views[0]
	test.Tap(q.editBtn)
	if q.editor == nil {
		t.Fatal("Edit opened no editor")
	}
	q.editor.SetText("The little dog")
	test.Tap(uitest.FindButton(t, q.body, "Send"))
	h.Wait("the answer to the edited question", func() bool {
		return len(h.view().views) == 2 && h.view().views[0].msg.Content == "The little dog" &&
			h.last().msg.Content != "" && h.Idle()
	})
	stored, _ = h.M.Messages(h.Core.Conv)
	if len(stored) != 2 || stored[0].Content != "The little dog" {
		t.Fatalf("stored after edit: %+v", stored)
	}
}

// TestStop stops a long answer with Escape.
func TestStop(t *testing.T) {
	long := uitest.Quick(0) // no cap: stories260K runs until the context fills
	long.Context = 4096
	h := newHarness(t, uitest.Options{Settings: &long})
	h.Load(uitest.StoriesPath(t))
	h.typeAndSend("Once upon a time")
	// Watch the answer grow over several updates before stopping it.
	seen := map[int]bool{}
	h.Wait("the answer to grow over three updates", func() bool {
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
	if h.composer().send.Text != "Stop" {
		t.Errorf("while answering the button says %q", h.composer().send.Text)
	}
	h.composer().entry.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	h.Wait("the answer to stop", h.Idle)
	v := h.last()
	if v.msg.FinishReason != string(session.ReasonCancelled) {
		t.Fatalf("finish reason %q, want cancelled", v.msg.FinishReason)
	}
	if v.md.Text() != v.msg.Content {
		t.Errorf("after the stop the rendered text %q is not the whole answer %q", v.md.Text(), v.msg.Content)
	}
	if !strings.Contains(core.MutedText(v.footer), "stopped") {
		t.Errorf("footer %q does not say stopped", core.MutedText(v.footer))
	}
	stored, _ := h.M.Messages(h.Core.Conv)
	if got := stored[len(stored)-1]; got.FinishReason != "cancelled" || got.Content != v.msg.Content {
		t.Errorf("stored %q (%s), shown %q", got.Content, got.FinishReason, v.msg.Content)
	}
}

// TestShiftEnterAddsLine: Shift+Enter starts a new line, Enter sends.
func TestShiftEnterAddsLine(t *testing.T) {
	h, e := typingHarness(t)
	test.Type(e, "one")
	e.KeyDown(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	e.KeyUp(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	test.Type(e, "two")
	if e.Text != "one\ntwo" || h.Core.Conv != 0 {
		t.Fatalf("after Shift+Enter: text %q, conversation %d", e.Text, h.Core.Conv)
	}
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if got := h.sent("Enter to send"); got != "one\ntwo" {
		t.Errorf("sent %q", got)
	}
}

// TestEnterWaitsForIMECommit: an input method commits the last syllable
// just after the Return key that ended the composition (seen with IBus and
// ibus-hangul under X11); the message must include it.
func TestEnterWaitsForIMECommit(t *testing.T) {
	h, e := typingHarness(t)
	test.Type(e, "한글 안")
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	e.TypedRune('녕') // the commit, after the key
	if got := h.sent("the message to be sent"); got != "한글 안녕" {
		t.Errorf("sent %q, want the committed syllable included", got)
	}
}

// TestPasteKorean pastes Hangul into the message box.
func TestPasteKorean(t *testing.T) {
	h, e := typingHarness(t)
	h.A.Clipboard().SetContent("안녕하세요, 세계!")
	e.TypedShortcut(&fyne.ShortcutPaste{Clipboard: h.A.Clipboard()})
	if e.Text != "안녕하세요, 세계!" {
		t.Errorf("pasted %q", e.Text)
	}
}

// TestMarkdownAnswerRenders puts a Markdown answer in the store and opens
// the conversation: the chat renders it as blocks.
func TestMarkdownAnswerRenders(t *testing.T) {
	h := newHarness(t, uitest.Options{})
	h.StoredChat("md", session.Message{Role: "user", Content: "show code"},
		session.Message{Role: "assistant", Content: "# Title\n\n- a\n- b\n\n```go\nx := 1\n```\n\n| k | v |\n|---|---|\n| a | 1 |", FinishReason: "eos"})
	h.OpenRow("md")
	v := h.last()
	if v == nil || v.md == nil || len(v.md.Blocks()) != 4 {
		t.Fatalf("answer not rendered as 4 blocks: %+v", v)
	}
	if _, ok := v.md.Blocks()[2].(*markdown.CodeBlock); !ok {
		t.Errorf("third block is %T, want a code block", v.md.Blocks()[2])
	}
}

// TestCacheVisible: each answer's footer says how much of its prompt came
// from the KV cache (also after reopening the chat, from the store), and
// a chat that outgrows its context shows the notice and goes on. (The
// status line's side of it is ui.TestCacheStatusLine, the settings'
// settings.TestCacheSettings.)
func TestCacheVisible(t *testing.T) {
	set := uitest.Quick(8)
	set.Context = 320
	h := newHarness(t, uitest.Options{Settings: &set})
	h.Load(uitest.StoriesPath(t))

	h.typeAndSend("Once upon a time")
	h.Wait("the answer", func() bool { return h.Idle() && len(h.view().views) == 2 && h.last().stats != nil })
	first := h.last()
	if foot := core.MutedText(first.footer); !strings.Contains(foot, fmt.Sprintf("0 reused · %d processed", first.stats.PromptTokens)) {
		t.Errorf("first answer's footer %q", foot)
	}

	h.typeAndSend("The little dog")
	h.Wait("the follow-up", func() bool { return h.Idle() && len(h.view().views) == 4 && h.last().stats != nil })
	st := h.last().stats
	want := fmt.Sprintf("%d reused · %d processed", st.Reused, st.Processed)
	if st.Reused == 0 || !strings.Contains(core.MutedText(h.last().footer), want) {
		t.Errorf("follow-up footer %q, stats %+v", core.MutedText(h.last().footer), st)
	}
	test.Tap(uitest.FindButton(t, h.W.Content(), "New chat"))
	h.OpenRow("Once upon a time")
	if foot := core.MutedText(h.last().footer); !strings.Contains(foot, want) {
		t.Errorf("after reopening, the footer says %q, want %q", foot, want)
	}
	// docs/screenshots/chat-cache.png: the footers and the status line, in
	// the dark theme throughout (see uitest.DarkTheme).
	if os.Getenv("CHURON_SCREENSHOTS") != "" {
		h.A.Settings().SetTheme(uitest.DarkTheme{Theme: core.NewTheme()})
		h.Drain()
		uitest.SaveScreenshot(t, "chat-cache.png", h.W.Canvas().Capture())
		h.A.Settings().SetTheme(core.NewTheme())
	}

	// Outgrow the 320-token context: a notice shows and the chat goes on.
	var notice *messageView
	for i := 0; i < 8 && notice == nil; i++ {
		n := len(h.view().views)
		h.typeAndSend(fmt.Sprintf("Tell me about the %d birds.", i+2))
		h.Wait("the answer", func() bool { return h.Idle() && len(h.view().views) > n+1 && h.last().stats != nil })
		for _, v := range h.view().views {
			if v.msg.Role == "notice" {
				notice = v
			}
		}
		if r := session.Reason(h.last().msg.FinishReason); r == session.ReasonError {
			t.Fatalf("turn %d failed", i+2)
		}
	}
	if notice == nil {
		t.Fatal("no notice after outgrowing the context")
	}
	if got := uitest.Text(notice.obj); !strings.Contains(got, "no longer seen by the model") {
		t.Errorf("notice says %q", got)
	}

}

// TestLongChatOpensAtItsEnd: a chat opened shows its last message (its
// messages are read off Fyne's goroutine, then the column scrolls).
func TestLongChatOpensAtItsEnd(t *testing.T) {
	h := newHarness(t, uitest.Options{})
	var msgs []session.Message
	for i := range 60 {
		role := session.RoleUser
		if i%2 == 1 {
			role = session.RoleAssistant
		}
		msgs = append(msgs, session.Message{Role: role, Content: fmt.Sprintf("message %d\n\nwith a second paragraph", i), FinishReason: "eos"})
	}
	h.StoredChat("long", msgs...)
	h.OpenRow("long")
	v := h.view()
	if len(v.views) != 60 {
		t.Fatalf("%d messages shown", len(v.views))
	}
	if v.scroll.Offset.Y == 0 || !v.atBottom() {
		t.Errorf("the chat opened at offset %v of a %v column in a %v view, not at its end", v.scroll.Offset.Y, v.box.MinSize().Height, v.scroll.Size().Height)
	}
}
