package chat

import (
	"strconv"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/churon/churon/internal/testutil"
	"github.com/churon/churon/internal/uitest"
)

// TestThinkingSection: a thinking model's reasoning shows as a folded
// section above the answer — "Thinking…" with a growing count while it
// streams, "Thought for … · N tokens" after, with the stored figures —
// never as <think> text in the answer; it opens on a click (the message
// measured again, taller) and is folded again when the chat is reopened.
func TestThinkingSection(t *testing.T) {
	set := uitest.Quick(0) // thinks until stopped: a random model never closes its block
	set.Context = 4096
	h := newHarness(t, uitest.Options{Settings: &set})
	h.Load(testutil.ThinkingQwen3(t))
	if m := h.Core.Model; m.Thinks != "think" || !m.ThinkingSwitch {
		t.Fatalf("model: thinks %q, switch %v", m.Thinks, m.ThinkingSwitch)
	}
	h.typeAndSend("Why is the sky blue?")
	var v *messageView
	h.Wait("the answer to think", func() bool {
		v = h.last()
		if h.Idle() {
			t.Fatal("the answer ended before it was seen thinking")
		}
		return v != nil && v.think != nil && v.think.box.Visible() && v.reasonTokens >= 3 &&
			strings.HasPrefix(v.think.toggle.Text(), "Thinking… · ")
	})
	if v.think.body.Visible() {
		t.Error("the reasoning is open while the model thinks")
	}
	if len(v.body.Objects) != 0 {
		t.Errorf("the answer's body shows %d objects while the model only thinks", len(v.body.Objects))
	}
	h.composer().entry.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	h.Wait("the answer to stop", h.Idle)

	msgs, err := h.M.Messages(h.Core.Conv)
	if err != nil {
		t.Fatal(err)
	}
	a := msgs[len(msgs)-1]
	t.Logf("answer: %d tokens (%d reasoning), %s", a.GenTokens, a.ReasoningTokens, a.FinishReason)
	if a.Reasoning == "" || a.ReasoningTokens == 0 || a.ReasoningTime <= 0 {
		t.Fatalf("stored answer: reasoning %q, %d tokens, %v", a.Reasoning, a.ReasoningTokens, a.ReasoningTime)
	}
	check := func(when string, v *messageView) {
		t.Helper()
		want := "Thought for " + formatThought(a.ReasoningTime) + " · " + strconv.Itoa(a.ReasoningTokens) + " tokens"
		if got := v.think.toggle.Text(); got != want {
			t.Errorf("%s: the section says %q, want %q", when, got, want)
		}
		if v.thinkOpen || v.think.body.Visible() {
			t.Errorf("%s: the reasoning is open", when)
		}
		if s := uitest.Text(v.obj); strings.Contains(s, "<think>") || strings.Contains(s, "</think>") {
			t.Errorf("%s: the message shows a think tag: %q", when, s)
		}
		if v.msg.Content != a.Content || v.msg.Reasoning != a.Reasoning {
			t.Errorf("%s: the view holds content %q, reasoning %q", when, v.msg.Content, v.msg.Reasoning)
		}
	}
	check("after the answer", v)

	c := h.view()
	c.relayout()
	folded := v.h
	test.Tap(v.think.toggle)
	h.Settle()
	if !v.think.body.Visible() || v.think.text.String() != a.Reasoning {
		t.Fatalf("opened: reasoning shown %v, %q", v.think.body.Visible(), v.think.text.String())
	}
	if v.h <= folded {
		t.Errorf("opened, the message is %v tall, as folded (%v): not measured again", v.h, folded)
	}
	test.Tap(v.think.toggle)
	h.Settle()
	if v.think.body.Visible() || v.h != folded {
		t.Errorf("folded again: reasoning shown %v, height %v (was %v)", v.think.body.Visible(), v.h, folded)
	}

	// Read back from the store, the section is the same, folded.
	c.Show(h.Core.Conv)
	h.Wait("the chat to show again", func() bool { return !c.loading && h.last() != nil && h.last().built() })
	check("reopened", h.last())
}
