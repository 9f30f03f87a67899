package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/app/session"
	"github.com/churon/churon/app/store"
)

// TestDemoFromWelcome: on a first start with no model and no network, the
// welcome view offers the built-in demo; choosing it loads the model from
// memory and opens a chat that says what it is, and a message gets a
// streamed answer that is stored in the history. The model menu offers
// the demo too, and it never joins the recent files.
func TestDemoFromWelcome(t *testing.T) {
	t.Setenv(paths.EnvHome, t.TempDir()) // a first start: nothing of this machine's
	h := newHarness(t, harnessOptions{settings: ptrSettings(quick(24))})
	u := h.u
	if u.center.Objects[0] != u.welcome.content {
		t.Fatal("the welcome view is not shown on a first start")
	}
	if !strings.Contains(text(u.welcome.content), "real answers need a real model") {
		t.Fatalf("the welcome view does not say what the demo is:\n%s", text(u.welcome.content))
	}
	test.Tap(findButton(t, u.welcome.content, "Try the built-in demo"))
	h.wait("the demo to load", func() bool { return u.model != nil })
	if !session.IsDemo(u.model.Path) || !strings.Contains(u.picker.button.Text, "Demo: stories260K (built in)") {
		t.Fatalf("loaded %q, the menu button says %q", u.model.Path, u.picker.button.Text)
	}
	if u.conv == 0 || u.center.Objects[0] != u.chat.content {
		t.Fatal("the demo did not open a chat")
	}
	if !strings.Contains(text(u.chat.content), "built-in demo model, stories260K") {
		t.Fatalf("the demo chat does not open with the notice:\n%s", text(u.chat.content))
	}
	h.typeAndSend("Once upon a time")
	h.wait("the answer", func() bool { return h.idle() && h.stored(u.conv) == 3 })
	msgs, err := h.m.Messages(u.conv)
	if err != nil {
		t.Fatal(err)
	}
	if msgs[0].Role != store.RoleNotice || msgs[1].Content != "Once upon a time" || msgs[2].Role != store.RoleAssistant || len(msgs[2].Content) < 20 {
		t.Fatalf("stored %+v", msgs)
	}
	if !strings.Contains(text(u.chat.content), strings.TrimSpace(msgs[2].Content[:20])) {
		t.Fatalf("the answer is not shown:\n%s", text(u.chat.content))
	}
	for _, p := range u.recentModels() {
		if session.IsDemo(p) {
			t.Fatal("the demo joined the recent models")
		}
	}
}

func ptrSettings(s session.Settings) *session.Settings { return &s }
