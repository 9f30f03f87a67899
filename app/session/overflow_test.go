package session

import (
	"errors"
	"fmt"
	"testing"

	"github.com/churon/churon/app/store"
)

// TestContextOverflow runs a conversation far past a small context. With
// the default policy the oldest whole turns leave the prompt, a notice is
// stored and shown (MessageAdded) before the answer that first misses
// them, the conversation goes on, each answer is the engine's answer to
// exactly the turns kept, and the turns after a drop reuse the cache
// until the next drop. With OverflowStop the answer is refused instead.
func TestContextOverflow(t *testing.T) {
	path := storiesPath(t)
	f := newFixture(t, Options{})
	f.load(path)
	set := greedy(8)
	set.Context = 320
	set.SystemPrompt = "Stories."
	conv := f.conv(set)
	var notices []Message
	reusedAfterDrop := false
	for i := range 12 {
		text := fmt.Sprintf("Tell me about the %d little birds.", i+1)
		if _, err := f.m.Send(conv, text); err != nil {
			t.Fatal(err)
		}
		tr := collect(t, f.ev.until(t, isDone(conv)), conv)
		if tr.done.Reason == ReasonError {
			t.Fatalf("turn %d failed: %v", i+1, tr.done.Err)
		}
		var fresh []Message
		for _, m := range tr.added {
			if m.Role == store.RoleNotice {
				fresh = append(fresh, m)
			}
		}
		notices = append(notices, fresh...)
		if tr.stats.PromptTokens+answerRoom(set, set.Context) > set.Context {
			t.Fatalf("turn %d: a prompt of %d tokens leaves no room in %d", i+1, tr.stats.PromptTokens, set.Context)
		}
		if len(notices) > 0 && len(fresh) == 0 && tr.stats.Reused > tr.stats.PromptTokens/2 {
			reusedAfterDrop = true
		}
		// The answer is the engine's own answer to the turns kept.
		msgs := f.messages(conv)
		var kept []string
		skip := tr.stats.Dropped
		for _, m := range msgs[:len(msgs)-1] {
			if m.Role == store.RoleNotice {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			kept = append(kept, m.Content)
		}
		if want := reference(t, path, set, kept...); tr.text != want {
			t.Fatalf("turn %d (%d messages dropped): %q, from scratch on the kept turns: %q", i+1, tr.stats.Dropped, tr.text, want)
		}
		if len(fresh) > 0 {
			n, ok := ParseNotice(fresh[0])
			if !ok || n.Kind != NoticeDropped || n.Dropped != tr.stats.Dropped || n.Dropped%2 != 0 {
				t.Fatalf("notice %+v (%v), stats %+v", n, ok, tr.stats)
			}
			// Stored before the answer, after the question.
			if got := msgs[len(msgs)-2]; got.ID != fresh[0].ID || got.Content == "" {
				t.Fatalf("notice stored as %+v", got)
			}
		}
	}
	if len(notices) < 2 {
		t.Fatalf("%d notices in 12 turns of a 320-token context", len(notices))
	}
	if !reusedAfterDrop {
		t.Fatal("no turn after a drop reused the cache")
	}

	// OverflowStop refuses once the prompt does not fit at all.
	stop := greedy(8)
	stop.Context = 48
	stop.Overflow = OverflowStop
	c2 := f.conv(stop)
	for i := range 6 {
		if _, err := f.m.Send(c2, fmt.Sprintf("Tell me about the %d little birds.", i+1)); err != nil {
			t.Fatal(err)
		}
		tr := collect(t, f.ev.until(t, isDone(c2)), c2)
		if tr.done.Reason == ReasonError {
			if !errors.Is(tr.done.Err, ErrTooLong) {
				t.Fatalf("stop policy failed with %v", tr.done.Err)
			}
			for _, m := range f.messages(c2) {
				if m.Role == store.RoleNotice {
					t.Fatal("stop policy stored a notice")
				}
			}
			return
		}
	}
	t.Fatal("the stop policy never refused")
}
