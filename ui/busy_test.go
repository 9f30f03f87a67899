package ui

import (
	"errors"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/session"
	"github.com/churon/churon/internal/uitest"
)

// TestSidebarMarksBusyChats: with the cap on answers at once at one, the
// chat that answers and the one that waits its turn are marked in the
// sidebar, and the marks go once they are done.
func TestSidebarMarksBusyChats(t *testing.T) {
	h, first, second := twoLongChats(t, "1")
	u := h.u
	mark := h.sidebarMark
	h.Wait("both chats in the list, the second queued", func() bool {
		_, queued := u.queued[second]
		return queued && findConvItem(h.W.Canvas().Content(), second) != nil && findConvItem(h.W.Canvas().Content(), first) != nil
	})
	if got := mark(first); got != "answering…" {
		t.Errorf("the answering chat is marked %q", got)
	}
	if got := mark(second); got != "waiting" {
		t.Errorf("the queued chat is marked %q", got)
	}
	u.openConversation(first)
	u.onStop()
	h.Wait("the second chat's answer to start", func() bool { return mark(second) == "answering…" })
	if got := mark(first); got != "" {
		t.Errorf("the stopped chat is still marked %q", got)
	}
	u.openConversation(second)
	u.onStop()
	h.Wait("the second chat to stop", h.Idle)
	if got := mark(second); got != "" {
		t.Errorf("the stopped chat is still marked %q", got)
	}
}

// TestSidebarMarksChatsAnsweringTogether: under the cap, two chats asked
// one after the other answer together, and both are marked answering.
func TestSidebarMarksChatsAnsweringTogether(t *testing.T) {
	h, first, second := twoLongChats(t, "")
	u := h.u
	answering := func(conv int64) bool { return h.sidebarMark(conv) == "answering…" }
	h.Wait("both chats marked answering", func() bool { return answering(first) && answering(second) })
	if _, queued := u.queued[second]; queued {
		t.Error("the second chat waited although the cap leaves room")
	}
	u.openConversation(first)
	u.onStop()
	u.openConversation(second)
	u.onStop()
	h.Wait("both chats to stop", h.Idle)
	// The window applies each Done as it reads it, a moment after the
	// session is idle: a mark that stays makes this wait time out.
	h.Wait("both marks gone", func() bool { return !answering(first) && !answering(second) })
}

// twoLongChats asks two chats in turn, each answering on until its
// context fills (stories260K), with the cap on answers at once set to
// maxAnswers ("": the default).
func twoLongChats(t *testing.T, maxAnswers string) (h *harness, first, second int64) {
	long := uitest.Quick(0)
	long.Context = 2048
	h = newHarness(t, harnessOptions{settings: &long})
	if maxAnswers != "" {
		if err := h.M.SetSetting(session.SettingMaxAnswers, maxAnswers); err != nil {
			t.Fatal(err)
		}
	}
	h.Load(uitest.StoriesPath(t))
	h.typeAndSend("Once upon a time")
	first = h.u.w.Conv
	h.u.onNewChat()
	h.typeAndSend("The little dog")
	return h, first, h.u.w.Conv
}

// sidebarMark is what the sidebar's row of conv says of its answer:
// "answering…", "waiting", or "" for nothing (or no row).
func (h *harness) sidebarMark(conv int64) string {
	it := findConvItem(h.W.Canvas().Content(), conv)
	if it == nil {
		return ""
	}
	m, _ := uitest.Find(it, func(r *widget.RichText) bool {
		return r.Visible() && (r.String() == "answering…" || r.String() == "waiting")
	})
	if m == nil {
		return ""
	}
	return m.String()
}

// TestBannerKeepsItsPlace: a long error sits above the page, which
// starts below it, at any width. Narrowing the window lays it out once,
// from the top down: the banner must be measured at its new width then,
// not at the old one (it used to keep its one-line height while its text
// wrapped onto the welcome page's heading).
func TestBannerKeepsItsPlace(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.W.Resize(fyne.NewSize(1100, 700))
	h.Settle()
	h.u.w.ShowError(errors.New(strings.Repeat("The file could not be read because the disk answered with an error. ", 3)))
	h.Settle()
	uitest.Settle(h.W) // as the driver lays out before drawing
	d := fyne.CurrentApp().Driver()
	for _, width := range []float32{1100, 800, 600} {
		h.W.Resize(fyne.NewSize(width, 700))
		notice := h.u.w.Notice
		banner := notice.Objects[0]
		bottom := d.AbsolutePositionForObject(banner).Y + banner.Size().Height
		if m := banner.MinSize().Height; banner.Size().Height < m {
			t.Errorf("width %v: the banner is %v high, its wrapped text needs %v", width, banner.Size().Height, m)
		}
		if nb := d.AbsolutePositionForObject(notice).Y + notice.Size().Height; nb < bottom {
			t.Errorf("width %v: the banner ends at %v, below its area's end %v", width, bottom, nb)
		}
		if top := d.AbsolutePositionForObject(h.u.center).Y; top < bottom {
			t.Errorf("width %v: the page starts at %v, under the banner that ends at %v", width, top, bottom)
		}
		title, ok := uitest.Find(h.u.welcome.content, func(l *widget.Label) bool { return l.Text == "Welcome to Churon" })
		if !ok {
			t.Fatal("no welcome heading")
		}
		if y := d.AbsolutePositionForObject(title).Y; y < bottom {
			t.Errorf("width %v: the welcome heading is at %v, under the banner that ends at %v", width, y, bottom)
		}
	}
}
