package session

import (
	"errors"
	"fmt"
	"testing"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/internal/testdata"
)

// TestContextOverflow runs a conversation far past a small context. With
// the default policy the oldest whole turns leave the prompt, a notice is
// stored and shown (MessageAdded) before the answer that first misses
// them, the conversation goes on, each answer is the engine's answer to
// exactly the turns kept, and the turns after a drop reuse the cache
// until the next drop. With OverflowStop the answer is refused instead.
func TestContextOverflow(t *testing.T) {
	f, path := storiesFixture(t)
	set := greedy(8)
	set.Context = 320
	set.SystemPrompt = "Stories."
	conv := f.conv(set)
	var notices []api.Message
	reusedAfterDrop := false
	for i := range 12 {
		text := fmt.Sprintf("Tell me about the %d little birds.", i+1)
		if _, err := f.m.Send(conv, text); err != nil {
			t.Fatal(err)
		}
		tr := collect(t, f.ev.until(t, isDone(conv)), conv)
		if tr.done.Reason == api.ReasonError {
			t.Fatalf("turn %d failed: %v", i+1, tr.done.Err)
		}
		var fresh []api.Message
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
		kept := keptTurns(msgs, tr.stats.Dropped)
		if want := reference(t, path, set, kept...); tr.text != want {
			t.Fatalf("turn %d (%d messages dropped): %q, from scratch on the kept turns: %q", i+1, tr.stats.Dropped, tr.text, want)
		}
		if len(fresh) > 0 {
			n, ok := api.ParseNotice(fresh[0])
			if !ok || n.Kind != api.NoticeDropped || n.Dropped != tr.stats.Dropped || n.Dropped%2 != 0 {
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
	stop.Overflow = api.OverflowStop
	c2 := f.conv(stop)
	for i := range 6 {
		if _, err := f.m.Send(c2, fmt.Sprintf("Tell me about the %d little birds.", i+1)); err != nil {
			t.Fatal(err)
		}
		tr := collect(t, f.ev.until(t, isDone(c2)), c2)
		if tr.done.Reason == api.ReasonError {
			if !errors.Is(tr.done.Err, api.ErrTooLong) {
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

// overflowed loads stories260K and runs a conversation in a context of
// 320 (greedy, 8 tokens an answer, a system prompt) until an answer
// follows a notice. It returns the fixture, the settings and the
// conversation: …, question, notice, answer.
func overflowed(t *testing.T) (*fixture, api.Settings, int64) {
	t.Helper()
	f, _ := storiesFixture(t)
	set := greedy(8)
	set.Context = 320
	set.SystemPrompt = "Stories."
	conv := f.conv(set)
	for i := range 12 {
		f.send(conv, fmt.Sprintf("Tell me about the %d little birds.", i+1))
		msgs := f.messages(conv)
		if len(msgs) >= 3 && msgs[len(msgs)-2].Role == store.RoleNotice {
			return f, set, conv
		}
	}
	t.Fatal("no notice in 12 turns")
	return nil, api.Settings{}, 0
}

// keptTurns are the texts the model sees of msgs before the last: the
// turns left after the first dropped ones, notices never.
func keptTurns(msgs []api.Message, dropped int) []string {
	var kept []string
	for _, m := range msgs[:len(msgs)-1] {
		if m.Role == store.RoleNotice {
			continue
		}
		if dropped > 0 {
			dropped--
			continue
		}
		kept = append(kept, m.Content)
	}
	return kept
}

// TestNoticesNeverAnswered: after an overflow notice, regenerating the
// answer, regenerating from the notice, editing the question before it
// and deleting it all work, and each answer is the engine's answer to the
// turns kept.
func TestNoticesNeverAnswered(t *testing.T) {
	f, set, conv := overflowed(t)
	msgs := f.messages(conv)
	n := len(msgs)
	question, notice, answer := msgs[n-3], msgs[n-2], msgs[n-1]
	want := answer.Content

	// kept is what the model sees of the branch shown before its last
	// message, as the notice says.
	kept := func() []string {
		ms := f.messages(conv)
		dropped := 0
		for _, m := range ms[:len(ms)-1] {
			if m.Role == store.RoleNotice {
				if nt, ok := api.ParseNotice(m); ok {
					dropped = nt.Dropped
				}
			}
		}
		return keptTurns(ms, dropped)
	}

	for _, c := range []struct {
		what string
		msg  int64
	}{{"the answer after the notice", answer.ID}, {"the notice", notice.ID}, {"the question", question.ID}} {
		if err := f.m.Regenerate(conv, c.msg); err != nil {
			t.Fatalf("regenerate %s: %v", c.what, err)
		}
		tr := f.wait(conv)
		if tr.done.Reason == api.ReasonError {
			t.Fatalf("regenerate %s: %v", c.what, tr.done.Err)
		}
		if tr.text != want {
			t.Fatalf("regenerated %s: %q, the answer was %q", c.what, tr.text, want)
		}
		if ref := reference(t, testdata.Stories260K(t), set, kept()...); tr.text != ref {
			t.Fatalf("regenerated %s: %q, from scratch on the turns kept %q", c.what, tr.text, ref)
		}
	}

	// Edit the question before the notice.
	if err := f.m.Edit(conv, question.ID, "The little dog"); err != nil {
		t.Fatalf("edit before a notice: %v", err)
	}
	if tr := f.wait(conv); tr.done.Reason == api.ReasonError {
		t.Fatalf("answer to the edit: %v", tr.done.Err)
	}
	ms := f.messages(conv)
	var edited *api.Message
	for i := range ms {
		if ms[i].Role == store.RoleUser {
			edited = &ms[i]
		}
	}
	if edited.Content != "The little dog" || edited.Version != 2 || edited.Versions != 2 {
		t.Fatalf("edited question %+v", *edited)
	}

	// Delete the notice: the chat reads on without it.
	ms = f.messages(conv)
	var nid int64
	for _, m := range ms {
		if m.Role == store.RoleNotice {
			nid = m.ID
		}
	}
	if nid == 0 {
		t.Fatal("no notice left in the branch shown")
	}
	before := len(ms)
	if err := f.m.DeleteMessage(conv, nid); err != nil {
		t.Fatal(err)
	}
	ms = f.messages(conv)
	if len(ms) != before-1 || ms[len(ms)-1].Role != store.RoleAssistant {
		t.Fatalf("after deleting the notice: %d messages (was %d), last %s", len(ms), before, ms[len(ms)-1].Role)
	}
	last := ms[len(ms)-1]
	if err := f.m.Regenerate(conv, last.ID); err != nil {
		t.Fatalf("regenerate after deleting the notice: %v", err)
	}
	if tr := f.wait(conv); tr.done.Reason == api.ReasonError {
		t.Fatal(tr.done.Err)
	}
}

// TestRegenerateDropsMore regenerates the answer after a notice in a
// smaller context: the new notice is a version of the old one (the chat
// reads question, notice, answer, not two notices in a row), and the old
// notice's answer is one switch away.
func TestRegenerateDropsMore(t *testing.T) {
	f, set, conv := overflowed(t)
	msgs := f.messages(conv)
	oldNotice, oldAnswer := msgs[len(msgs)-2], msgs[len(msgs)-1]
	small := set
	small.Context = 160
	if err := f.m.SetSettings(conv, small); err != nil {
		t.Fatal(err)
	}
	if err := f.m.Regenerate(conv, oldAnswer.ID); err != nil {
		t.Fatal(err)
	}
	if tr := f.wait(conv); tr.done.Reason == api.ReasonError {
		t.Fatal(tr.done.Err)
	}
	msgs = f.messages(conv)
	n := msgs[len(msgs)-2]
	if n.Role != store.RoleNotice || n.ID == oldNotice.ID || n.Version != 2 || n.Versions != 2 || msgs[len(msgs)-3].Role != store.RoleUser {
		t.Fatalf("after regenerating in a smaller context: %s %s (%d/%d), %s", msgs[len(msgs)-3].Role, n.Role, n.Version, n.Versions, msgs[len(msgs)-1].Role)
	}
	old, _ := api.ParseNotice(oldNotice)
	if nt, _ := api.ParseNotice(n); nt.Dropped <= old.Dropped {
		t.Fatalf("the new notice drops %d, the old one %d", nt.Dropped, old.Dropped)
	}
	if err := f.m.SwitchVersion(conv, n.ID, 1); err != nil {
		t.Fatal(err)
	}
	if msgs = f.messages(conv); msgs[len(msgs)-1].ID != oldAnswer.ID {
		t.Fatalf("version 1 of the notice ends with %+v", msgs[len(msgs)-1])
	}
}
