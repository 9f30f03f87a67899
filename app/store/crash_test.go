package store

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/churon/churon/internal/testutil"
)

// crashChildEnv makes the test binary act as the writer that gets killed.
const crashChildEnv = "CHURON_STORE_CRASH_CHILD"

// streamed is the answer after n commits: each commit appends a chunk, so
// any prefix the database holds can be matched exactly.
func streamed(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "조각 %d chunk. ", i)
	}
	return b.String()
}

// finished are the complete messages the child commits before streaming.
var finished = []struct {
	role    Role
	content string
}{
	{RoleUser, "첫 질문: 김치찌개는 어떻게 만들어요?"},
	{RoleAssistant, "Start with well-fermented kimchi and pork."},
	{RoleUser, "Tell me a long story, please."},
}

// TestCrashDuringStream kills a process with SIGKILL while it streams an
// answer into the database, then checks that the database opens, that
// every finished message is intact, and that the partial answer holds the
// text of its last commit.
func TestCrashDuringStream(t *testing.T) {
	p, cmd, out := startWriter(t, crashChildEnv, crashChild)
	var (
		conv, msg int64
		last      int
	)
	lines := bufio.NewScanner(out)
	// Kill after a varying number of commits so the kill lands at
	// different points of a write.
	killAt := 40 + int(time.Now().UnixNano()%40)
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		if len(f) != 4 || f[0] != "committed" {
			continue
		}
		conv, _ = strconv.ParseInt(f[1], 10, 64)
		msg, _ = strconv.ParseInt(f[2], 10, 64)
		last, _ = strconv.Atoi(f[3])
		if last >= killAt {
			break
		}
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL on Unix
		t.Fatal(err)
	}
	err := cmd.Wait()
	if last < killAt {
		t.Fatalf("child stopped after %d commits (%v)", last, err)
	}
	t.Logf("killed the writer after it reported %d commits (%v)", last, err)

	ctx := context.Background()
	s, err := Open(ctx, p)
	if err != nil {
		t.Fatalf("the database does not open after the crash: %v", err)
	}
	defer s.Close()
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.Messages(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != len(finished)+1 {
		t.Fatalf("%d messages after the crash, want %d", len(msgs), len(finished)+1)
	}
	for i, want := range finished {
		if msgs[i].Role != want.role || msgs[i].Content != want.content || msgs[i].FinishReason != "eos" && want.role == RoleAssistant {
			t.Errorf("message %d: %+v, want %s %q", i, msgs[i], want.role, want.content)
		}
	}
	partial := msgs[len(finished)]
	if partial.ID != msg || partial.FinishReason != "" {
		t.Fatalf("partial answer %+v (want id %d, no finish reason)", partial, msg)
	}
	// The child may have committed more after the report the parent read
	// last, before the kill landed; but every reported commit is there,
	// and the text is exactly that of one commit (no torn write).
	k := strings.Count(partial.Content, " chunk. ")
	if k < last || partial.Content != streamed(k) {
		t.Fatalf("partial answer after %d reported commits holds %d chunks in %d bytes: …%q", last, k, len(partial.Content), partial.Content[max(0, len(partial.Content)-80):])
	}
	if hits, err := s.Search(ctx, fmt.Sprintf("조각 %d chunk", last), 0); err != nil || len(hits) != 1 || hits[0].MessageID != msg {
		t.Fatalf("the partial answer is not searchable: %+v %v", hits, err)
	}
	// The database is writable again: finish the interrupted answer.
	if err := s.FinishMessage(ctx, Message{ID: msg, Content: partial.Content, FinishReason: "cancelled"}); err != nil {
		t.Fatal(err)
	}
}

// startWriter starts the test binary again as the writer the test kills,
// on a new database: the test's own function, which in that process
// (env set to the database's path) runs child instead, to its exit. It
// returns the database's path, the writer and what it prints.
func startWriter(t *testing.T, env string, child func(path string)) (string, *exec.Cmd, io.Reader) {
	if p := os.Getenv(env); p != "" {
		child(p)
		os.Exit(0) // children exit themselves; this is in case one returns
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	p := filepath.Join(t.TempDir(), "churon.db")
	cmd, out := testutil.StartChild(t, 2*time.Minute, "^"+t.Name()+"$", env+"="+p)
	return p, cmd, out
}

func crashChild(path string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(3)
	}
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		fail(err)
	}
	c, err := s.CreateConversation(ctx, Conversation{Title: "crash"})
	if err != nil {
		fail(err)
	}
	for _, m := range finished {
		fr := ""
		if m.role == RoleAssistant {
			fr = "eos"
		}
		if _, err := s.AddMessage(ctx, Message{ConversationID: c.ID, Role: m.role, Content: m.content, FinishReason: fr}); err != nil {
			fail(err)
		}
	}
	a, err := s.AppendAssistant(ctx, c.ID, Message{Model: "m.gguf"})
	if err != nil {
		fail(err)
	}
	stop := time.Now().Add(50 * time.Second) // the parent kills us long before
	for i := 1; time.Now().Before(stop); i++ {
		if err := s.UpdateMessage(ctx, a.ID, streamed(i)); err != nil {
			fail(err)
		}
		fmt.Printf("committed %d %d %d\n", c.ID, a.ID, i)
	}
	fail(fmt.Errorf("not killed"))
}
