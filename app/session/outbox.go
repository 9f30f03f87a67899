package session

import (
	api "github.com/churon/churon/app/api/session"

	"strings"

	box "github.com/churon/churon/internal/outbox"
)

// outbox carries events from the manager to the Events channel without
// ever blocking the sender and without dropping anything (internal/outbox).
//
// Back-pressure policy: while the consumer lags, a Token that follows a
// not-yet-delivered Token of the same answer and stream (its reasoning or
// its content) is merged into it (texts
// concatenated), so a stalled UI costs memory proportional to the answer's
// text, not to its token count, and receives one large Token when it
// catches up. Other events are few (one per command or per answer) and
// simply wait their turn.
type outbox struct {
	box *box.Box[api.Event]
	out <-chan api.Event
}

// pendingToken is a queued Token that later tokens of its answer may
// still grow; it never leaves the outbox.
// (It embeds the Token, which makes it an Event.)
type pendingToken struct {
	api.Token
	text strings.Builder
}

func newOutbox() *outbox {
	b := box.New(box.Hooks[api.Event]{
		Wrap: func(ev api.Event) api.Event {
			if t, ok := ev.(api.Token); ok {
				p := &pendingToken{Token: t}
				p.text.WriteString(t.Text)
				return p
			}
			return ev
		},
		Merge: func(last, next api.Event) bool {
			p, ok := last.(*pendingToken)
			t, isTok := next.(api.Token)
			if !ok || !isTok || p.Msg != t.Msg || p.Reasoning != t.Reasoning || p.Offset+p.text.Len() != t.Offset {
				return false
			}
			p.text.WriteString(t.Text)
			p.Tokens, p.Elapsed = t.Tokens, t.Elapsed
			return true
		},
		Unwrap: func(ev api.Event) api.Event {
			if p, ok := ev.(*pendingToken); ok {
				p.Token.Text = p.text.String()
				return p.Token
			}
			return ev
		},
	})
	return &outbox{box: b, out: b.Out()}
}

func (o *outbox) push(ev api.Event) { o.box.Push(ev) }

// close lets the outbox deliver what is queued and then close the channel.
func (o *outbox) close() { o.box.Close() }
