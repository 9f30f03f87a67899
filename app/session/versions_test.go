package session

import (
	"errors"
	"testing"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/store"
)

// TestSwitchVersionFollowsTheCache edits a question, switches back to the
// first version and goes on: the answer is the engine's answer to that
// branch alone, although the cache last held the other one (it is reused
// only as far as the tokens match), and switching again shows the other
// branch with what followed it.
func TestSwitchVersionFollowsTheCache(t *testing.T) {
	f, path := storiesFixture(t)
	set := greedy(12)
	conv := f.conv(set)
	a1 := f.send(conv, "Lily and Ben")
	q1, firstAnswer := f.messages(conv)[0], f.messages(conv)[1].ID
	if err := f.m.Edit(conv, q1.ID, "The little dog"); err != nil {
		t.Fatal(err)
	}
	b1 := f.wait(conv)
	if a1.text == b1.text {
		t.Fatalf("both questions got %q: the test needs different answers", a1.text)
	}
	b2 := f.send(conv, "The end")
	edited := f.messages(conv)[0]
	if edited.Version != 2 || edited.Versions != 2 {
		t.Fatalf("edited question %d/%d", edited.Version, edited.Versions)
	}

	if err := f.m.SwitchVersion(conv, edited.ID, 1); err != nil {
		t.Fatal(err)
	}
	msgs := f.messages(conv)
	if len(msgs) != 2 || msgs[0].ID != q1.ID || msgs[1].Content != a1.text || msgs[0].Version != 1 {
		t.Fatalf("version 1 shows %+v", msgs)
	}
	next := f.send(conv, "Once upon a time")
	if want := reference(t, path, set, "Lily and Ben", a1.text, "Once upon a time"); next.text != want {
		t.Fatalf("on version 1: %q, from scratch %q", next.text, want)
	}
	if next.stats.Reused >= next.stats.PromptTokens || next.stats.Reused == 0 {
		t.Fatalf("reused %d of %d prompt tokens after switching: want the shared start only", next.stats.Reused, next.stats.PromptTokens)
	}

	// Version 2 comes back with both of its turns.
	if err := f.m.SwitchVersion(conv, q1.ID, 2); err != nil {
		t.Fatal(err)
	}
	msgs = f.messages(conv)
	if len(msgs) != 4 || msgs[1].Content != b1.text || msgs[3].Content != b2.text {
		t.Fatalf("version 2 shows %+v", msgs)
	}
	again := f.send(conv, "Once upon a time")
	if want := reference(t, path, set, "The little dog", b1.text, "The end", b2.text, "Once upon a time"); again.text != want {
		t.Fatalf("on version 2: %q, from scratch %q", again.text, want)
	}

	// Version 0 is the branch through the message named, as a search
	// result opens it.
	if err := f.m.SwitchVersion(conv, firstAnswer, 0); err != nil {
		t.Fatal(err)
	}
	if msgs = f.messages(conv); len(msgs) != 4 || msgs[1].ID != firstAnswer {
		t.Fatalf("the branch through the first answer: %+v", msgs)
	}

	if err := f.m.SwitchVersion(conv, q1.ID, 3); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a version that does not exist: %v", err)
	}
	other := f.conv(set)
	if err := f.m.SwitchVersion(other, q1.ID, 1); !errors.Is(err, api.ErrWrongConversation) {
		t.Fatalf("in the wrong conversation: %v", err)
	}
}
