package chat

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/churon/churon/app/store"
	"github.com/churon/churon/internal/uitest"
)

// TestRegenerateAfterNotice clicks Regenerate on the answer that follows
// an overflow notice: a new answer comes, and no error.
func TestRegenerateAfterNotice(t *testing.T) {
	set := uitest.Quick(8)
	set.Context = 320
	set.SystemPrompt = "Stories."
	h := newHarness(t, uitest.Options{Settings: &set})
	h.Load(uitest.StoriesPath(t))
	notice := func() bool {
		v := h.view().views
		return len(v) >= 3 && v[len(v)-2].msg.Role == "notice"
	}
	for i := 0; !notice(); i++ {
		if i == 12 {
			t.Fatal("no overflow notice after 12 turns")
		}
		n := len(h.view().views)
		h.typeAndSend(fmt.Sprintf("Tell me about the %d little birds.", i+1))
		h.Wait("the answer", func() bool {
			l := h.last()
			return h.Idle() && len(h.view().views) > n && l.msg.Role == "assistant" && !l.streaming
		})
	}
	ans := h.last()
	old := ans.msg.ID
	test.Tap(ans.regen)
	h.Wait("the regenerated answer", func() bool {
		l := h.last()
		return h.Idle() && l != nil && l.msg.ID != old && l.msg.Role == "assistant" && l.msg.Content != "" && !l.streaming
	})
	if got := uitest.Text(h.Core.Notice); strings.Contains(got, "no user message") || got != "" {
		t.Fatalf("the window says %q", got)
	}
	v := h.view().views
	if v[len(v)-2].msg.Role != "notice" || v[len(v)-3].msg.Role != "user" {
		t.Fatalf("after regenerating: %s, %s, %s", v[len(v)-3].msg.Role, v[len(v)-2].msg.Role, v[len(v)-1].msg.Role)
	}
	if l := h.last(); l.verLabel == nil || l.verLabel.Text != "2/2" {
		t.Fatalf("the regenerated answer has no 2/2 switcher")
	}
}

// TestVersionSwitcher edits the first question of a two-turn chat, then
// switches back with the switcher: the first version comes back with both
// of its turns, and forward again shows the edit and its answer alone.
func TestVersionSwitcher(t *testing.T) {
	h := newHarness(t, uitest.Options{})
	h.Load(uitest.StoriesPath(t))
	h.typeAndSend("Once upon a time")
	h.sent("the first question")
	h.typeAndSend("The little dog")
	h.Wait("the second answer", func() bool { return h.Idle() && len(h.view().views) == 4 && !h.last().streaming })
	first := h.view().views[1].msg.Content
	if h.view().views[0].verLabel != nil {
		t.Fatal("a message with one version shows a switcher")
	}

	q := h.view().views[0]
	test.Tap(q.editBtn)
	q.editor.SetText("Lily and Ben")
	test.Tap(uitest.FindButton(t, q.body, "Send"))
	h.Wait("the answer to the edit", func() bool {
		v := h.view().views
		return h.Idle() && len(v) == 2 && v[0].msg.Content == "Lily and Ben" && v[1].msg.Content != "" && !v[1].streaming
	})
	q = h.view().views[0]
	if q.verLabel == nil || q.verLabel.Text != "2/2" {
		t.Fatal("the edited question shows no 2/2")
	}
	if !q.nextVer.Disabled() || q.prevVer.Disabled() {
		t.Fatalf("at the last version: back disabled %v, forward disabled %v", q.prevVer.Disabled(), q.nextVer.Disabled())
	}

	test.Tap(q.prevVer)
	h.Wait("version 1", func() bool {
		v := h.view().views
		return len(v) == 4 && v[0].msg.Content == "Once upon a time"
	})
	v := h.view().views
	if v[0].verLabel.Text != "1/2" || v[1].msg.Content != first || v[2].msg.Content != "The little dog" {
		t.Fatalf("version 1 shows %q, %q, %q", v[0].verLabel.Text, v[1].msg.Content, v[2].msg.Content)
	}
	if !v[0].prevVer.Disabled() || v[0].nextVer.Disabled() {
		t.Fatal("at the first version the switcher should go forward only")
	}

	test.Tap(v[0].nextVer)
	h.Wait("version 2", func() bool {
		v := h.view().views
		return len(v) == 2 && v[0].msg.Content == "Lily and Ben" && v[0].verLabel.Text == "2/2"
	})
}

// TestNoticeVersions: a notice written again for a regenerated answer
// that left out more is a version of the first, and the chat offers both.
func TestNoticeVersions(t *testing.T) {
	h := newHarness(t, uitest.Options{})
	conv, ms := h.StoredChat("notices", store.Message{Role: store.RoleUser, Content: "question"},
		store.Message{Role: store.RoleNotice, Content: "first notice"},
		store.Message{Role: store.RoleAssistant, Content: "first answer"})
	if _, err := h.St.AddVersion(context.Background(), ms[1].ID, store.Message{ConversationID: conv, Role: store.RoleNotice, Content: "second notice"}); err != nil {
		t.Fatal(err)
	}
	h.AddMessage(conv, store.Message{Role: store.RoleAssistant, Content: "second answer"})
	h.Core.Conv = conv // as opening it from the sidebar does
	h.view().Show(conv)
	h.Wait("the chat", func() bool { return len(h.view().views) == 3 })
	n := h.view().views[1]
	if n.verLabel == nil || n.verLabel.Text != "2/2" {
		t.Fatal("the second notice offers no switcher")
	}
	test.Tap(n.prevVer)
	h.Wait("the first notice's answer", func() bool {
		v := h.view().views
		return len(v) == 3 && v[2].msg.Content == "first answer" && v[1].verLabel.Text == "1/2"
	})
}
