package session

import (
	api "github.com/churon/churon/app/api/session"

	"strings"
	"testing"
	"time"
)

// TestOutboxCoalesces: with no one reading, tokens of an answer merge
// into one event; nothing is lost or reordered, and the channel closes
// after the last event.
func TestOutboxCoalesces(t *testing.T) {
	o := newOutbox()
	var want strings.Builder
	o.push(api.Queued{Conv: 1, Position: 1})
	for i := range 1000 {
		s := string(rune('a' + i%26))
		o.push(api.Token{Conv: 1, Msg: 10, Offset: want.Len(), Text: s, Tokens: i + 1})
		want.WriteString(s)
	}
	o.push(api.Token{Conv: 2, Msg: 20, Offset: 0, Text: "other"}) // another answer: not merged
	o.push(api.Done{Conv: 1, Msg: 10, Reason: api.ReasonEOS})
	o.push(api.Token{Conv: 1, Msg: 10, Offset: 5000, Text: "late"}) // not contiguous: not merged
	o.close()
	o.push(api.Error{Op: "after close"}) // ignored: the manager is gone

	var got []api.Event
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-o.out:
			if !ok {
				goto done
			}
			got = append(got, ev)
		case <-timeout:
			t.Fatal("outbox did not close")
		}
	}
done:
	if len(got) < 5 {
		t.Fatalf("got %d events: %s", len(got), describe(got))
	}
	if _, ok := got[0].(api.Queued); !ok {
		t.Fatalf("first %T", got[0])
	}
	// The first token may have been taken by the pump before the rest
	// arrived, so the 1000 tokens come as one or two events.
	var text strings.Builder
	i := 1
	for ; i < len(got); i++ {
		tok, ok := got[i].(api.Token)
		if !ok || tok.Msg != 10 {
			break
		}
		if tok.Offset != text.Len() {
			t.Fatalf("token offset %d after %d bytes", tok.Offset, text.Len())
		}
		text.WriteString(tok.Text)
		if tok.Tokens == 1000 && text.Len() != 1000 {
			t.Fatalf("token count out of step with text")
		}
	}
	if text.String() != want.String() || i > 3 {
		t.Fatalf("%d token events, text %d bytes", i-1, text.Len())
	}
	rest := got[i:]
	if len(rest) != 3 {
		t.Fatalf("rest %s", describe(rest))
	}
	if tok, ok := rest[0].(api.Token); !ok || tok.Msg != 20 || tok.Text != "other" {
		t.Fatalf("other answer's token: %+v", rest[0])
	}
	if _, ok := rest[1].(api.Done); !ok {
		t.Fatalf("want Done, got %T", rest[1])
	}
	if tok, ok := rest[2].(api.Token); !ok || tok.Text != "late" {
		t.Fatalf("late token %+v", rest[2])
	}
}

// TestOutboxDoesNotBlock: pushing never waits for the consumer.
func TestOutboxDoesNotBlock(t *testing.T) {
	o := newOutbox()
	done := make(chan struct{})
	go func() {
		for i := range 10000 {
			o.push(api.Queued{Conv: int64(i)})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("push blocked without a consumer")
	}
	o.close()
	n := 0
	for range o.out {
		n++
	}
	if n != 10000 {
		t.Fatalf("%d events delivered, want 10000", n)
	}
}

// TestOutboxKeepsReasoningApart: an answer's reasoning and its content
// are two streams; a content token whose offset happens to continue the
// reasoning's is not merged into it.
func TestOutboxKeepsReasoningApart(t *testing.T) {
	o := newOutbox()
	o.push(api.Queued{Conv: 1, Position: 1}) // held while nobody reads
	o.push(api.Token{Conv: 1, Msg: 10, Offset: 0, Text: "thinking", Reasoning: true})
	o.push(api.Token{Conv: 1, Msg: 10, Offset: 8, Text: " more", Reasoning: true})
	o.push(api.Token{Conv: 1, Msg: 10, Offset: 13, Text: "Answer"})
	o.push(api.Token{Conv: 1, Msg: 10, Offset: 19, Text: "!"})
	o.close()
	var reas, cont strings.Builder
	for ev := range o.out {
		tok, ok := ev.(api.Token)
		if !ok {
			continue
		}
		b := &cont
		if tok.Reasoning {
			b = &reas
		}
		if tok.Offset != map[bool]int{true: 0, false: 13}[tok.Reasoning]+b.Len() {
			t.Fatalf("token %+v out of place", tok)
		}
		b.WriteString(tok.Text)
	}
	if reas.String() != "thinking more" || cont.String() != "Answer!" {
		t.Fatalf("reasoning %q, content %q", reas.String(), cont.String())
	}
}
