package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/internal/uitest"
)

// TestDemoFromWelcome: on a first start with no model and no network, the
// welcome view offers the built-in demo; choosing it loads the model from
// memory and opens a chat that says what it is, and a message gets a
// streamed answer that is stored in the history. The model menu offers
// the demo too, and it never joins the recent files.
func TestDemoFromWelcome(t *testing.T) {
	t.Setenv(paths.EnvHome, t.TempDir()) // a first start: nothing of this machine's
	h := newHarness(t, harnessOptions{settings: ptrSettings(uitest.Quick(24))})
	u := h.u
	if u.center.Objects[0] != u.welcome.content {
		t.Fatal("the welcome view is not shown on a first start")
	}
	if !strings.Contains(uitest.Text(u.welcome.content), "real answers need a real model") {
		t.Fatalf("the welcome view does not say what the demo is:\n%s", uitest.Text(u.welcome.content))
	}
	test.Tap(uitest.FindButton(t, u.welcome.content, "Try the built-in demo"))
	h.Wait("the demo to load", func() bool { return u.w.Model != nil })
	if !session.IsDemo(u.w.Model.Path) || !strings.Contains(u.picker.button.Text, "Demo: stories260K (built in)") {
		t.Fatalf("loaded %q, the menu button says %q", u.w.Model.Path, u.picker.button.Text)
	}
	if u.w.Conv == 0 || u.center.Objects[0] != u.chat.Content() {
		t.Fatal("the demo did not open a chat")
	}
	if !strings.Contains(uitest.Text(u.chat.Content()), "built-in demo model, stories260K") {
		t.Fatalf("the demo chat does not open with the notice:\n%s", uitest.Text(u.chat.Content()))
	}
	h.typeAndSend("Once upon a time")
	h.Wait("the answer", func() bool { return h.Idle() && h.Stored(u.w.Conv) == 3 })
	msgs, err := h.M.Messages(u.w.Conv)
	if err != nil {
		t.Fatal(err)
	}
	if msgs[0].Role != store.RoleNotice || msgs[1].Content != "Once upon a time" || msgs[2].Role != store.RoleAssistant || len(msgs[2].Content) < 20 {
		t.Fatalf("stored %+v", msgs)
	}
	if !strings.Contains(uitest.Text(u.chat.Content()), strings.TrimSpace(msgs[2].Content[:20])) {
		t.Fatalf("the answer is not shown:\n%s", uitest.Text(u.chat.Content()))
	}
	for _, p := range u.recentModels() {
		if session.IsDemo(p) {
			t.Fatal("the demo joined the recent models")
		}
	}
}

func ptrSettings(s session.Settings) *session.Settings { return &s }
