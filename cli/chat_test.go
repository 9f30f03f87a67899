package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/internal/testdata"
)

// chatTurn runs one scripted `churon chat … --json` turn that must
// succeed.
func chatTurn(t *testing.T, args ...string) chatJSON {
	t.Helper()
	var got chatJSON
	runJSON(t, &got, append([]string{"chat"}, args...)...)
	return got
}

func openHome(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), paths.Database())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestChatTwoTurns: two scripted runs on the same conversation leave a
// two-turn conversation in the database under $CHURON_HOME.
func TestChatTwoTurns(t *testing.T) {
	model := testdata.Stories260K(t)
	home := t.TempDir()
	t.Setenv(paths.EnvHome, home)
	first := chatTurn(t, "-m", model, "--new", "--message", "Once upon a time", "--json", "-n", "12", "--temp", "0", "-t", "1")
	if first.ConversationID == 0 || first.UserMessageID == 0 || first.AssistantMessageID == 0 || first.Text == "" ||
		first.FinishReason != "length" || first.GenTokens != 12 || first.TTFTMs <= 0 || first.GenTPS <= 0 ||
		first.PromptTokensReused != 0 || first.PromptTokensProcessed != first.PromptTokens || first.Model != model {
		t.Fatalf("first turn %+v", first)
	}
	// The second run does not repeat the settings: the conversation kept them.
	second := chatTurn(t, "-m", model, "--conversation", fmt.Sprint(first.ConversationID), "--message", "Tell me more", "--json", "-t", "1")
	if second.ConversationID != first.ConversationID || second.GenTokens != 12 || second.FinishReason != "length" ||
		second.PromptTokens <= first.PromptTokens+first.GenTokens {
		t.Fatalf("second turn %+v", second)
	}

	st := openHome(t)
	if st.Path() != filepath.Join(home, "data", "churon.db") {
		t.Fatalf("database at %s", st.Path())
	}
	msgs, err := st.Messages(context.Background(), first.ConversationID)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id      int64
		role    store.Role
		content string
	}{
		{first.UserMessageID, store.RoleUser, "Once upon a time"},
		{first.AssistantMessageID, store.RoleAssistant, first.Text},
		{second.UserMessageID, store.RoleUser, "Tell me more"},
		{second.AssistantMessageID, store.RoleAssistant, second.Text},
	}
	if len(msgs) != len(want) {
		t.Fatalf("%d messages stored, want %d", len(msgs), len(want))
	}
	for i, w := range want {
		if m := msgs[i]; m.ID != w.id || m.Role != w.role || m.Content != w.content {
			t.Errorf("message %d: %+v, want %+v", i, m, w)
		}
	}
	if msgs[3].FinishReason != "length" || msgs[3].GenTokens != 12 || msgs[3].Model != "stories260K.gguf" {
		t.Errorf("stored answer %+v", msgs[3])
	}
	c, err := st.Conversation(context.Background(), first.ConversationID)
	if err != nil || c.Title != "Once upon a time" {
		t.Fatalf("conversation %+v %v", c, err)
	}
	if list, _ := st.ListConversations(context.Background(), store.ListOptions{}); len(list) != 1 {
		t.Fatalf("%d conversations", len(list))
	}
}

func TestChatPlainText(t *testing.T) {
	model := testdata.Stories260K(t)
	t.Setenv(paths.EnvHome, t.TempDir())
	out, stderr, code := run(t, "chat", "-m", model, "--message", "The little dog", "-n", "8", "--temp", "0", "-t", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	msgs := lastAnswer(t)
	if out != msgs.Content+"\n" || !strings.Contains(stderr, "8 generated, length") {
		t.Fatalf("stdout %q (stored %q), stderr %q", out, msgs.Content, stderr)
	}
}

func lastAnswer(t *testing.T) store.Message {
	t.Helper()
	st := openHome(t)
	list, err := st.ListConversations(context.Background(), store.ListOptions{})
	if err != nil || len(list) == 0 {
		t.Fatalf("conversations %v %v", list, err)
	}
	msgs, err := st.Messages(context.Background(), list[0].ID)
	if err != nil || len(msgs) == 0 {
		t.Fatalf("messages %v %v", msgs, err)
	}
	return msgs[len(msgs)-1]
}

func TestChatInteractive(t *testing.T) {
	model := testdata.Stories260K(t)
	t.Setenv(paths.EnvHome, t.TempDir())
	old := stdin
	defer func() { stdin = old }()
	stdin = strings.NewReader("Once upon a time\n\n/help\nLily and Ben\n/new\nThe little dog\n/quit\nnever sent\n")
	out, stderr, code := run(t, "chat", "-m", model, "-n", "6", "--temp", "0", "-t", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	st := openHome(t)
	list, err := st.ListConversations(context.Background(), store.ListOptions{})
	if err != nil || len(list) != 2 {
		t.Fatalf("conversations %+v %v", list, err)
	}
	// Newest first: the one after /new.
	second, _ := st.Messages(context.Background(), list[0].ID)
	first, _ := st.Messages(context.Background(), list[1].ID)
	if len(first) != 4 || first[0].Content != "Once upon a time" || first[2].Content != "Lily and Ben" ||
		len(second) != 2 || second[0].Content != "The little dog" {
		t.Fatalf("first %+v\nsecond %+v", first, second)
	}
	for _, m := range []store.Message{first[1], first[3], second[1]} {
		if !strings.Contains(out, m.Content) {
			t.Errorf("answer %q was not printed: %q", m.Content, out)
		}
	}
}

func TestChatUsage(t *testing.T) {
	t.Setenv(paths.EnvHome, t.TempDir())
	wantUsageErrors(t, [][]string{
		// No -m: the built-in demo, or a usage error (TestDemoWithoutModel).
		{"chat", "-m", "x.gguf", "--new", "--conversation", "3", "--message", "hi"},
		{"chat", "-m", "x.gguf", "--json"}, // --json without --message
		{"chat", "-m", "x.gguf", "--message", " "},
		{"chat", "-m", "x.gguf", "--message", "hi", "--top-p", "0"},
		{"chat", "-m", "x.gguf", "--message", "hi", "extra"},
		{"chat", "-m", "x.gguf", "--message", "hi", "--kv", "q4"},
	})
	model := testdata.Stories260K(t)
	if _, stderr, code := run(t, "chat", "-m", model, "--conversation", "999", "--message", "hi"); code != 1 || !strings.Contains(stderr, "not found") {
		t.Errorf("unknown conversation: exit %d: %s", code, stderr)
	}
	if _, stderr, code := run(t, "chat", "-m", filepath.Join(t.TempDir(), "missing.gguf"), "--message", "hi"); code != 1 {
		t.Errorf("missing model: exit %d: %s", code, stderr)
	}
}
