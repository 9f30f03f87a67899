package ui

import (
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/remote"
	"github.com/churon/churon/internal/remotetest"
	"github.com/churon/churon/internal/uitest"
	"github.com/churon/churon/ui/core"
)

// TestRemoteModelChat: the desktop app does what `churon chat --remote`
// does: a connection's models are in the model menu, marked remote,
// under the connection; choosing one and sending a message streams the
// answer from the server, stores it with the connection and model, and
// the footer says it came from the remote with its speed
// (docs/screenshots/remote-model-menu.png is the menu, made here).
func TestRemoteModelChat(t *testing.T) {
	srv := remotetest.Serve(t, remotetest.Key)
	conns := uitest.Connections(t, remotetest.Key, remote.Connection{Name: "local", BaseURL: srv.Base, Models: []string{srv.Model}})
	lib, _ := uitest.LocalLibrary(t) // an empty library: the menu shows the remote model alone
	h := newHarness(t, harnessOptions{remotes: conns, settings: ptr(uitest.Quick(24)), models: &lib})
	if os.Getenv("CHURON_SCREENSHOTS") != "" {
		h.A.Settings().SetTheme(uitest.DarkTheme{Theme: core.NewTheme()})
	}
	h.Wait("the connections for the menu", func() bool { return len(h.u.menuRemotes) == 1 })
	// The test driver lays out again only when the window changes.
	h.W.Resize(fyne.NewSize(1100, 761))
	h.W.Resize(fyne.NewSize(1100, 760))
	h.u.picker.onMenu()
	if m, ok := uitest.OverlayFind[*widget.PopUpMenu](h.W); ok {
		uitest.Layout(m)
	}
	uitest.SaveScreenshot(t, "remote-model-menu.png", h.W.Canvas().Capture())
	path := session.RemotePath("local", srv.Model)
	items := uitest.MenuItems(h.T, h.W)
	item := items[core.ModelLabel(path)]
	if item == nil || items["Remote: local"] == nil || !strings.Contains(core.ModelLabel(path), "(remote)") {
		t.Fatalf("the menu lacks the remote model %q under its connection: %v", core.ModelLabel(path), items)
	}
	item.Action()
	h.Wait("the remote model to load", func() bool { return h.u.w.Model != nil && h.u.w.Model.Path == path })
	if !strings.Contains(h.u.picker.button.Text, "(remote)") {
		t.Errorf("the picker says %q", h.u.picker.button.Text)
	}

	h.typeAndSend("Once upon a time")
	h.Wait("the answer", func() bool { return h.Idle() && h.Stored(h.u.w.Conv) == 2 })
	msgs, err := h.M.Messages(h.u.w.Conv)
	if err != nil {
		t.Fatal(err)
	}
	ans := msgs[1]
	if ans.Content == "" || ans.Model != path || ans.FinishReason == string(session.ReasonError) {
		t.Fatalf("stored %+v", ans)
	}
	shown := uitest.Text(h.u.chat.Content())
	if !strings.Contains(shown, "remote: local") || !strings.Contains(shown, "tok/s") {
		t.Errorf("the footer does not say remote with its speed: %q", shown)
	}
	if strings.Contains(uitest.Text(h.u.status.left), "weights") {
		t.Errorf("the status line gives a remote model's weights: %q", uitest.Text(h.u.status.left))
	}
	uitest.SaveScreenshot(t, "remote-chat.png", h.W.Canvas().Capture())
}

// TestRemoteCutShown: a stream cut mid-answer keeps what arrived, and the
// chat says in one line what happened and that Regenerate retries.
func TestRemoteCutShown(t *testing.T) {
	var cut remotetest.Fault
	for _, f := range remotetest.Faults() {
		if f.Name == "cut stream" {
			cut = f
		}
	}
	fake := httptest.NewServer(cut.Handler)
	defer fake.Close()
	conns := uitest.Connections(t, "", remote.Connection{Name: "flaky", BaseURL: fake.URL, Models: []string{"m"}})
	lib, _ := uitest.LocalLibrary(t)
	h := newHarness(t, harnessOptions{remotes: conns, models: &lib})
	h.Load(session.RemotePath("flaky", "m"))
	h.typeAndSend("Once upon a time")
	h.Wait("the answer to fail", func() bool { return h.Idle() && h.Stored(h.u.w.Conv) == 2 })
	shown := uitest.Text(h.u.chat.Content())
	if !strings.Contains(shown, cut.Partial) || !strings.Contains(shown, "was cut off") || !strings.Contains(shown, "Regenerate to retry") {
		t.Fatalf("the chat shows %q", shown)
	}
}

func ptr[T any](v T) *T { return &v }
