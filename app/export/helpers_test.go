package export

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/churon/churon/app/store"
	"github.com/churon/churon/app/store/storetest"
)

// fixedNow is the export time of every test: outputs are repeatable.
var fixedNow = time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC)

// testOpt shows dates in UTC at a fixed export time.
func testOpt() Options {
	return Options{Location: time.UTC, Now: func() time.Time { return fixedNow }}
}

// render writes chat in format f and returns the text.
func render(t *testing.T, f Format, chat Chat, opt Options) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, f, chat, opt); err != nil {
		t.Fatalf("%s: %v", f.Name(), err)
	}
	return buf.String()
}

// renderAcceptance renders the acceptance chat in f, a format that writes
// messages as stored, and checks that each message's text is in the
// output verbatim and so is each of want.
func renderAcceptance(t *testing.T, f Format, want ...string) string {
	t.Helper()
	chat := acceptance(t)
	out := render(t, f, chat, testOpt())
	for i, m := range chat.Messages {
		if !strings.Contains(out, m.Content) {
			t.Errorf("%s: message %d is not in the export verbatim", f.Name(), i+1)
		}
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s: the export lacks %q", f.Name(), w)
		}
	}
	return out
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	return storetest.Temp(t)
}

// acceptance is the acceptance conversation (Korean text, a
// table, fenced code, <script>alert(1)</script> and other injections),
// read from testdata/acceptance.json.
func acceptance(t *testing.T) Chat {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "acceptance.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	ics, err := doc.Chats()
	if err != nil {
		t.Fatal(err)
	}
	if len(ics) != 1 {
		t.Fatalf("acceptance.json holds %d conversations", len(ics))
	}
	c := Chat{Conversation: ics[0].Conversation, Messages: ics[0].Messages}
	c.Conversation.ID = 7
	for i := range c.Messages {
		c.Messages[i].ID = int64(21 + i)
		c.Messages[i].ConversationID = 7
		c.Messages[i].Position = i + 1
	}
	return c
}

// addChat stores a conversation with a user turn and a finished answer.
func addChat(t *testing.T, st *store.Store, title, question, answer string) store.Conversation {
	t.Helper()
	ctx := context.Background()
	c, err := st.CreateConversation(ctx, store.Conversation{Title: title, SystemPrompt: "Be brief.",
		Sampler: `{"temperature":0.8,"top_k":40,"seed":-1}`, ModelPath: "/models/tiny-q8_0.gguf"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleUser, Content: question}); err != nil {
		t.Fatal(err)
	}
	a, err := st.AppendAssistant(ctx, c.ID, store.Message{Model: "tiny-q8_0.gguf", Quant: "Q8_0", Sampler: `{"temperature":0.8,"top_k":40,"seed":99}`})
	if err != nil {
		t.Fatal(err)
	}
	a.Content, a.PromptTokens, a.GenTokens = answer, 17, 5
	a.TTFT, a.PromptTPS, a.GenTPS, a.FinishReason = 123456789*time.Nanosecond, 250.25, 33.3, "eos"
	if err := st.FinishMessage(ctx, a); err != nil {
		t.Fatal(err)
	}
	c, err = st.Conversation(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
