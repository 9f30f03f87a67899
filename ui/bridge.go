package ui

import (
	"sync/atomic"
	"time"

	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/ui/core"
)

// bridge carries the session's events onto Fyne's goroutine. It runs on
// its own goroutine, reads every event (the manager requires that), merges
// consecutive Token events of the same answer and hands everything, in
// order, to apply through do (fyne.Do in the app). Text reaches the
// widgets every core.Coalesce at most, and only once the text before it
// was applied: while Fyne's goroutine is busy the text waits here, merged,
// instead of queueing update after update in front of the person's clicks.
type bridge struct {
	events <-chan session.Event
	do     func(func())
	apply  func(session.Event)
	// tick paces the text; nil: every core.Coalesce (tests drive it).
	tick <-chan time.Time
	// pace stops and restarts tick while no text comes; nil: tick is
	// never stopped (a test's channel).
	pace pacer

	pending []session.Token
	// posted: text handed to do has not been applied yet.
	posted atomic.Bool
}

// pacer is what the bridge needs of a time.Ticker.
type pacer interface {
	Stop()
	Reset(time.Duration)
}

func (b *bridge) run() {
	if b.tick == nil {
		t := time.NewTicker(core.Coalesce)
		defer t.Stop()
		b.tick, b.pace = t.C, t
	}
	// The ticker runs only while text comes: a tick that finds none stops
	// it (an idle window is not woken twenty times a second), and text
	// after a quiet spell is handed over at once and starts it again.
	ticking := true
	for {
		select {
		case ev, ok := <-b.events:
			if !ok {
				b.flush(true)
				return
			}
			if t, isTok := ev.(session.Token); isTok {
				b.merge(t)
				if b.pace != nil && !ticking {
					b.flush(false)
					b.pace.Reset(core.Coalesce)
					ticking = true
				}
				continue
			}
			// Everything else keeps its place after the text before it.
			b.flush(true)
			b.do(func() { b.apply(ev) })
		case <-b.tick:
			if b.pace != nil && len(b.pending) == 0 {
				b.pace.Stop()
				ticking = false
			}
			b.flush(false)
		}
	}
}

// merge adds t to the pending text. Two tokens merge when the second
// continues the first (same answer, same stream — its reasoning or its
// content — next offset); otherwise t is kept
// apart, so no text is ever lost or reordered.
func (b *bridge) merge(t session.Token) {
	for i := range b.pending {
		p := &b.pending[i]
		if p.Msg == t.Msg && p.Reasoning == t.Reasoning && p.Offset+len(p.Text) == t.Offset {
			p.Text += t.Text
			p.Tokens, p.Elapsed = t.Tokens, t.Elapsed
			return
		}
	}
	b.pending = append(b.pending, t)
}

// flush hands the pending text to do; unless forced (an event must
// follow it), not while the last text handed over waits to be applied.
func (b *bridge) flush(force bool) {
	if len(b.pending) == 0 || (!force && b.posted.Load()) {
		return
	}
	toks := b.pending
	b.pending = nil
	b.posted.Store(true)
	b.do(func() {
		b.posted.Store(false)
		for _, t := range toks {
			b.apply(t)
		}
	})
}
