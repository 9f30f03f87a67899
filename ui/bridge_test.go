package ui

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/churon/churon/app/api/session"
)

// TestBridgeCoalescesInOrder sends many tokens quickly with other events
// between them: apply must see every byte of text, in order, with the
// other events in their places, in far fewer calls than there were tokens.
func TestBridgeCoalescesInOrder(t *testing.T) {
	events := make(chan session.Event)
	var mu sync.Mutex
	var applied []session.Event
	var dos int
	b := &bridge{
		events: events,
		do: func(f func()) {
			mu.Lock()
			dos++
			mu.Unlock()
			f()
		},
		apply: func(ev session.Event) {
			mu.Lock()
			applied = append(applied, ev)
			mu.Unlock()
		},
	}
	done := make(chan struct{})
	go func() { b.run(); close(done) }()

	const n = 2000
	var want strings.Builder
	off := 0
	events <- session.MessageAdded{Message: session.Message{ID: 7}}
	for i := 0; i < n; i++ {
		s := string(rune('a' + i%26))
		if i%500 == 0 {
			s = "한"
		}
		events <- session.Token{Conv: 1, Msg: 7, Offset: off, Text: s, Tokens: i + 1}
		want.WriteString(s)
		off += len(s)
		if i == n/2 {
			events <- session.Queued{Conv: 2, Position: 1}
		}
	}
	events <- session.Done{Conv: 1, Msg: 7, Reason: session.ReasonEOS}
	close(events)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("bridge did not end after the channel closed")
	}

	if _, ok := applied[0].(session.MessageAdded); !ok {
		t.Fatalf("first event %T", applied[0])
	}
	if _, ok := applied[len(applied)-1].(session.Done); !ok {
		t.Fatalf("last event %T", applied[len(applied)-1])
	}
	var got strings.Builder
	tokens, queuedAt := 0, -1
	for _, ev := range applied {
		switch ev := ev.(type) {
		case session.Token:
			if ev.Offset != got.Len() {
				t.Fatalf("token at offset %d, text so far %d bytes", ev.Offset, got.Len())
			}
			got.WriteString(ev.Text)
			tokens++
		case session.Queued:
			queuedAt = got.Len()
		}
	}
	if got.String() != want.String() {
		t.Fatalf("text differs: got %d bytes, want %d", got.Len(), want.Len())
	}
	if half := offsetAfter(n / 2); queuedAt != half {
		t.Errorf("Queued applied after %d bytes of text, sent after %d", queuedAt, half)
	}
	if tokens >= n/2 {
		t.Errorf("%d token updates for %d tokens: not coalesced", tokens, n)
	}
	t.Logf("%d tokens reached the UI in %d updates (%d do calls)", n, tokens, dos)
}

// offsetAfter is the byte length of the first k+1 tokens the test sends.
func offsetAfter(k int) int {
	n := 0
	for i := 0; i <= k; i++ {
		if i%500 == 0 {
			n += len("한")
		} else {
			n++
		}
	}
	return n
}

// TestBridgeWaitsForTheWindow: while the window has not applied the text
// it was handed (Fyne's goroutine is busy), the bridge merges what follows
// instead of queueing update after update ahead of the person's clicks.
func TestBridgeWaitsForTheWindow(t *testing.T) {
	events := make(chan session.Event)
	tick := make(chan time.Time)
	var mu sync.Mutex
	var queued []func() // handed to do, not run yet: the window is busy
	var text strings.Builder
	b := &bridge{
		events: events,
		tick:   tick,
		do: func(f func()) {
			mu.Lock()
			queued = append(queued, f)
			mu.Unlock()
		},
		apply: func(ev session.Event) {
			if tok, ok := ev.(session.Token); ok {
				text.WriteString(tok.Text)
			}
		},
	}
	done := make(chan struct{})
	go func() { b.run(); close(done) }()
	waiting := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(queued)
	}
	runQueued := func() {
		mu.Lock()
		q := queued
		queued = nil
		mu.Unlock()
		for _, f := range q {
			f()
		}
	}

	off := 0
	send := func(s string) {
		events <- session.Token{Conv: 1, Msg: 7, Offset: off, Text: s}
		off += len(s)
	}
	for i := 0; i < 10; i++ {
		send("ab")
		tick <- time.Now()
	}
	// tick is unbuffered: the bridge took each tick, so it has acted on it.
	if n := waiting(); n != 1 {
		t.Fatalf("%d updates queued for a busy window after 10 ticks, want 1", n)
	}
	runQueued()
	tick <- time.Now()
	tick <- time.Now() // the bridge handled the first tick before taking this one
	if n := waiting(); n != 1 {
		t.Fatalf("after the window caught up, %d updates queued, want 1 with all the text since", n)
	}
	runQueued()
	if text.String() != strings.Repeat("ab", 10) {
		t.Fatalf("applied %q", text.String())
	}
	close(events)
	<-done
}

// TestBridgeKeepsReasoningApart: an answer's reasoning and its content
// are two streams with their own offsets; merging never joins them.
func TestBridgeKeepsReasoningApart(t *testing.T) {
	b := &bridge{}
	b.merge(session.Token{Msg: 7, Offset: 0, Text: "think ", Reasoning: true})
	b.merge(session.Token{Msg: 7, Offset: 6, Text: "more", Reasoning: true})
	// Content whose offset happens to continue the reasoning's.
	b.merge(session.Token{Msg: 7, Offset: 10, Text: "Answer"})
	b.merge(session.Token{Msg: 7, Offset: 16, Text: " here"})
	if len(b.pending) != 2 {
		t.Fatalf("%d pending tokens, want the two streams: %+v", len(b.pending), b.pending)
	}
	if r, c := b.pending[0], b.pending[1]; !r.Reasoning || r.Text != "think more" || c.Reasoning || c.Text != "Answer here" {
		t.Fatalf("pending %+v", b.pending)
	}
}

// fakePacer records what the bridge does with its ticker.
type fakePacer struct {
	mu      sync.Mutex
	stopped bool
	resets  int
}

func (p *fakePacer) Stop() { p.mu.Lock(); p.stopped = true; p.mu.Unlock() }
func (p *fakePacer) Reset(time.Duration) {
	p.mu.Lock()
	p.stopped = false
	p.resets++
	p.mu.Unlock()
}

func (p *fakePacer) state() (bool, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopped, p.resets
}

// TestBridgeSleepsWhileIdle: a tick that finds no text stops the ticker
// (an idle window is not woken twenty times a second); the next token is
// handed over at once and starts it again; ticks then coalesce the text
// as before, until one finds none.
func TestBridgeSleepsWhileIdle(t *testing.T) {
	events := make(chan session.Event)
	tick := make(chan time.Time)
	pace := &fakePacer{}
	var mu sync.Mutex
	var text strings.Builder
	b := &bridge{events: events, tick: tick, pace: pace,
		do: func(f func()) { f() },
		apply: func(ev session.Event) {
			if tok, ok := ev.(session.Token); ok {
				mu.Lock()
				text.WriteString(tok.Text)
				mu.Unlock()
			}
		}}
	done := make(chan struct{})
	go func() { b.run(); close(done) }()
	shown := func() string { mu.Lock(); defer mu.Unlock(); return text.String() }

	tick <- time.Time{}        // nothing waits: the ticker stops
	events <- session.Queued{} // an event in between: the bridge took the tick
	if stopped, _ := pace.state(); !stopped {
		t.Fatal("a tick with no text left the ticker running")
	}
	events <- session.Token{Msg: 1, Offset: 0, Text: "first"}
	events <- session.Queued{}
	if stopped, resets := pace.state(); stopped || resets != 1 {
		t.Fatalf("after text, ticker stopped %v, restarted %d times", stopped, resets)
	}
	if got := shown(); got != "first" {
		t.Fatalf("text after a quiet spell shows %q, not at once", got)
	}
	// Running again: text waits for the tick, merged.
	events <- session.Token{Msg: 1, Offset: 5, Text: " second"}
	events <- session.Token{Msg: 1, Offset: 12, Text: " third"}
	if got := shown(); got != "first" {
		t.Fatalf("while ticking, text showed before the tick: %q", got)
	}
	tick <- time.Time{}
	events <- session.Queued{}
	if got := shown(); got != "first second third" {
		t.Fatalf("after the tick the text reads %q", got)
	}
	if stopped, _ := pace.state(); stopped {
		t.Fatal("a tick that handed text over stopped the ticker")
	}
	tick <- time.Time{}
	events <- session.Queued{}
	if stopped, resets := pace.state(); !stopped || resets != 1 {
		t.Fatalf("a quiet tick: ticker stopped %v, restarted %d times", stopped, resets)
	}
	close(events)
	<-done
}
