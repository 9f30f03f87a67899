package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/churon/churon/app/store"
)

// library fills a store with conversations that use every field: Korean,
// a pinned chat, system and tool messages, an answer that never finished,
// settings that are not compact JSON and settings that are not JSON.
func library(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	r := addChat(t, st, "Recipes", "How do I make kimchi stew?", "Fry the kimchi, then simmer.\n\n```sh\necho \"<done>\" && exit 0\n```")
	versions(t, st, r.ID)
	time.Sleep(2 * time.Millisecond) // distinct creation times, as in life
	c := addChat(t, st, "김치찌개 레시피", "김치찌개 만드는 법 알려 줘 😋", "| 재료 | 양 |\n|---|---|\n| 김치 | 300 g |")
	if err := st.SetPinned(ctx, c.ID, true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond)
	odd, err := st.CreateConversation(ctx, store.Conversation{Title: "", SystemPrompt: "", Sampler: `{ "temperature" : 1 }`})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []store.Message{
		{Role: store.RoleSystem, Content: "You are a tool user."},
		{Role: store.RoleUser, Content: "line 1\nline 2\t\"quoted\" <b>&amp;</b> \\ \u2028"},
		{Role: store.RoleTool, Content: `{"result": 42}`},
		{Role: store.RoleAssistant, Content: "half an ans", Model: "m.gguf", Quant: "F16", Sampler: "not json at all",
			PromptTokens: 40, PromptReused: 31},
		{Role: store.RoleNotice, Content: "Older messages are no longer seen by the model."},
	} {
		m.ConversationID = odd.ID
		if _, err := st.AddMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	// A conversation in the trash is not exported.
	gone := addChat(t, st, "deleted", "q", "a")
	if err := st.DeleteConversation(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
}

// versions gives a conversation of a question and an answer versions: a
// regenerated answer (shown) and an edited question with its own answer.
func versions(t *testing.T, st *store.Store, conv int64) {
	t.Helper()
	ctx := context.Background()
	msgs, err := st.Messages(ctx, conv)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("%+v %v", msgs, err)
	}
	time.Sleep(2 * time.Millisecond)
	a2, err := st.AddVersion(ctx, msgs[1].ID, store.Message{ConversationID: conv, Role: store.RoleAssistant, Content: "Simmer it longer.", Model: "m.gguf"})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond)
	if _, err := st.AddVersion(ctx, msgs[0].ID, store.Message{ConversationID: conv, Role: store.RoleUser, Content: "And for four people?"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddMessage(ctx, store.Message{ConversationID: conv, Role: store.RoleAssistant, Content: "Double it."}); err != nil {
		t.Fatal(err)
	}
	if err := st.SelectMessage(ctx, a2.ID); err != nil {
		t.Fatal(err)
	}
}

func exportJSON(t *testing.T, st *store.Store) []byte {
	t.Helper()
	chats, err := LoadAll(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, chats, testOpt()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// normalise drops what may differ between libraries (ids) and orders the
// conversations by creation time.
func normalise(t *testing.T, data []byte) Document {
	t.Helper()
	doc, err := Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for i := range doc.Conversations {
		c := &doc.Conversations[i]
		c.ID = 0
		// Ids become their order in the file, which parents refer to.
		ids := map[int64]int64{}
		for j := range c.Messages {
			ids[c.Messages[j].ID] = int64(len(ids) + 1)
			c.Messages[j].ID = 0
		}
		for j := range c.OtherVersions {
			ids[c.OtherVersions[j].ID] = int64(len(ids) + 1)
		}
		for j := range c.OtherVersions {
			c.OtherVersions[j].ID, c.OtherVersions[j].Parent = ids[c.OtherVersions[j].ID], ids[c.OtherVersions[j].Parent]
		}
	}
	slices.SortFunc(doc.Conversations, func(a, b Conversation) int { return a.Created.Compare(b.Created) })
	return *doc
}

func importJSON(t *testing.T, st *store.Store, data []byte) store.ImportResult {
	t.Helper()
	res, err := Import(context.Background(), st, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestJSONRoundTrip is the check: export → import into an empty
// library → export gives the same conversations and messages (ids
// remapped), and the stored values are identical too.
func TestJSONRoundTrip(t *testing.T) {
	a, b := openStore(t), openStore(t)
	library(t, a)
	first := exportJSON(t, a)
	res := importJSON(t, b, first)
	if len(res.Conversations) != 3 || res.Count(store.Imported) != 3 {
		t.Fatalf("import: %+v", res)
	}
	second := exportJSON(t, b)
	da, db := normalise(t, first), normalise(t, second)
	if !reflect.DeepEqual(da, db) {
		ja, _ := json.MarshalIndent(da, "", " ")
		jb, _ := json.MarshalIndent(db, "", " ")
		t.Fatalf("the second export differs from the first:\n%s\n---\n%s", ja, jb)
	}
	// The same, byte for byte, once ids are gone.
	ja, _ := json.Marshal(da)
	jb, _ := json.Marshal(db)
	if !bytes.Equal(ja, jb) {
		t.Fatal("the exports differ in their bytes")
	}

	// And what the store holds is the same, field by field.
	ca, _ := LoadAll(context.Background(), a)
	cb, _ := LoadAll(context.Background(), b)
	strip := func(cs []Chat) []Chat {
		for i := range cs {
			cs[i].Conversation.ID = 0
			for _, ms := range [][]store.Message{cs[i].Messages, cs[i].Others} {
				for j := range ms {
					ms[j].ID, ms[j].ConversationID, ms[j].Position, ms[j].ParentID, ms[j].Selected = 0, 0, 0, 0, 0
				}
			}
		}
		slices.SortFunc(cs, func(x, y Chat) int { return x.Conversation.Created.Compare(y.Conversation.Created) })
		return cs
	}
	if sa, sb := strip(ca), strip(cb); !reflect.DeepEqual(sa, sb) {
		t.Fatalf("stored values differ:\n%+v\n---\n%+v", sa, sb)
	}

	// Spot checks that the document holds what it should.
	var found bool
	for _, c := range da.Conversations {
		switch c.Title {
		case "":
			found = true
			if c.SettingsText != `{ "temperature" : 1 }` || c.Settings != nil {
				t.Errorf("non-compact settings not kept as text: %q %s", c.SettingsText, c.Settings)
			}
			if len(c.Messages) != 5 || c.Messages[3].SettingsText != "not json at all" || c.Messages[3].FinishReason != "" ||
				c.Messages[0].Role != "system" || c.Messages[2].Role != "tool" ||
				c.Messages[3].PromptReused != 31 || c.Messages[4].Role != "notice" {
				t.Errorf("messages: %+v", c.Messages)
			}
		case "김치찌개 레시피":
			if !c.Pinned || compact(c.Settings) != `{"temperature":0.8,"top_k":40,"seed":-1}` || c.ModelPath != "/models/tiny-q8_0.gguf" {
				t.Errorf("conversation: %+v", c)
			}
			m := c.Messages[1]
			if m.TTFTMs != 123.456789 || m.PromptTPS != 250.25 || m.GenTPS != 33.3 || m.GenTokens != 5 || m.PromptTokens != 17 ||
				m.Quant != "Q8_0" || m.FinishReason != "eos" || compact(m.Settings) != `{"temperature":0.8,"top_k":40,"seed":99}` {
				t.Errorf("answer: %+v", m)
			}
		case "deleted":
			t.Error("a conversation in the trash was exported")
		}
	}
	if !found {
		t.Error("the untitled conversation is missing")
	}
	if !bytes.Contains(first, []byte(`"format": "churon-chats"`)) || !bytes.Contains(first, []byte(`"version": 1`)) ||
		!bytes.Contains(first, []byte(`<b>&amp;</b>`)) {
		t.Errorf("document head or unescaped text missing:\n%s", first[:200])
	}
}

// Importing twice, importing back into the origin, continuing a chat and
// importing again: nothing is ever duplicated, new turns are appended.
func TestImportMerges(t *testing.T) {
	ctx := context.Background()
	a, b := openStore(t), openStore(t)
	library(t, a)
	data := exportJSON(t, a)
	importJSON(t, b, data)
	if res := importJSON(t, b, data); res.Count(store.Skipped) != 3 {
		t.Errorf("second import: %+v", res)
	}
	if res := importJSON(t, a, exportJSON(t, b)); res.Count(store.Skipped) != 3 {
		t.Errorf("import back into the origin: %+v", res)
	}
	for _, st := range []*store.Store{a, b} {
		if cs, _ := st.ListConversations(ctx, store.ListOptions{}); len(cs) != 3 {
			t.Errorf("%d conversations after repeated imports, want 3", len(cs))
		}
	}

	// The chat goes on in a; b receives the new turns only.
	cs, _ := a.ListConversations(ctx, store.ListOptions{})
	var recipes store.Conversation
	for _, c := range cs {
		if c.Title == "Recipes" {
			recipes = c
		}
	}
	if _, err := a.AddMessage(ctx, store.Message{ConversationID: recipes.ID, Role: store.RoleUser, Content: "And for four people?"}); err != nil {
		t.Fatal(err)
	}
	res := importJSON(t, b, exportJSON(t, a))
	if res.Count(store.Extended) != 1 || res.Count(store.Skipped) != 2 {
		t.Fatalf("import after the chat went on: %+v", res)
	}
	for _, c := range res.Conversations {
		if c.Outcome == store.Extended && (c.Messages != 1 || c.Title != "Recipes") {
			t.Errorf("extended: %+v", c)
		}
	}
	if !reflect.DeepEqual(normalise(t, exportJSON(t, a)), normalise(t, exportJSON(t, b))) {
		t.Error("a and b differ after the merge")
	}
	// The older export brings nothing back: b already has more.
	if res := importJSON(t, b, data); res.Count(store.Skipped) != 3 {
		t.Errorf("older export: %+v", res)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct {
		name, doc string
		want      error
		msg       string
	}{
		{"empty", ``, ErrMalformed, ""},
		{"not json", `hello`, ErrMalformed, "line 1, column 1"},
		{"syntax", "{\n  \"version\": 1,\n  \"conversations\": [,]\n}", ErrMalformed, "line 3, column 21"},
		{"array", `[1, 2]`, ErrMalformed, ""},
		{"no version", `{"conversations": []}`, ErrMalformed, `no "version"`},
		{"string version", `{"version": "1", "conversations": []}`, ErrMalformed, "not a whole number"},
		{"zero version", `{"version": 0, "conversations": []}`, ErrMalformed, "versions start at 1"},
		{"newer", `{"version": 2, "conversations": [{"title": 5}]}`, ErrVersion, "version 2"},
		{"much newer", `{"format": "churon-chats", "version": 17, "whatever": true}`, ErrVersion, "update Churon"},
		{"other format", `{"format": "something-else", "version": 1, "conversations": []}`, ErrMalformed, `"something-else"`},
		{"no conversations", `{"version": 1}`, ErrMalformed, `no "conversations"`},
		{"null conversations", `{"version": 1, "conversations": null}`, ErrMalformed, `no "conversations"`},
		{"conversations object", `{"version": 1, "conversations": {}}`, ErrMalformed, "want a list"},
		{"title number", "{\"version\": 1, \"conversations\": [\n{\"title\": 5}]}", ErrMalformed, "line 2"},
		{"bad time", `{"version": 1, "conversations": [{"created": "yesterday"}]}`, ErrMalformed, ""},
		{"no role", `{"version": 1, "conversations": [{"title": "x", "messages": [{"content": "hi"}]}]}`, ErrMalformed, `conversation 1 ("x"), message 1: no "role"`},
		{"bad role", `{"version": 1, "conversations": [{"messages": [{"role": "user"}, {"role": "robot"}]}]}`, ErrMalformed, `message 2: unknown role "robot"`},
		{"settings not object", `{"version": 1, "conversations": [{"settings": [1]}]}`, ErrMalformed, "not an object"},
		{"settings twice", `{"version": 1, "conversations": [{"settings": {}, "settings_text": "x"}]}`, ErrMalformed, "both"},
		{"negative tokens", `{"version": 1, "conversations": [{"messages": [{"role": "assistant", "gen_tokens": -1}]}]}`, ErrMalformed, "negative"},
		{"more reused than prompt", `{"version": 1, "conversations": [{"messages": [{"role": "assistant", "prompt_tokens": 3, "prompt_reused": 4}]}]}`, ErrMalformed, "reused than the prompt had"},
	} {
		_, err := Decode(strings.NewReader(c.doc))
		if !errors.Is(err, c.want) || !strings.Contains(fmtErr(err), c.msg) {
			t.Errorf("%s: error %v, want %v containing %q", c.name, err, c.want, c.msg)
		}
		// Import says the same and writes nothing.
		st := openStore(t)
		if _, err := Import(context.Background(), st, strings.NewReader(c.doc)); !errors.Is(err, c.want) {
			t.Errorf("%s: Import error %v", c.name, err)
		}
		if cs, _ := st.ListConversations(context.Background(), store.ListOptions{}); len(cs) != 0 {
			t.Errorf("%s: a failed import left %d conversations", c.name, len(cs))
		}
	}
	// The smallest valid document, and unknown fields are ignored.
	doc, err := Decode(strings.NewReader(`{"version": 1, "future": 1, "conversations": [{"messages": [{"role": "user", "content": "hi", "mood": "good"}]}]}`))
	if err != nil || len(doc.Conversations) != 1 || doc.Conversations[0].Messages[0].Content != "hi" {
		t.Errorf("minimal document: %+v, %v", doc, err)
	}
}

func compact(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "invalid: " + err.Error()
	}
	return buf.String()
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A hand-made document without times imports with the time of the import.
func TestImportWithoutTimes(t *testing.T) {
	st := openStore(t)
	before := time.Now().Add(-time.Second)
	res := importJSON(t, st, []byte(`{"version": 1, "conversations": [{"title": "hand-made", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}]}`))
	if res.Count(store.Imported) != 1 {
		t.Fatalf("%+v", res)
	}
	c, err := st.Conversation(context.Background(), res.Conversations[0].ID)
	if err != nil || c.Title != "hand-made" || c.Created.Before(before) {
		t.Errorf("conversation %+v, %v", c, err)
	}
	msgs, _ := st.Messages(context.Background(), c.ID)
	if len(msgs) != 2 || msgs[1].Content != "hello" || msgs[1].Created.Before(before) {
		t.Errorf("messages %+v", msgs)
	}
}

// The example in docs/export-format.md is a valid document.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "export-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, "```json\n")
	j := strings.Index(s[i+8:], "\n```")
	if i < 0 || j < 0 {
		t.Fatal("no JSON example in docs/export-format.md")
	}
	d, err := Decode(strings.NewReader(s[i+8 : i+8+j]))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Conversations) != 1 || len(d.Conversations[0].Messages) != 2 || d.Conversations[0].Messages[1].GenTokens != 412 {
		t.Errorf("example decodes to %+v", d)
	}
	st := openStore(t)
	if res := importJSON(t, st, []byte(s[i+8:i+8+j])); res.Count(store.Imported) != 1 {
		t.Errorf("example imports as %+v", res)
	}
}

// TestVersionsExported: JSON carries every version and imports them back
// with the same branch shown; the readable formats show that branch and
// say which version each message is.
func TestVersionsExported(t *testing.T) {
	a, b := openStore(t), openStore(t)
	library(t, a)
	data := exportJSON(t, a)
	var recipes *Conversation
	doc := normalise(t, data)
	for i := range doc.Conversations {
		if doc.Conversations[i].Title == "Recipes" {
			recipes = &doc.Conversations[i]
		}
	}
	if recipes == nil || len(recipes.Messages) != 2 || len(recipes.OtherVersions) != 3 {
		t.Fatalf("Recipes exported as %+v", recipes)
	}
	if m := recipes.Messages[1]; m.Content != "Simmer it longer." || m.Version != 2 || m.Versions != 2 {
		t.Fatalf("the answer shown is %+v", m)
	}
	importJSON(t, b, data)
	chats, err := LoadAll(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range chats {
		if ch.Conversation.Title != "Recipes" {
			continue
		}
		if len(ch.Others) != 3 || ch.Messages[1].Content != "Simmer it longer." || ch.Messages[0].Versions != 2 {
			t.Fatalf("imported: %+v, others %+v", ch.Messages, ch.Others)
		}
		for _, w := range []struct {
			name  string
			write func(io.Writer, Chat, Options) error
		}{{"markdown", WriteMarkdown}, {"html", WriteHTML}, {"text", WriteText}} {
			var buf bytes.Buffer
			if err := w.write(&buf, ch, testOpt()); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if !strings.Contains(out, "version 2 of 2") || !strings.Contains(out, "version 1 of 2") ||
				!strings.Contains(out, "Simmer it longer.") || strings.Contains(out, "Double it.") {
				t.Errorf("%s shows another branch, or no version notes:\n%s", w.name, out)
			}
		}
		// Switching to another version there shows its branch.
		var q2 int64
		for _, m := range ch.Others {
			if m.Content == "And for four people?" {
				q2 = m.ID
			}
		}
		if err := b.SelectMessage(context.Background(), q2); err != nil {
			t.Fatal(err)
		}
		got, _ := Load(context.Background(), b, ch.Conversation.ID)
		if len(got.Messages) != 2 || got.Messages[1].Content != "Double it." {
			t.Fatalf("the edit's branch: %+v", got.Messages)
		}
		return
	}
	t.Fatal("Recipes was not imported")
}
