package ui

import (
	"time"

	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/ui/core"
)

// bridge carries the session's events onto Fyne's goroutine. It runs on
// its own goroutine, reads every event (the manager requires that), merges
// consecutive Token events of the same answer and hands everything, in
// order, to apply through do (fyne.Do in the app). Text reaches the
// widgets every core.Coalesce at most.
type bridge struct {
	events <-chan session.Event
	do     func(func())
	apply  func(session.Event)

	pending []session.Token
}

func (b *bridge) run() {
	tick := time.NewTicker(core.Coalesce)
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
