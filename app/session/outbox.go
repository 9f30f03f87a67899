package session

import (
	"strings"
	"sync"
)

// outbox carries events from the manager to the Events channel without
// ever blocking the sender and without dropping anything.
//
// Back-pressure policy: senders append to a queue and return at once; one
// goroutine delivers the queue in order on an unbuffered channel, waiting
// as long as the consumer takes. While the consumer lags, a Token that
// follows a not-yet-delivered Token of the same answer is merged into it
// (texts concatenated), so a stalled UI costs memory proportional to the
// answer's text, not to its token count, and receives one large Token when
// it catches up. Other events are few (one per command or per answer) and
// simply wait their turn. Nothing is discarded: the channel is closed only
// after the last queued event has been delivered.
type outbox struct {
	out  chan Event
	mu   sync.Mutex
	q    []any // Event, or *pendingToken while a Token may still grow
	wake chan struct{}
	shut bool
}

type pendingToken struct {
	tok  Token
	text strings.Builder
}

func newOutbox() *outbox {
	o := &outbox{out: make(chan Event), wake: make(chan struct{}, 1)}
	go o.pump()
	return o
}

func (o *outbox) push(ev Event) {
	o.mu.Lock()
	if o.shut {
		o.mu.Unlock()
		return
	}
	if t, ok := ev.(Token); ok {
		if n := len(o.q); n > 0 {
			if p, ok := o.q[n-1].(*pendingToken); ok && p.tok.Msg == t.Msg && p.tok.Offset+p.text.Len() == t.Offset {
				p.text.WriteString(t.Text)
				p.tok.Tokens, p.tok.Elapsed = t.Tokens, t.Elapsed
				o.mu.Unlock()
				return
			}
		}
		p := &pendingToken{tok: t}
		p.text.WriteString(t.Text)
		o.q = append(o.q, p)
	} else {
		o.q = append(o.q, ev)
	}
	o.mu.Unlock()
	o.signal()
}

// signal wakes the pump. The wake channel holds one pending wake-up; when
// one is already pending, the pump will see this event too, so a second
// wake-up would add nothing. (No event is ever sent with a default case.)
func (o *outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// close lets the pump deliver what is queued and then close the channel.
func (o *outbox) close() {
	o.mu.Lock()
	o.shut = true
	o.mu.Unlock()
	o.signal()
}

func (o *outbox) pump() {
	for {
		o.mu.Lock()
		if len(o.q) == 0 {
			shut := o.shut
			o.mu.Unlock()
			if shut {
				close(o.out)
				return
			}
			<-o.wake
			continue
		}
		head := o.q[0]
		o.q[0] = nil
		o.q = o.q[1:]
		o.mu.Unlock()
		ev, ok := head.(Event)
		if p, isTok := head.(*pendingToken); isTok {
			// Taken off the queue under the lock, so nothing merges into it
			// any more.
			p.tok.Text = p.text.String()
			ev, ok = p.tok, true
		}
		if ok {
			o.out <- ev
		}
	}
}
