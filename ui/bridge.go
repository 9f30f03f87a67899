package ui

import (
	"time"

	"github.com/churon/churon/app/session"
)

// Coalesce is how often streamed text reaches the widgets at most: the
// bridge merges the Token events of that interval into one update, so a
// fast model costs the UI about twenty re-renders a second, not one per
// token.
const Coalesce = 50 * time.Millisecond

// throttle paces the re-rendering of streaming Markdown (a chat answer, a
// Compare column): a long text costs more to lay out, so it is rendered
// again at most every Coalesce and never more than a third of the time.
// Used on Fyne's goroutine only.
type throttle struct {
	pending bool
	last    time.Time     // when the last render ended
	cost    time.Duration // what it took
}

// schedule renders now, or later through do (onto Fyne's goroutine) when
// the last render was too recent for what rendering costs.
func (t *throttle) schedule(do func(func()), render func()) {
	if t.pending {
		return
	}
	wait := max(Coalesce, 3*t.cost) - time.Since(t.last)
	if wait <= 0 {
		t.measure(render)
		return
	}
	t.pending = true
	time.AfterFunc(wait, func() {
		do(func() {
			t.pending = false
			t.measure(render)
		})
	})
}

// measure runs render and remembers what it cost.
func (t *throttle) measure(render func()) {
	start := time.Now()
	render()
	t.last = time.Now()
	t.cost = t.last.Sub(start)
}

// bridge carries the session's events onto Fyne's goroutine. It runs on
// its own goroutine, reads every event (the manager requires that), merges
// consecutive Token events of the same answer and hands everything, in
// order, to apply through do (fyne.Do in the app).
type bridge struct {
	events <-chan session.Event
	do     func(func())
	apply  func(session.Event)

	pending []session.Token
}

func (b *bridge) run() {
	tick := time.NewTicker(Coalesce)
	defer tick.Stop()
	for {
		select {
		case ev, ok := <-b.events:
			if !ok {
				b.flush()
				return
			}
			if t, isTok := ev.(session.Token); isTok {
				b.merge(t)
				continue
			}
			// Everything else keeps its place after the text before it.
			b.flush()
			b.do(func() { b.apply(ev) })
		case <-tick.C:
			b.flush()
		}
	}
}

// merge adds t to the pending text. Two tokens merge when the second
// continues the first (same answer, next offset); otherwise t is kept
// apart, so no text is ever lost or reordered.
func (b *bridge) merge(t session.Token) {
	for i := range b.pending {
		p := &b.pending[i]
		if p.Msg == t.Msg && p.Offset+len(p.Text) == t.Offset {
			p.Text += t.Text
			p.Tokens, p.Elapsed = t.Tokens, t.Elapsed
			return
		}
	}
	b.pending = append(b.pending, t)
}

func (b *bridge) flush() {
	if len(b.pending) == 0 {
		return
	}
	toks := b.pending
	b.pending = nil
	b.do(func() {
		for _, t := range toks {
			b.apply(t)
		}
	})
}
