package chat

import (
	"context"
	"image/color"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/store"

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

// TestThinkingFoundAndKeys: a search hit opened in an answer with
// reasoning marks the terms in the reasoning too (the folded row says how
// many it holds, and opened they are marked as in the answer); Tab
// reaches the row from the answer's actions, it shows the focus tint,
// and Space and Return open and fold it.
func TestThinkingFoundAndKeys(t *testing.T) {
	h := newHarness(t, uitest.Options{})
	base := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	res, err := h.St.Import(context.Background(), []store.ImportConversation{{
		Conversation: store.Conversation{Title: "sky", Created: base},
		Messages: []store.Message{
			{Role: store.RoleUser, Content: "Why is the sky blue?", Created: base},
			{Role: store.RoleAssistant, Content: "Rayleigh scattering makes the sky look blue.", Created: base.Add(time.Second),
				Reasoning: "Blue light scatters more. The BLUE end of the spectrum, then the sky.", ReasoningTokens: 17,
				ReasoningTime: 2300 * time.Millisecond, FinishReason: "eos", Model: "thinker.gguf"},
		}}})
	if err != nil {
		t.Fatal(err)
	}
	conv := res.Conversations[0].ID
	msgs, err := h.St.Messages(context.Background(), conv)
	if err != nil {
		t.Fatal(err)
	}
	c := h.view()
	c.Find(conv, msgs[1].ID, "blue")
	h.openChat(conv)
	v := c.byID[msgs[1].ID]
	if v == nil || !v.built() || v.think == nil {
		t.Fatal("the answer is not shown with its reasoning section")
	}
	if id, marked, _ := c.Highlighted(); id != msgs[1].ID || !slices.Equal(marked, []string{"blue"}) {
		t.Fatalf("highlighted message %d, marked %q", id, marked)
	}
	if got, want := v.think.toggle.Text(), "Thought for 2.3 s · 17 tokens · 2 found"; got != want {
		t.Errorf("folded, the row says %q, want %q", got, want)
	}

	// From the answer's last action, Tab goes to the row.
	cv := h.W.Canvas()
	cv.Focus(v.regen)
	cv.FocusNext()
	if cv.Focused() != v.think.toggle {
		t.Fatalf("Tab after the answer's actions focuses %T, not the reasoning's row", cv.Focused())
	}
	if v.think.toggle.focus.FillColor == color.Transparent {
		t.Error("the focused row shows no focus tint")
	}
	cv.Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeySpace})
	h.Settle()
	if !v.think.body.Visible() {
		t.Fatal("Space did not open the reasoning")
	}
	var marked []string
	for _, s := range v.think.text.Segments {
		if ts := s.(*widget.TextSegment); ts.Style.TextStyle.Bold && ts.Style.ColorName == theme.ColorNamePrimary {
			marked = append(marked, ts.Text)
		}
	}
	if !slices.Equal(marked, []string{"Blue", "BLUE"}) {
		t.Errorf("opened, the reasoning marks %q, want [Blue BLUE]", marked)
	}
	if got := v.think.text.String(); got != msgs[1].Reasoning {
		t.Errorf("opened, the reasoning reads %q", got)
	}
	cv.Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	h.Settle()
	if v.think.body.Visible() {
		t.Error("Return did not fold the reasoning")
	}
	cv.Unfocus()
	if v.think.toggle.focus.FillColor != color.Transparent {
		t.Error("the row keeps its focus tint once unfocused")
	}
}
