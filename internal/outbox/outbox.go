// Package outbox carries a service's events to its consumer without ever
// blocking the sender and without dropping anything: the shape every
// service in app/ (session, models) shares.
//
// Senders append to a queue and return at once; one goroutine delivers
// the queue in order on an unbuffered channel, waiting as long as the
// consumer takes. A service whose events can pile up while the consumer
// lags (streamed answer text) gives a Merge hook that folds a new event
// into the last undelivered one, so a stalled consumer costs memory in
// proportion to the content, not to the number of events. Nothing is
// discarded: the channel is closed only after the last queued event has
// been delivered.
package outbox

import "sync"

// Hooks shape what a Box keeps. All are optional and run under the box's
// lock, so they must be quick and must not push.
type Hooks[T any] struct {
	// Wrap turns an event into what is queued (for instance a builder
	// that later events can grow); nil keeps the event as it is.
	Wrap func(T) T
	// Merge folds next into last, the newest undelivered entry, and
	// reports whether it did; next is then not queued on its own.
	Merge func(last, next T) bool
	// Unwrap turns a queued entry back into the event delivered, once it
	// is off the queue and nothing merges into it any more.
	Unwrap func(T) T
}

// Box is an unbounded, order-keeping event queue with one reader.
type Box[T any] struct {
	out   chan T
	hooks Hooks[T]

	mu   sync.Mutex
	q    []T
	wake chan struct{}
	shut bool
}

// New starts a box; its pump runs until Close and the queue is drained.
func New[T any](h Hooks[T]) *Box[T] {
	b := &Box[T]{out: make(chan T), hooks: h, wake: make(chan struct{}, 1)}
	go b.pump()
	return b
}

// Out is the channel events are delivered on; it is closed after Close,
// once everything pushed before it has been delivered.
func (b *Box[T]) Out() <-chan T { return b.out }

// Push queues ev. It never blocks on the consumer. After Close it does
// nothing.
func (b *Box[T]) Push(ev T) {
	b.mu.Lock()
	if b.shut {
		b.mu.Unlock()
		return
	}
	if n := len(b.q); n > 0 && b.hooks.Merge != nil && b.hooks.Merge(b.q[n-1], ev) {
		b.mu.Unlock()
		return
	}
	if b.hooks.Wrap != nil {
		ev = b.hooks.Wrap(ev)
	}
	b.q = append(b.q, ev)
	b.mu.Unlock()
	b.signal()
}

// signal wakes the pump. The wake channel holds one pending wake-up; when
// one is already pending the pump will see this event too, so a second
// would add nothing. (No event is ever sent with a default case.)
func (b *Box[T]) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// Close lets the pump deliver what is queued and then close Out.
func (b *Box[T]) Close() {
	b.mu.Lock()
	b.shut = true
	b.mu.Unlock()
	b.signal()
}

func (b *Box[T]) pump() {
	var zero T
	for {
		b.mu.Lock()
		if len(b.q) == 0 {
			shut := b.shut
			b.mu.Unlock()
			if shut {
				close(b.out)
				return
			}
			<-b.wake
			continue
		}
		ev := b.q[0]
		b.q[0] = zero
		b.q = b.q[1:]
		if b.hooks.Unwrap != nil {
			// Off the queue under the lock: nothing merges into it any more.
			ev = b.hooks.Unwrap(ev)
		}
		b.mu.Unlock()
		b.out <- ev
	}
}
