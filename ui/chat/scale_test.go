package chat

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/store"
	"github.com/churon/churon/internal/cputime"
	"github.com/churon/churon/internal/synthchat"
	"github.com/churon/churon/internal/uitest"
	"github.com/churon/churon/ui/markdown"
)

// The chat's cost at scale (issue #25): a long conversation opens, and
// scrolls, building only the messages in and near sight.

// syntheticChat is a conversation of n messages as people write them
// (internal/synthchat: 20–300 words, English and Korean, some with code
// or a table), questions and answers in turn. It is the same for the
// same n.
func syntheticChat(n int) store.ImportConversation {
	r := rand.New(rand.NewPCG(uint64(n), 25))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ic := store.ImportConversation{Conversation: store.Conversation{Title: fmt.Sprintf("long chat %d", n), Created: base}}
	for i := range n {
		m := store.Message{Role: store.RoleUser, Content: synthchat.Message(r), Created: base.Add(time.Duration(i) * time.Second), FinishReason: "eos"}
		if i%2 == 1 {
			m.Role = store.RoleAssistant
			m.Model = "synthetic.gguf"
		}
		ic.Messages = append(ic.Messages, m)
	}
	return ic
}

// importChat stores a synthetic chat of n messages through the real
// import and returns its id.
func importChat(t testing.TB, st *store.Store, n int) int64 {
	t.Helper()
	res, err := st.Import(context.Background(), []store.ImportConversation{syntheticChat(n)})
	if err != nil {
		t.Fatal(err)
	}
	return res.Conversations[0].ID
}

// openChat shows conv as the sidebar does and waits until its messages
// are laid out, as the first frame shows them.
func (h *harness) openChat(conv int64) {
	h.T.Helper()
	c := h.view()
	h.Core.Conv = conv
	c.Show(conv)
	h.Core.Refresh() // the window shows the chat, as opening it does
	h.Wait("the chat to be shown", func() bool { return !c.loading && c.conv == conv })
	uitest.Settle(h.W)
}

// openLongChat is a window showing a synthetic chat of n messages,
// opened as the sidebar opens it, and its chat view.
func openLongChat(t *testing.T, n int) (*harness, *View) {
	t.Helper()
	h := newHarness(t, uitest.Options{})
	h.openChat(importChat(t, h.St, n))
	return h, h.view()
}

// builtWidgets counts the message widgets that exist in the chat's
// column: the Markdown views of answers and the selectable labels of
// questions (questionText; a selectable Label elsewhere).
func builtWidgets(c *View) int {
	n := 0
	uitest.Walk(c.box, func(o fyne.CanvasObject) bool {
		switch o := o.(type) {
		case *markdown.View:
			n++
		case *questionText:
			n++
		case *widget.Label:
			if o.Selectable {
				n++
			}
		}
		return true
	})
	return n
}

// TestLongChatBuildsOnlyWhatIsSeen: a chat of 2,000 messages opens at its
// end with widgets for a screenful or so of them, not for all; scrolled
// to its start and back, it still holds about a screenful.
func TestLongChatBuildsOnlyWhatIsSeen(t *testing.T) {
	const n = 2000
	h, c := openLongChat(t, n)
	if !c.atBottom() {
		t.Errorf("the chat opened at %v of %v, not at its end", c.scroll.Offset.Y, c.box.MinSize().Height)
	}
	last := c.views[len(c.views)-1]
	if last.obj == nil || !uitest.Shown(h.W, last.obj) {
		t.Fatal("the last message is not shown")
	}
	// A screenful (760 pixels) holds a few messages; what is built near
	// it is bounded by the view's margin, whatever the chat's length.
	const most = 60
	if got := builtWidgets(c); got > most {
		t.Fatalf("%d of %d messages have widgets after opening, want at most %d", got, n, most)
	}
	objs := len(c.box.Objects)
	if objs > most+1 {
		t.Fatalf("the column holds %d objects", objs)
	}
	// To the start at once, as dragging the scroll bar does, again as
	// older messages are read and put above, then a few wheel steps.
	for i := 0; c.scroll.Offset.Y > 0 || c.older > 0; i++ {
		if i == 100 {
			t.Fatalf("after 100 drags to the top the view is at %v with %d messages before those read", c.scroll.Offset.Y, c.older)
		}
		c.scroll.Scrolled(&fyne.ScrollEvent{Scrolled: fyne.NewDelta(0, c.box.MinSize().Height)})
		h.Settle()
	}
	for range 5 {
		c.scroll.Scrolled(&fyne.ScrollEvent{Scrolled: fyne.NewDelta(0, 240)})
	}
	uitest.Settle(h.W)
	if len(c.views) != n {
		t.Fatalf("at the start %d of the %d messages were read", len(c.views), n)
	}
	if c.scroll.Offset.Y != 0 {
		t.Fatalf("scrolled to the start, the view is at %v", c.scroll.Offset.Y)
	}
	if got := builtWidgets(c); got > most {
		t.Fatalf("%d messages have widgets after scrolling to the start, want at most %d", got, most)
	}
	if first := c.views[0]; first.obj == nil || !uitest.Shown(h.W, first.obj) || first.msg.Content != syntheticChat(n).Messages[0].Content {
		t.Fatal("at the start the first message is not shown")
	}
}

// TestOnlyWhatIsInSightIsShown: Fyne paints every object shown, in sight
// or clipped away, so the messages built around the part in sight are
// hidden, and those in it shown — at the end, and at every wheel step to
// the start.
func TestOnlyWhatIsInSightIsShown(t *testing.T) {
	h, c := openLongChat(t, 300)
	h.Settle() // the messages near sight are built after the first frame
	everHidden := 0
	check := func(when string) {
		t.Helper()
		off, viewH := c.scroll.Offset.Y, c.scroll.Size().Height
		shown, hidden := 0, 0
		for _, v := range c.views {
			if !v.built() {
				continue
			}
			top, bottom := v.obj.Position().Y, v.obj.Position().Y+v.obj.Size().Height
			inSight := bottom > off && top < off+viewH
			switch {
			case inSight && !v.obj.Visible():
				t.Fatalf("%s: a message in sight (%v–%v, view %v–%v) is hidden", when, top, bottom, off, off+viewH)
			case !inSight && v.obj.Visible() && (bottom+2*theme.Padding() < off || top > off+viewH):
				t.Fatalf("%s: a message out of sight (%v–%v, view %v–%v) is shown", when, top, bottom, off, off+viewH)
			case v.obj.Visible():
				shown++
			default:
				hidden++
			}
		}
		if shown == 0 {
			t.Fatalf("%s: no message shown", when)
		}
		everHidden += hidden
	}
	check("opened")
	for i := 0; c.scroll.Offset.Y > 0 && i < 2000; i++ {
		c.scroll.Scrolled(&fyne.ScrollEvent{Scrolled: fyne.NewDelta(0, 240)})
		h.Settle()
		if c.scroll.Offset.Y > 0 {
			check(fmt.Sprintf("step %d", i+1))
		}
	}
	if everHidden == 0 {
		t.Fatal("no message built out of sight was ever hidden")
	}
}

// scrollThrough scrolls the chat a wheel step at a time to its start
// (dir -1) or end (dir 1), laying the window out after each step as a
// frame does; before is called as each frame begins, and frame told what
// it cost.
func scrollThrough(h *harness, c *View, dir float32, before func(), frame func(time.Duration)) {
	h.T.Helper()
	for i := 0; ; i++ {
		if i > 100000 {
			h.T.Fatal("scrolling never reached the end")
		}
		at := c.scroll.Offset.Y
		before()
		start := time.Now()
		c.scroll.Scrolled(&fyne.ScrollEvent{Scrolled: fyne.NewDelta(0, -dir*240)})
		uitest.Layout(c.content)
		if frame != nil {
			frame(time.Since(start))
		}
		h.Settle() // older messages read meanwhile are put above
		if c.scroll.Offset.Y == at && c.older == 0 {
			return
		}
	}
}

// TestLongChatScale opens a chat of CHURON_CHAT_SCALE messages (set it
// to run: 2000 is the figure) in the headless window and scrolls
// it from its end to its start and back; it logs the time to the first
// frame, the slowest scroll frame and how much the resident memory grew.
// A measurement, not a check: nothing here fails on time.
//
//	CHURON_CHAT_SCALE=2000 CGO_ENABLED=0 go test -tags ci -run LongChatScale -v ./ui/chat/
func TestLongChatScale(t *testing.T) {
	s := os.Getenv("CHURON_CHAT_SCALE")
	if s == "" {
		t.Skip("set CHURON_CHAT_SCALE=2000 to measure a long chat")
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, uitest.Options{})
	conv := importChat(t, h.St, n)
	rss0 := residentMB()
	start := time.Now()
	h.openChat(conv)
	open := time.Since(start)
	rssOpen := residentMB() - rss0
	c := h.view()
	// Each frame's wall time, and the process's CPU time over it: on a
	// shared machine the wall time also counts the waits for a core.
	var walls, cpus []time.Duration
	var cpu0 time.Duration
	track := func(d time.Duration) {
		walls = append(walls, d)
		now := cputime.Process()
		cpus = append(cpus, now-cpu0)
	}
	step := func(dir float32) {
		scrollThrough(h, c, dir, func() { cpu0 = cputime.Process() }, track)
	}
	step(-1)
	step(1)
	rss := residentMB() - rss0
	over := 0
	for _, d := range walls {
		if d > 50*time.Millisecond {
			over++
		}
	}
	t.Logf("%d messages: first frame after %v (resident memory +%.0f MB); scrolled end to start and back in %d frames: wall time median %v, 99th percentile %v, slowest %v, %d over 50 ms; CPU time median %v, 99th percentile %v, most %v; resident memory grew %.0f MB in all",
		n, open.Round(time.Millisecond), rssOpen, len(walls),
		quantile(walls, 0.5), quantile(walls, 0.99), quantile(walls, 1), over,
		quantile(cpus, 0.5), quantile(cpus, 0.99), quantile(cpus, 1), rss)
}

// quantile is the q-quantile of ds, rounded for a log.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(int(q*float64(len(s))), len(s)-1)].Round(100 * time.Microsecond)
}

// residentMB is the process's resident memory (Linux; 0 elsewhere).
func residentMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// TestScrollingReusesWidgets: scrolled from its end to its start, a chat
// of 400 messages makes widgets for about what a view and its margins
// hold, not for every message passed — those of messages gone from sight
// serve the ones coming into it — and every message shown shows its own
// text, its copy button copying it.
func TestScrollingReusesWidgets(t *testing.T) {
	const n = 400
	h, c := openLongChat(t, n)
	made := map[fyne.CanvasObject]bool{} // every message widget ever in the column
	check := func(when string) {
		t.Helper()
		uitest.Walk(c.box, func(o fyne.CanvasObject) bool {
			switch o := o.(type) {
			case *markdown.View:
				made[o] = true
			case *questionText:
				made[o] = true
			case *widget.Label:
				if o.Selectable {
					made[o] = true
				}
			}
			return true
		})
		for _, v := range c.views {
			if !v.built() || !v.obj.Visible() {
				continue
			}
			switch {
			case v.text != nil && v.text.Text != v.msg.Content:
				t.Fatalf("%s: question %d shows %.40q…", when, v.msg.ID, v.text.Text)
			case v.md != nil && v.md.Text() != v.msg.Content:
				t.Fatalf("%s: answer %d shows %.40q…", when, v.msg.ID, v.md.Text())
			}
		}
	}
	check("opened")
	steps := 0
	for ; (c.scroll.Offset.Y > 0 || c.older > 0) && steps < 20000; steps++ {
		c.scroll.Scrolled(&fyne.ScrollEvent{Scrolled: fyne.NewDelta(0, 240)})
		h.Settle()
		check(fmt.Sprintf("step %d", steps+1))
	}
	if c.scroll.Offset.Y > 0 || len(c.views) != n {
		t.Fatalf("after %d steps the view is at %v with %d of %d messages read", steps, c.scroll.Offset.Y, len(c.views), n)
	}
	// Both kinds' kept widgets, and what is built at once.
	if most := 2*maxShells + 60; len(made) > most {
		t.Fatalf("scrolling through %d messages made %d message widgets, want at most %d", n, len(made), most)
	}
	for _, v := range c.views {
		if v.built() && v.obj.Visible() {
			v.copyBtn.OnTapped()
			if got := h.A.Clipboard().Content(); got != v.msg.Content {
				t.Fatalf("the copy button of message %d copied %.40q…", v.msg.ID, got)
			}
			break
		}
	}
	t.Logf("%d wheel steps through %d messages made %d message widgets", steps, n, len(made))
}
