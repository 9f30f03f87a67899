package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "churon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// upgraded writes a database of schema version v (as a build of that
// version made it), runs the statements on it, and opens it with this
// build, which migrates it to the current schema.
func upgraded(t *testing.T, v int, stmts ...string) *Store {
	t.Helper()
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "churon.db")
	old, err := openAt(ctx, p, v)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := old.Version(ctx); got != v {
		t.Fatalf("version %d, want %d", got, v)
	}
	for _, q := range stmts {
		if _, err := old.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()
	s, err := Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if got, _ := s.Version(ctx); got != SchemaVersion {
		t.Fatalf("version %d after the upgrade, want %d", got, SchemaVersion)
	}
	return s
}

func mustConv(t *testing.T, s *Store, title string) Conversation {
	t.Helper()
	c, err := s.CreateConversation(context.Background(), Conversation{Title: title})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustAdd(t *testing.T, s *Store, conv int64, role Role, content string) Message {
	t.Helper()
	m, err := s.AddMessage(context.Background(), Message{ConversationID: conv, Role: role, Content: content})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestOpenPragmas(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	if v, err := s.Version(ctx); err != nil || v != SchemaVersion {
		t.Fatalf("version %d, %v; want %d", v, err, SchemaVersion)
	}
	for _, c := range []struct{ pragma, want string }{
		{"journal_mode", "wal"},
		{"foreign_keys", "1"},
		{"synchronous", "2"},
		{"busy_timeout", fmt.Sprint(BusyTimeout.Milliseconds())},
	} {
		// Ask several times so that more than one pooled connection answers.
		for range 3 {
			var got string
			if err := s.db.QueryRowContext(ctx, "PRAGMA "+c.pragma).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("PRAGMA %s = %s, want %s", c.pragma, got, c.want)
			}
		}
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestOpenOddPath(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "a?b#c%20d 김", "churon.db")
	s, err := Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	c := mustConv(t, s, "x")
	s.Close()
	s, err = Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Conversation(ctx, c.ID); err != nil {
		t.Fatalf("reopened %s: %v", p, err)
	}
}

func TestConversations(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	a := mustConv(t, s, "first")
	time.Sleep(2 * time.Millisecond)
	b := mustConv(t, s, "second")
	time.Sleep(2 * time.Millisecond)
	c, err := s.CreateConversation(ctx, Conversation{Title: "third", SystemPrompt: "be brief", Sampler: `{"temperature":0}`, ModelPath: "/m.gguf"})
	if err != nil {
		t.Fatal(err)
	}
	if c.SystemPrompt != "be brief" || c.Sampler != `{"temperature":0}` || c.ModelPath != "/m.gguf" || c.Created.IsZero() || c.Deleted() {
		t.Fatalf("created %+v", c)
	}
	order := func() string {
		list, err := s.ListConversations(ctx, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var titles []string
		for _, c := range list {
			titles = append(titles, c.Title)
		}
		return strings.Join(titles, ",")
	}
	if got := order(); got != "third,second,first" {
		t.Fatalf("order %s", got)
	}
	time.Sleep(2 * time.Millisecond)
	mustAdd(t, s, a.ID, RoleUser, "hello") // a message moves a conversation to the top
	if got := order(); got != "first,third,second" {
		t.Fatalf("after a message: %s", got)
	}
	if err := s.SetPinned(ctx, b.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := s.RenameConversation(ctx, b.ID, "pinned one"); err != nil {
		t.Fatal(err)
	}
	if got := order(); got != "pinned one,first,third" {
		t.Fatalf("after pin and rename: %s", got)
	}
	c.SystemPrompt, c.Sampler = "be long", `{"temperature":1}`
	if err := s.UpdateConversation(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Conversation(ctx, c.ID); got.SystemPrompt != "be long" || got.Sampler != `{"temperature":1}` {
		t.Fatalf("update: %+v", got)
	}
	if err := s.SetModelPath(ctx, c.ID, "/new.gguf"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Conversation(ctx, c.ID); got.ModelPath != "/new.gguf" {
		t.Fatalf("model path %q", got.ModelPath)
	}
	if err := s.SetModelPath(ctx, 999, "/x.gguf"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("model path of a missing conversation: %v", err)
	}
	if err := s.RenameConversation(ctx, 999, "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("rename of a missing conversation: %v", err)
	}
	if _, err := s.Conversation(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing conversation: %v", err)
	}
	if list, _ := s.ListConversations(ctx, ListOptions{Limit: 2}); len(list) != 2 {
		t.Fatalf("limit 2 gave %d", len(list))
	}
}

func TestMessagesAndStreaming(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	c := mustConv(t, s, "chat")
	u := mustAdd(t, s, c.ID, RoleUser, "Tell me a story")
	a, err := s.AppendAssistant(ctx, c.ID, Message{Model: "stories260K.gguf", Quant: "F32", Sampler: `{"seed":1}`})
	if err != nil {
		t.Fatal(err)
	}
	if u.Position != 1 || a.Position != 2 || a.Role != RoleAssistant || a.Content != "" || a.FinishReason != "" {
		t.Fatalf("user %+v assistant %+v", u, a)
	}
	for _, part := range []string{"Once", "Once upon", "Once upon a time"} {
		if err := s.UpdateMessage(ctx, a.ID, part); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Message(ctx, a.ID); got.Content != part {
			t.Fatalf("content %q, want %q", got.Content, part)
		}
	}
	fin := Message{ID: a.ID, Content: "Once upon a time, there was a dog.", Model: "stories260K.gguf", Quant: "F32", Sampler: `{"seed":1}`,
		PromptTokens: 12, GenTokens: 9, TTFT: 1500 * time.Microsecond, PromptTPS: 800.5, GenTPS: 250.25, FinishReason: "eos"}
	if err := s.FinishMessage(ctx, fin); err != nil {
		t.Fatal(err)
	}
	got, err := s.Message(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ParentID != u.ID {
		t.Fatalf("the answer follows message %d, want the question %d", got.ParentID, u.ID)
	}
	got.Created, got.Updated, got.ConversationID, got.Position, got.Role = time.Time{}, time.Time{}, 0, 0, ""
	got.ParentID, got.Selected = 0, 0
	if got != fin {
		t.Fatalf("finished message\n got %+v\nwant %+v", got, fin)
	}
	if err := s.FinishMessage(ctx, Message{ID: 999}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("finish of a missing message: %v", err)
	}
	if err := s.UpdateMessage(ctx, 999, "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("update of a missing message: %v", err)
	}
	if _, err := s.AddMessage(ctx, Message{ConversationID: 999, Role: RoleUser}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("message in a missing conversation: %v", err)
	}
	if _, err := s.AddMessage(ctx, Message{ConversationID: c.ID, Role: "robot"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad role: %v", err)
	}

	another := mustAdd(t, s, c.ID, RoleUser, "another")
	answer := mustAdd(t, s, c.ID, RoleAssistant, "answer")
	for _, m := range []Message{answer, another} {
		if err := s.DeleteMessage(ctx, m.ID); err != nil {
			t.Fatalf("delete %d: %v", m.ID, err)
		}
	}
	msgs, err := s.Messages(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].ID != u.ID || msgs[1].ID != a.ID {
		t.Fatalf("after deleting the last turn: %+v", msgs)
	}
	if next := mustAdd(t, s, c.ID, RoleUser, "again"); next.Position != 3 {
		t.Fatalf("position after deleting the last turn %d, want 3", next.Position)
	}
	if err := s.DeleteMessage(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if msgs, _ := s.Messages(ctx, c.ID); len(msgs) != 2 || msgs[0].ID != a.ID {
		t.Fatalf("after delete: %+v", msgs)
	}
}

func TestSoftDelete(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	keep := mustConv(t, s, "keep")
	gone := mustConv(t, s, "gone")
	m := mustAdd(t, s, gone.ID, RoleUser, "a secret recipe")
	mustAdd(t, s, keep.ID, RoleUser, "a public recipe")
	hits := func() int {
		h, err := s.Search(ctx, "recipe", 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(h)
	}
	if err := s.DeleteConversation(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteConversation(ctx, gone.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	list, _ := s.ListConversations(ctx, ListOptions{})
	trash, _ := s.ListConversations(ctx, ListOptions{Deleted: true})
	if len(list) != 1 || list[0].ID != keep.ID || len(trash) != 1 || trash[0].ID != gone.ID || !trash[0].Deleted() {
		t.Fatalf("list %+v trash %+v", list, trash)
	}
	if hits() != 1 {
		t.Fatal("a deleted conversation is still searchable")
	}
	if err := s.RestoreConversation(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	if hits() != 2 {
		t.Fatal("a restored conversation is not searchable")
	}
	if err := s.RestoreConversation(ctx, gone.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("restoring a live conversation: %v", err)
	}

	if err := s.DeleteConversation(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PurgeDeleted(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("purge of old ones: %d, %v", n, err)
	}
	if n, err := s.PurgeDeleted(ctx, time.Now()); err != nil || n != 1 {
		t.Fatalf("purge: %d, %v", n, err)
	}
	if _, err := s.Message(ctx, m.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a purged conversation's message: %v", err)
	}
	if err := s.RestoreConversation(ctx, gone.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("restore after purge: %v", err)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestSearch(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	ko := mustConv(t, s, "한국 요리")
	en := mustConv(t, s, "English")
	kimchi := mustAdd(t, s, ko.ID, RoleUser, "저는 김치찌개를 정말 좋아해요. 두부도 넣어 주세요.")
	apple := mustAdd(t, s, ko.ID, RoleAssistant, "사과는 빨갛고 맛있어요")
	hello := mustAdd(t, s, en.ID, RoleUser, "Hello World, this is 100% real_data")
	mixed := mustAdd(t, s, en.ID, RoleAssistant, "Kimchi (김치) is a Korean side dish.")
	streamed, err := s.AppendAssistant(ctx, en.ID, Message{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateMessage(ctx, streamed.ID, "a growing answer about zebras"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		query string
		want  []int64 // newest first
	}{
		{"김치", []int64{mixed.ID, kimchi.ID}}, // two syllables: the LIKE path
		{"김치찌개", []int64{kimchi.ID}},         // indexed
		{"김치찌개를", []int64{kimchi.ID}},        // the word with its particle
		{"찌개", []int64{kimchi.ID}},           // inside a word
		{"김치 두부", []int64{kimchi.ID}},        // both terms
		{"김치 kimchi", []int64{mixed.ID}},     // mixed scripts
		{"사과", []int64{apple.ID}},
		{"김", []int64{mixed.ID, kimchi.ID}}, // one syllable
		{"hello", []int64{hello.ID}},
		{"HELLO", []int64{hello.ID}},         // case-insensitive
		{"wor", []int64{hello.ID}},           // inside a word
		{`"world, this"`, []int64{hello.ID}}, // phrase
		{"100%", []int64{hello.ID}},          // LIKE wildcards are literal
		{"0%", []int64{hello.ID}},
		{"o_", nil}, // '_' is not a wildcard
		{"d_t", nil},
		{"real_data", []int64{hello.ID}},
		{"zebras", []int64{streamed.ID}}, // an updated message is reindexed
		{"growing", []int64{streamed.ID}},
		{"된장", nil},
		{`bad"quote`, nil},
		{"NOT", nil}, // FTS5 operators are plain text here
		{"OR", []int64{mixed.ID, hello.ID}},
	}
	for _, c := range cases {
		hits, err := s.Search(ctx, c.query, 0)
		if err != nil {
			t.Errorf("Search(%q): %v", c.query, err)
			continue
		}
		var got []int64
		for _, h := range hits {
			got = append(got, h.MessageID)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("Search(%q) = %v, want %v", c.query, got, c.want)
		}
	}
	hits, _ := s.Search(ctx, "김치찌개", 0)
	if len(hits) != 1 || hits[0].ConversationID != ko.ID || hits[0].ConversationTitle != "한국 요리" || hits[0].Role != RoleUser ||
		!strings.Contains(hits[0].Snippet, "김치찌개를") {
		t.Fatalf("hit %+v", hits)
	}
	if _, err := s.Search(ctx, "  ", 0); !errors.Is(err, ErrInvalid) {
		t.Fatalf("empty query: %v", err)
	}
	if hits, _ := s.Search(ctx, "김", 1); len(hits) != 1 {
		t.Fatalf("limit 1 gave %d", len(hits))
	}
	// Deleting a message removes it from the index.
	if err := s.DeleteMessage(ctx, kimchi.ID); err != nil {
		t.Fatal(err)
	}
	if hits, _ := s.Search(ctx, "김치찌개", 0); len(hits) != 0 {
		t.Fatalf("deleted message still found: %+v", hits)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestSnippet(t *testing.T) {
	long := strings.Repeat("가", 100) + "김치찌개" + strings.Repeat("나", 100)
	got := snippet(long, []string{"김치"}, 5)
	if got != "…가가가가가김치찌개나나나…" {
		t.Fatalf("snippet %q", got)
	}
	if got := snippet("short\ntext", []string{"nothing"}, 40); got != "short text" {
		t.Fatalf("no match: %q", got)
	}
	if got := snippet("İstanbul HELLO", []string{"hello"}, 2); got != "…l HELLO" {
		t.Fatalf("case: %q", got)
	}
}

func TestSplitQuery(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a b  c", "[a b c]"},
		{`"a b" c`, "[a b c]"},
		{`x"a b"`, "[x a b]"},
		{`"unterminated phrase`, "[unterminated phrase]"},
		{"김치\t찌개", "[김치 찌개]"},
		{"", "[]"},
	} {
		if got := fmt.Sprint(SplitQuery(c.in)); got != c.want {
			t.Errorf("SplitQuery(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestSettings(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	if _, ok, err := s.Setting(ctx, "theme"); ok || err != nil {
		t.Fatalf("unset: %v %v", ok, err)
	}
	for _, v := range []string{"dark", "light"} {
		if err := s.SetSetting(ctx, "theme", v); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := s.Setting(ctx, "theme"); got != v || !ok || err != nil {
			t.Fatalf("theme = %q %v %v", got, ok, err)
		}
	}
	s.SetSetting(ctx, "lang", "ko")
	all, err := s.Settings(ctx)
	if err != nil || len(all) != 2 || all["lang"] != "ko" {
		t.Fatalf("settings %v %v", all, err)
	}
	if err := s.DeleteSetting(ctx, "lang"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Setting(ctx, "lang"); ok {
		t.Fatal("deleted setting still set")
	}
}

// TestUpgradeFromV1 writes a database as the first release did and opens
// it with this build.
func TestUpgradeFromV1(t *testing.T) {
	ctx := context.Background()
	s := upgraded(t, 1,
		`INSERT INTO conversations (id, title, created, updated, pinned, system_prompt, sampler, model_path)
		 VALUES (7, '옛 대화', 1000, 2000, 1, 'sys', '{"temperature":0.5}', '/old.gguf')`,
		`INSERT INTO messages (conversation_id, position, role, content, created, updated, finish_reason)
		 VALUES (7, 1, 'user', '된장찌개를 끓이는 방법', 1000, 1000, '')`,
		`INSERT INTO messages (conversation_id, position, role, content, created, updated, finish_reason, gen_tokens)
		 VALUES (7, 2, 'assistant', 'Boil the doenjang stew gently', 1500, 2000, 'eos', 42)`,
		`INSERT INTO settings (key, value) VALUES ('theme', 'dark')`,
	)
	c, err := s.Conversation(ctx, 7)
	if err != nil || c.Title != "옛 대화" || !c.Pinned || c.SystemPrompt != "sys" || c.Deleted() {
		t.Fatalf("conversation %+v %v", c, err)
	}
	msgs, err := s.Messages(ctx, 7)
	if err != nil || len(msgs) != 2 || msgs[1].GenTokens != 42 || msgs[1].FinishReason != "eos" {
		t.Fatalf("messages %+v %v", msgs, err)
	}
	for _, q := range []string{"된장찌개", "된장", "doenjang"} {
		if hits, err := s.Search(ctx, q, 0); err != nil || len(hits) != 1 {
			t.Errorf("old messages not indexed: Search(%q) = %+v, %v", q, hits, err)
		}
	}
	if v, _, _ := s.Setting(ctx, "theme"); v != "dark" {
		t.Fatalf("setting %q", v)
	}
	if err := s.DeleteConversation(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if err := s.RestoreConversation(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestSchemaTooNew(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "churon.db")
	s, err := Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE schema_version SET version = ?`, SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(ctx, p); !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("opening a newer database: %v", err)
	}
}

// TestTwoWriters shares one file between two Stores, as the desktop app
// and `churon chat` do, writing at the same time.
func TestTwoWriters(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "churon.db")
	var stores [2]*Store
	for i := range stores {
		s, err := Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	c := mustConv(t, stores[0], "shared")
	const each = 25
	var wg sync.WaitGroup
	errs := make(chan error, 4*each)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[w%2]
			for i := range each {
				if _, err := s.AddMessage(ctx, Message{ConversationID: c.ID, Role: RoleUser, Content: fmt.Sprintf("w%d m%d", w, i)}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	msgs, err := stores[1].Messages(ctx, c.ID)
	if err != nil || len(msgs) != 4*each {
		t.Fatalf("%d messages, %v", len(msgs), err)
	}
	for i, m := range msgs {
		if m.Position != i+1 {
			t.Fatalf("message %d has position %d", i, m.Position)
		}
	}
}
