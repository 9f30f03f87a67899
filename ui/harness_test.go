package ui

import (
	"context"
	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/remote"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"

	"github.com/churon/churon/app/compare"
	"github.com/churon/churon/app/session"
	"github.com/churon/churon/internal/uitest"
	"github.com/churon/churon/models/discover"
)

// harness is the real window content over a real session manager and
// database, in Fyne's headless test app (see uitest.Harness).
type harness struct {
	*uitest.Harness
	u *UI
}

type harnessOptions struct {
	settings *api.Settings
	discover func(context.Context) ([]discover.Model, error)
	models   *uitest.Library     // the model service; nil: the app's folders
	disk     session.DiskCache   // KV snapshots; nil: none
	remotes  *remote.Connections // connections to remote engines; nil: none
	// before runs on the harness before the window is made: what an
	// earlier run of the app left (settings) is set here.
	before func(*uitest.Harness)
}

func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	if o.discover == nil {
		o.discover = uitest.NoModels
	}
	h := &harness{}
	h.Harness = uitest.New(t, uitest.Options{Settings: o.settings, Disk: o.disk, Models: o.models, Remotes: o.remotes}, func(b *uitest.Harness) func() {
		if o.before != nil {
			o.before(b)
		}
		h.u = New(b.A, b.W, Options{Session: b.M, Compare: compare.Runner{}, Models: b.Models, Remotes: o.remotes, Do: b.Post, Discover: o.discover})
		b.Core = h.u.w
		return h.u.Close
	})
	return h
}

// typeAndSend types text into the message box and presses Enter.
func (h *harness) typeAndSend(text string) {
	h.T.Helper()
	e := h.u.composer.Entry()
	h.TypeAndSend(e, func() string { return e.Text }, text)
}

// answered reports whether the chat shown ended with an answer that says
// something.
func (h *harness) answered() bool {
	ms, err := h.M.Messages(h.u.w.Conv)
	return err == nil && len(ms) > 0 && ms[len(ms)-1].Content != "" && h.Idle()
}

// shownMessages counts the messages the chat shows: the rows of its
// column, less the line that says it waits for the model.
func (h *harness) shownMessages() int {
	scroll, ok := uitest.Find[*container.Scroll](h.u.chat.Content(), nil)
	if !ok {
		h.T.Fatal("the chat has no scrolled column")
	}
	return len(scroll.Content.(*fyne.Container).Objects) - 1
}

// sidebarTitles lists the rows of the sidebar.
func (h *harness) sidebarTitles() []string {
	var out []string
	for _, r := range h.u.side.rows {
		out = append(out, r.conv.Title)
	}
	return out
}
