package chat

import (
	"testing"

	"github.com/churon/churon/internal/uitest"
)

// harness is the whole window over a real session (uitest.NewWindow),
// with the chat's view and message box at hand.
type harness struct{ *uitest.Window }

func newHarness(t *testing.T, o uitest.Options) *harness { return &harness{uitest.NewWindow(t, o)} }

// view is the conversation view the window shows now.
func (h *harness) view() *View { return h.Screens().Chat.(*View) }

// composer is the message box the window shows now.
func (h *harness) composer() *Composer { return h.Screens().Composer.(*Composer) }

// typeAndSend types text into the message box and presses Enter.
func (h *harness) typeAndSend(text string) {
	h.T.Helper()
	e := h.composer().entry
	h.TypeAndSend(e, func() string { return e.Text }, text)
}

// last returns the last message view of the chat shown.
func (h *harness) last() *messageView {
	v := h.view().views
	if len(v) == 0 {
		return nil
	}
	return v[len(v)-1]
}

// typingHarness is a window with the model loaded and the focus in the
// message box, to type in.
func typingHarness(t *testing.T) (*harness, *Input) {
	t.Helper()
	h := newHarness(t, uitest.Options{})
	h.Load(uitest.StoriesPath(t))
	e := h.composer().entry
	h.W.Canvas().Focus(e)
	return h, e
}

// sent waits for the message box to be sent (what) and answered, and
// returns the message as the chat shows it.
func (h *harness) sent(what string) string {
	h.T.Helper()
	e := h.composer().entry
	h.Wait(what, func() bool { return h.Core.Conv != 0 && e.Text == "" })
	h.Wait("the answer", func() bool { return h.Idle() && len(h.view().views) == 2 })
	return h.view().views[0].msg.Content
}
