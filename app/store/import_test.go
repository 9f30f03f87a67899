package store

import (
	"context"
	"testing"
	"time"
)

func at(sec int) time.Time { return time.Date(2026, 3, 14, 9, 0, sec, 125e6, time.UTC) }

func importConv(title string, created time.Time, msgs ...string) ImportConversation {
	ic := ImportConversation{Conversation: Conversation{Title: title, Created: created, Updated: created,
		Pinned: true, SystemPrompt: "sys", Sampler: `{"temperature":0.5}`, ModelPath: "/m.gguf"}}
	for i, text := range msgs {
		role := RoleUser
		if i%2 == 1 {
			role = RoleAssistant
		}
		ic.Messages = append(ic.Messages, Message{Role: role, Content: text, Created: created.Add(time.Duration(i+1) * time.Second),
			Updated: created.Add(time.Duration(i+2) * time.Second), Model: "m.gguf", Quant: "Q4_0", Sampler: `{"seed":1}`,
			PromptTokens: 3, GenTokens: 4, TTFT: 1500 * time.Microsecond, PromptTPS: 10.5, GenTPS: 2.25, FinishReason: "eos"})
	}
	return ic
}

func TestImportKeepsEverything(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	ic := importConv("김치", at(0), "안녕", "안녕하세요")
	res, err := s.Import(ctx, []ImportConversation{ic})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conversations) != 1 || res.Conversations[0].Outcome != Imported || res.Conversations[0].Messages != 2 {
		t.Fatalf("%+v", res)
	}
	c, err := s.Conversation(ctx, res.Conversations[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Title != "김치" || !c.Created.Equal(at(0)) || !c.Updated.Equal(at(0)) || !c.Pinned || c.SystemPrompt != "sys" ||
		c.Sampler != `{"temperature":0.5}` || c.ModelPath != "/m.gguf" {
		t.Errorf("conversation %+v", c)
	}
	msgs, err := s.Messages(ctx, c.ID)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("messages %+v %v", msgs, err)
	}
	for i, m := range msgs {
		w := ic.Messages[i]
		if m.Position != i+1 || m.Role != w.Role || m.Content != w.Content || !m.Created.Equal(w.Created) || !m.Updated.Equal(w.Updated) ||
			m.Model != w.Model || m.Quant != w.Quant || m.Sampler != w.Sampler || m.PromptTokens != 3 || m.GenTokens != 4 ||
			m.TTFT != w.TTFT || m.PromptTPS != 10.5 || m.GenTPS != 2.25 || m.FinishReason != "eos" {
			t.Errorf("message %d: %+v, want %+v", i, m, w)
		}
	}
	// Imported text is searchable like any other.
	if hits, err := s.Search(ctx, "안녕하", 10); err != nil || len(hits) != 1 {
		t.Errorf("search: %+v %v", hits, err)
	}
}

func TestImportMerge(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	base := importConv("chat", at(0), "q1", "a1")
	if _, err := s.Import(ctx, []ImportConversation{base}); err != nil {
		t.Fatal(err)
	}
	longer := importConv("chat (renamed elsewhere)", at(0), "q1", "a1", "q2", "a2")
	longer.Conversation.Updated = at(50)
	forked := importConv("chat", at(0), "q1", "a1 edited")
	other := importConv("other", at(1), "q1", "a1")
	empty := importConv("empty", at(2))
	res, err := s.Import(ctx, []ImportConversation{base, longer, forked, other, empty, empty, base})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		o ImportOutcome
		n int
	}{{Skipped, 0}, {Extended, 2}, {Imported, 2}, {Imported, 2}, {Imported, 0}, {Skipped, 0}, {Skipped, 0}}
	for i, w := range want {
		if got := res.Conversations[i]; got.Outcome != w.o || got.Messages != w.n {
			t.Errorf("conversation %d: %v with %d messages, want %v with %d", i, got.Outcome, got.Messages, w.o, w.n)
		}
	}
	if res.Conversations[0].ID != res.Conversations[1].ID || res.Conversations[6].ID != res.Conversations[1].ID {
		t.Error("the skipped and extended chats are not the original")
	}
	if res.Count(Imported) != 3 || res.Count(Skipped) != 3 || res.Count(Extended) != 1 {
		t.Errorf("counts %d %d %d", res.Count(Imported), res.Count(Skipped), res.Count(Extended))
	}
	c, _ := s.Conversation(ctx, res.Conversations[1].ID)
	msgs, _ := s.Messages(ctx, c.ID)
	if c.Title != "chat" || !c.Updated.Equal(at(50)) || len(msgs) != 4 || msgs[3].Content != "a2" || msgs[3].Position != 4 {
		t.Errorf("extended: %+v, %d messages", c, len(msgs))
	}
	// A shorter, older copy adds nothing.
	res, err = s.Import(ctx, []ImportConversation{base})
	if err != nil || res.Conversations[0].Outcome != Skipped {
		t.Errorf("older copy: %+v %v", res, err)
	}
	// A chat in the trash does not count: importing it brings it back as
	// a new conversation.
	if err := s.DeleteConversation(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	res, err = s.Import(ctx, []ImportConversation{longer})
	if err != nil || res.Conversations[0].Outcome != Imported || res.Conversations[0].ID == c.ID {
		t.Errorf("import of a trashed chat: %+v %v", res, err)
	}
}

func TestImportOutcomeString(t *testing.T) {
	if Imported.String() != "imported" || Extended.String() != "extended" || Skipped.String() != "skipped" || ImportOutcome(9).String() == "" {
		t.Error("ImportOutcome.String")
	}
}
