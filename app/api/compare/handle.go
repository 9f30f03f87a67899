package compare

import (
	"context"
	"sync"
)

// Handle is a comparison running in the background (Service.Start).
//
// Its events arrive on Events in order, ending with Done, after which the
// channel is closed. The comparison never waits for the reader: events
// queue in memory (a few bytes per token) and a separate goroutine hands
// them over, so a slow view cannot slow the models down and distort their
// speed figures. Read Events until it is closed, or Cancel: after a
// cancellation the events not yet delivered are dropped and the channel
// is closed; Wait still tells how the run ended.
//
// A Handle's methods are safe for concurrent use.
type Handle struct {
	events chan Event
	cancel context.CancelFunc
	done   chan struct{}
	res    *Result
	err    error
}

// NewHandle starts run in the background and returns its handle at once;
// run reports its events through emit (which never blocks) and returns
// the result. A Service's Start is made of it.
func NewHandle(ctx context.Context, run func(ctx context.Context, emit func(Event)) (*Result, error)) *Handle {
	ctx, cancel := context.WithCancel(ctx)
	h := &Handle{events: make(chan Event), cancel: cancel, done: make(chan struct{})}
	q := &queue{signal: make(chan struct{}, 1)}
	go func() {
		h.res, h.err = run(ctx, q.push)
		q.close()
		close(h.done)
	}()
	go func() {
		defer close(h.events)
		defer cancel() // the run is over (or cancelled): release the context
		for {
			ev, ok := q.pop(ctx)
			if !ok {
				return
			}
			select {
			case h.events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return h
}

// Events delivers the comparison's events; see Handle.
func (h *Handle) Events() <-chan Event { return h.events }

// Cancel stops the comparison; Wait then returns context.Canceled.
func (h *Handle) Cancel() { h.cancel() }

// Done is closed when the comparison has ended (its events may still be
// on their way).
func (h *Handle) Done() <-chan struct{} { return h.done }

// Wait blocks until the comparison ends and returns its result or error.
func (h *Handle) Wait() (*Result, error) {
	<-h.done
	return h.res, h.err
}

// queue is an unbounded FIFO of events with one producer and one consumer.
type queue struct {
	mu     sync.Mutex
	items  []Event
	closed bool
	signal chan struct{} // holds a token when items or closed changed
}

func (q *queue) push(e Event) {
	q.mu.Lock()
	q.items = append(q.items, e)
	q.mu.Unlock()
	q.notify()
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.notify()
}

func (q *queue) notify() {
	select {
	case q.signal <- struct{}{}:
	default: // a wake-up is already pending: the consumer will see everything
	}
}

// pop returns the next event, waiting for one; ok is false once the queue
// is closed and empty, or ctx is done.
func (q *queue) pop(ctx context.Context) (Event, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			e := q.items[0]
			q.items[0] = nil
			q.items = q.items[1:]
			q.mu.Unlock()
			return e, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, false
		}
		select {
		case <-q.signal:
		case <-ctx.Done():
			return nil, false
		}
	}
}
