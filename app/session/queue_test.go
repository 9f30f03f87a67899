package session

import (
	"testing"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/internal/testdata"
)

// TestStopRightAfterSend: a Stop that reaches the manager just after the
// Send, before the answer made a token, cancels it: the answer does not
// run on to the context's end.
func TestStopRightAfterSend(t *testing.T) {
	f, _ := storiesFixture(t)
	conv := f.conv(uncapped())
	if _, err := f.m.Send(conv, "Once upon a time"); err != nil {
		t.Fatal(err)
	}
	if err := f.m.Stop(conv); err != nil {
		t.Fatal(err)
	}
	tr := f.wait(conv)
	if tr.done.Reason != api.ReasonCancelled || tr.stats.GenTokens > 1 {
		t.Fatalf("stopped before its first token, the answer ended %+v after %d tokens", tr.done, tr.stats.GenTokens)
	}
	// Nothing was said: no empty answer is kept in the history.
	for _, msg := range f.messages(conv) {
		if msg.Role == api.RoleAssistant && msg.Content == "" {
			t.Errorf("an empty answer was stored: %+v", msg)
		}
	}
}

// TestStopQueuedRegenerate: a regenerate stopped while it waits for
// another chat's answer stores nothing, and the chat is told to read again
// so that the answer it was to replace shows once more.
func TestStopQueuedRegenerate(t *testing.T) {
	f := newFixture(t, Options{MaxAnswers: 1}) // so that it waits
	f.load(testdata.Stories260K(t))
	a := f.conv(greedy(8))
	f.send(a, "Once upon a time")
	old := f.messages(a)
	b := f.conv(uncapped())
	if _, err := f.m.Send(b, "Lily and Ben"); err != nil {
		t.Fatal(err)
	}
	f.ev.until(t, func(ev api.Event) bool { tk, ok := ev.(api.Token); return ok && tk.Conv == b })
	changed := func(ev api.Event) bool { mc, ok := ev.(api.MessagesChanged); return ok && mc.Conv == a }
	if err := f.m.Regenerate(a, old[len(old)-1].ID); err != nil {
		t.Fatal(err)
	}
	f.ev.until(t, changed) // the old answer is hidden while the new one waits
	if err := f.m.Stop(a); err != nil {
		t.Fatal(err)
	}
	f.ev.until(t, changed) // and shown again
	f.m.Stop(b)
	if got := f.msgsShown(a); got[len(got)-1].ID != old[len(old)-1].ID {
		t.Errorf("after the stopped regenerate the chat ends with %+v; want the old answer", got[len(got)-1])
	}
}

// msgsShown is what the chat shows: the manager's view of the branch.
func (f *fixture) msgsShown(conv int64) []api.Message {
	f.t.Helper()
	msgs, err := f.m.Messages(conv)
	if err != nil {
		f.t.Fatal(err)
	}
	return msgs
}
