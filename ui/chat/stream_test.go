package chat

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/session"
	"github.com/churon/churon/internal/uitest"
)

// longAnswers is a harness whose answers run on (stories260K has no end
// of its own before the context fills), in a small window, so that an
// answer soon passes a screenful.
func longAnswers(t *testing.T, context int) *harness {
	t.Helper()
	long := uitest.Quick(0)
	long.Context = context
	h := newHarness(t, uitest.Options{Settings: &long})
	h.W.Resize(fyne.NewSize(700, 480))
	h.Load(uitest.StoriesPath(t))
	return h
}

// TestFollowTheAnswer: an answer streaming past a screenful stays in
// sight, new text and all, until it ends. (The view used to scroll before
// the deferred render grew the column, so past a screenful new text was
// written off-screen, and the view stopped following.)
func TestFollowTheAnswer(t *testing.T) {
	h := longAnswers(t, 4096)
	h.typeAndSend("Once upon a time")
	c := h.view()
	screens := func() float32 { return c.box.MinSize().Height / c.scroll.Size().Height }
	checks := 0
	h.Wait("the answer to pass two screenfuls", func() bool {
		// Between the window's updates the column is as rendered: its
		// end must be in sight.
		if screens() > 1 {
			checks++
			if !c.atBottom() {
				t.Fatalf("%.1f screens into the answer the view shows %v–%v of %v: the new text is off-screen",
					screens(), c.scroll.Offset.Y, c.scroll.Offset.Y+c.scroll.Size().Height, c.box.MinSize().Height)
			}
		}
		if h.Idle() {
			t.Fatalf("the answer ended at %.1f screens", screens())
		}
		return screens() > 2 && checks >= 3
	})
	h.composer().entry.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	h.Wait("the answer to stop", h.Idle)
	if !c.atBottom() {
		t.Error("the end of the stopped answer is off-screen")
	}
}

// TestJumpToLatest: scrolled up by the person, the view stays where they
// put it as the answer grows, and offers "Jump to latest", which goes to
// the end and follows again.
func TestJumpToLatest(t *testing.T) {
	h := longAnswers(t, 4096)
	h.typeAndSend("Once upon a time")
	c := h.view()
	screens := func() float32 { return c.box.MinSize().Height / c.scroll.Size().Height }
	h.Wait("the answer to pass a screenful", func() bool { return screens() > 1.5 || h.Idle() })
	if h.Idle() {
		t.Fatal("the answer ended before it passed a screenful")
	}
	if c.jumpAt.Visible() {
		t.Error("Jump to latest shows while the view follows")
	}
	// The person scrolls up, as the mouse wheel does.
	c.scroll.Scrolled(&fyne.ScrollEvent{Scrolled: fyne.NewDelta(0, 200)})
	at := c.scroll.Offset.Y
	if c.follow || !c.jumpAt.Visible() {
		t.Fatalf("scrolled up: following %v, jump shown %v", c.follow, c.jumpAt.Visible())
	}
	grown := c.box.MinSize().Height
	h.Wait("more text below", func() bool { return h.Idle() || c.box.MinSize().Height > grown+50 })
	if c.scroll.Offset.Y != at {
		t.Errorf("scrolled up to %v, the view moved to %v as the answer grew", at, c.scroll.Offset.Y)
	}
	test.Tap(c.jump)
	if !c.atBottom() || !c.follow || c.jumpAt.Visible() {
		t.Fatalf("after Jump to latest: at the end %v, following %v, jump shown %v", c.atBottom(), c.follow, c.jumpAt.Visible())
	}
	grown = c.box.MinSize().Height
	h.Wait("more text after the jump", func() bool { return h.Idle() || c.box.MinSize().Height > grown+50 })
	if !c.atBottom() {
		t.Error("after Jump to latest the view stopped following the answer")
	}
	h.composer().entry.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	h.Wait("the answer to stop", h.Idle)
}

// TestStopRightAfterEnter: Escape pressed just after Enter, while the
// message waits for the input method, or once it left the box but before
// the session has it, stops the answer. (It used to be lost and the
// answer ran to the context's end.)
func TestStopRightAfterEnter(t *testing.T) {
	for _, tc := range []struct {
		name string
		// hold: the command worker is held from before Enter until
		// after Escape, so the message has left the box but its Send
		// waits on the worker, however slow the machine.
		hold bool
	}{
		{"within the input method's settle", false},
		{"before the session has the message", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Once Enter is pressed the batch is held after each step
			// until the window's Stop has reached the session:
			// stories260K writes thousands of tokens a second, so without
			// the hold the count below would measure how soon a loaded
			// machine ran the goroutines, not whether the Stop went at
			// once.
			var armed atomic.Bool
			hold := make(chan struct{})
			var once sync.Once
			release := func() { once.Do(func() { close(hold) }) }
			long := uitest.Quick(0)
			long.Context = 1024
			h := newHarness(t, uitest.Options{Settings: &long, OnStep: func(session.StepInfo) {
				if armed.Load() {
					<-hold
				}
			}})
			t.Cleanup(release) // before the harness's: its Close waits for the batch
			h.W.Resize(fyne.NewSize(700, 480))
			h.Load(uitest.StoriesPath(t))
			armed.Store(true)
			e := h.composer().entry
			h.W.Canvas().Focus(e)
			test.Type(e, "Once upon a time")
			gate := make(chan struct{})
			if tc.hold {
				h.Core.Commands.Run(func() error { <-gate; return nil }, nil)
			}
			e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
			if tc.hold {
				// Fyne's goroutine only (Settle would wait on the held
				// worker): the message leaves the box, its Send queues.
				for deadline := time.Now().Add(uitest.WaitLimit); e.Text != ""; {
					if time.Now().After(deadline) {
						close(gate)
						t.Fatal("the message never left the box")
					}
					h.Drain()
					time.Sleep(time.Millisecond)
				}
			}
			e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
			close(gate)
			// The send is made (after the input method's settle), and the
			// commands it queued have run: the Stop is with the session.
			h.Wait("the message to leave the box", func() bool { return e.Text == "" })
			h.Core.Commands.Sync()
			release()
			h.Wait("the message to be sent and its answer to end", func() bool {
				return h.Core.Conv != 0 && h.Stored(h.Core.Conv) > 0 && h.Idle()
			})
			msgs, err := h.M.Messages(h.Core.Conv)
			if err != nil {
				t.Fatal(err)
			}
			if msgs[0].Content != "Once upon a time" {
				t.Fatalf("sent %q", msgs[0].Content)
			}
			// Stopped while queued there is no answer; stopped as it
			// started, a cancelled one of a token or two.
			if a := msgs[len(msgs)-1]; a.Role == api.RoleAssistant && (a.FinishReason != string(api.ReasonCancelled) || a.GenTokens > 16) {
				t.Fatalf("the answer ran on: finish %q after %d tokens", a.FinishReason, a.GenTokens)
			}
			if got := e.Text; got != "" {
				t.Errorf("the box holds %q", got)
			}
		})
	}
}

// TestTokensRenderOncePerFrame: however many tokens arrive together, the
// streaming answer is rendered about once, all the text at once; the
// window's time goes to what the person does, not to re-rendering.
func TestTokensRenderOncePerFrame(t *testing.T) {
	h := newHarness(t, uitest.Options{})
	c := h.view()
	ans := api.Message{ID: 99, ConversationID: 7, Role: api.RoleAssistant}
	c.ShowNew(7)
	c.OnMessageAdded(ans)
	renders := 0
	onRender = func() { renders++ }
	defer func() { onRender = nil }()
	const n = 500
	var want strings.Builder
	for i := range n {
		s := "word "
		c.OnToken(api.Token{Conv: 7, Msg: 99, Offset: want.Len(), Text: s, Tokens: i + 1, Elapsed: time.Second})
		want.WriteString(s)
	}
	v := c.byID[99]
	h.Wait("the tokens to be rendered", func() bool { return v.md.Text() == want.String() })
	if renders > 2 {
		t.Errorf("%d tokens arriving together were rendered %d times", n, renders)
	}
	if renders == 0 {
		t.Error("the render hook saw no render")
	}
}

// TestQueuedAnswerCountsItsWait: an answer waiting for another chat's
// says so, and how long it has waited, updated each second.
func TestQueuedAnswerCountsItsWait(t *testing.T) {
	h := newHarness(t, uitest.Options{})
	c := h.view()
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c.now = func() time.Time { return clock }
	c.ShowNew(7)
	c.OnQueued(api.Queued{Conv: 7, Position: 1})
	line := func() string { return uitest.Text(c.waiting) }
	if !c.waiting.Visible() || !strings.Contains(line(), "waiting · 0 s") || !strings.Contains(line(), "1 ahead") {
		t.Fatalf("queued: the line says %q (shown %v)", line(), c.waiting.Visible())
	}
	clock = clock.Add(4 * time.Second)
	h.Wait("the count to be updated", func() bool { return strings.Contains(line(), "waiting · 4 s") })
	// Another chat is shown meanwhile; back to this one, the count goes
	// on from when it began to wait.
	c.ShowNew(8)
	if c.waiting.Visible() {
		t.Errorf("another chat shows the line %q", line())
	}
	clock = clock.Add(2 * time.Second)
	c.ShowNew(7)
	c.OnQueued(api.Queued{Conv: 7, Position: 1}) // as the shell says again on opening it
	if !strings.Contains(line(), "waiting · 6 s") {
		t.Errorf("back in the waiting chat the line says %q", line())
	}
	c.OnMessageAdded(api.Message{ID: 5, ConversationID: 7, Role: api.RoleAssistant})
	if c.waiting.Visible() {
		t.Errorf("the answer started and the line still says %q", line())
	}
}

// TestSendDuringSettle: Send clicked while Enter's send waits for the
// input method sends the message once, and does not stop its answer.
func TestSendDuringSettle(t *testing.T) {
	h, e := typingHarness(t)
	test.Type(e, "Once upon a time")
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	test.Tap(h.composer().send)
	h.Wait("the answer", func() bool { return h.Core.Conv != 0 && h.Stored(h.Core.Conv) >= 2 && h.Idle() })
	msgs, err := h.M.Messages(h.Core.Conv)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[1].FinishReason == string(api.ReasonCancelled) {
		t.Fatalf("after Enter and Send: %d messages, the answer ended %q", len(msgs), msgs[len(msgs)-1].FinishReason)
	}
}

// TestWaitCountGoesOnInAnotherWaitingChat: switched from one waiting
// chat to another that waits too, the count of the one shown goes on (a
// tick scheduled for the first must not end the second's).
func TestWaitCountGoesOnInAnotherWaitingChat(t *testing.T) {
	h := newHarness(t, uitest.Options{})
	c := h.view()
	var mu sync.Mutex
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	line := func() string { return uitest.Text(c.waiting) }
	c.ShowNew(7)
	c.OnQueued(api.Queued{Conv: 7, Position: 1})
	c.ShowNew(8) // while 7's tick is on its way
	c.OnQueued(api.Queued{Conv: 8, Position: 2})
	for _, want := range []string{"waiting · 3 s", "waiting · 6 s"} {
		advance(3 * time.Second)
		h.Wait("the count of the chat shown to say "+want, func() bool { return strings.Contains(line(), want) })
	}
}
