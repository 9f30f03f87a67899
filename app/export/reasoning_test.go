package export

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/churon/churon/app/store"
)

// TestReasoningExported: an answer's reasoning is in every export,
// before the answer and marked as thinking, and comes back from a JSON
// export imported elsewhere.
func TestReasoningExported(t *testing.T) {
	ctx := context.Background()
	a, b := openStore(t), openStore(t)
	c, err := a.CreateConversation(ctx, store.Conversation{Title: "sky"})
	if err != nil {
		t.Fatal(err)
	}
	const thought = "Rayleigh scattering: shorter wavelengths scatter more. <b>not html</b>"
	if _, err := a.AddMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleUser, Content: "Why is the sky blue?"}); err != nil {
		t.Fatal(err)
	}
	ans, err := a.AddMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleAssistant, Model: "qwen3.gguf"})
	if err != nil {
		t.Fatal(err)
	}
	ans.Content, ans.Reasoning, ans.ReasoningTokens, ans.ReasoningTime = "Because of scattering.", thought, 42, 3200*time.Millisecond
	ans.GenTokens, ans.FinishReason = 50, "eos"
	if err := a.FinishMessage(ctx, ans); err != nil {
		t.Fatal(err)
	}
	chats, err := LoadAll(ctx, a)
	if err != nil || len(chats) != 1 {
		t.Fatalf("%d chats, %v", len(chats), err)
	}
	for _, f := range []Format{Markdown, Text, HTML} {
		out := render(t, f, chats[0], testOpt())
		label := "Thinking · 42 tokens · 3.2 s"
		th, an := strings.Index(out, label), strings.Index(out, "Because of scattering.")
		body := thought
		if f == HTML {
			body = "&lt;b&gt;not html&lt;/b&gt;"
		}
		if th < 0 || an < 0 || th > an || !strings.Contains(out, body) {
			t.Errorf("%s: thinking marked at %d, answer at %d:\n%s", f.Name(), th, an, out)
		}
	}
	doc := exportJSON(t, a)
	if !strings.Contains(string(doc), `"reasoning": "Rayleigh`) || !strings.Contains(string(doc), `"reasoning_tokens": 42`) {
		t.Fatalf("JSON export lacks the reasoning:\n%s", doc)
	}
	importJSON(t, b, doc)
	got, err := LoadAll(ctx, b)
	if err != nil || len(got) != 1 || len(got[0].Messages) != 2 {
		t.Fatalf("import: %+v, %v", got, err)
	}
	m := got[0].Messages[1]
	if m.Reasoning != thought || m.ReasoningTokens != 42 || m.ReasoningTime != 3200*time.Millisecond || m.Content != ans.Content {
		t.Errorf("imported answer %+v", m)
	}
}
