package store

import (
	"context"
	"testing"
)

// TestPromptReusedAndNotice checks that how much of a prompt came from the
// KV cache survives the store (finish, read back, import), and that a
// notice is a message like any other.
func TestPromptReusedAndNotice(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	c := mustConv(t, s, "chat")
	mustAdd(t, s, c.ID, RoleUser, "안녕")
	n, err := s.AddMessage(ctx, Message{ConversationID: c.ID, Role: RoleNotice, Content: "older messages are no longer seen", Sampler: `{"first_kept":1}`})
	if err != nil {
		t.Fatal(err)
	}
	if n.Role != RoleNotice || n.Sampler != `{"first_kept":1}` {
		t.Fatalf("notice stored as %+v", n)
	}
	a, err := s.AppendAssistant(ctx, c.ID, Message{Model: "m.gguf"})
	if err != nil {
		t.Fatal(err)
	}
	fin := Message{ID: a.ID, Content: "네", Model: "m.gguf", PromptTokens: 120, PromptReused: 100, GenTokens: 3, FinishReason: "eos"}
	if err := s.FinishMessage(ctx, fin); err != nil {
		t.Fatal(err)
	}
	got, err := s.Message(ctx, a.ID)
	if err != nil || got.PromptReused != 100 || got.PromptTokens != 120 {
		t.Fatalf("read back %+v, %v", got, err)
	}
	msgs, err := s.Messages(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	other := openTemp(t)
	res, err := other.Import(ctx, []ImportConversation{{Conversation: c, Messages: msgs}})
	if err != nil || len(res.Conversations) != 1 {
		t.Fatalf("import: %+v %v", res, err)
	}
	imported, err := other.Messages(ctx, res.Conversations[0].ID)
	if err != nil || len(imported) != 3 {
		t.Fatalf("imported %+v, %v", imported, err)
	}
	if imported[1].Role != RoleNotice || imported[2].PromptReused != 100 {
		t.Fatalf("imported notice %+v answer %+v", imported[1], imported[2])
	}
}
