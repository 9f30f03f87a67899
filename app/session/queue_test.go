package session

import "testing"

// TestStopRightAfterSend: a Stop that reaches the manager just after the
// Send, before the answer made a token, cancels it: the answer does not
// run on to the context's end.
func TestStopRightAfterSend(t *testing.T) {
	f := newFixture(t, Options{})
	f.load(storiesPath(t))
	conv := f.conv(uncapped())
	if _, err := f.m.Send(conv, "Once upon a time"); err != nil {
		t.Fatal(err)
	}
	if err := f.m.Stop(conv); err != nil {
		t.Fatal(err)
	}
	tr := f.wait(conv)
	if tr.done.Reason != ReasonCancelled || tr.stats.GenTokens > 1 {
		t.Fatalf("stopped before its first token, the answer ended %+v after %d tokens", tr.done, tr.stats.GenTokens)
	}
}
