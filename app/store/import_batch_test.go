package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// setImportBatches makes an import's batches small for one test.
func setImportBatches(t *testing.T, n int, pause time.Duration) {
	t.Helper()
	batch, batchTime, p := importBatch, importBatchTime, importPause
	importBatch, importBatchTime, importPause = n, time.Hour, pause
	t.Cleanup(func() { importBatch, importBatchTime, importPause = batch, batchTime, p })
}

// TestImportBatchIsWhole: an error inside a batch leaves nothing of it,
// and the batches committed before it stay, listed in the result.
func TestImportBatchIsWhole(t *testing.T) {
	for _, tc := range []struct {
		name  string
		batch int
		want  []string // titles in the library after the failed import
	}{
		{"one batch", 500, []string{"existing"}},
		{"a batch a conversation", 1, []string{"first", "existing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setImportBatches(t, tc.batch, 0)
			ctx := context.Background()
			s := openTemp(t)
			mustConv(t, s, "existing")
			// A trigger makes the database refuse one message, late in the import.
			if _, err := s.db.ExecContext(ctx, `CREATE TRIGGER refuse BEFORE INSERT ON messages WHEN new.content = 'boom'
				BEGIN SELECT RAISE(ABORT, 'refused'); END`); err != nil {
				t.Fatal(err)
			}
			res, err := s.Import(ctx, []ImportConversation{
				importConv("first", at(0), "q", "a"),
				importConv("second", at(1), "q", "boom"),
			})
			if err == nil || !strings.Contains(err.Error(), "refused") || !strings.Contains(err.Error(), `conversation 2 ("second")`) {
				t.Fatalf("error %v", err)
			}
			if len(res.Conversations) != len(tc.want)-1 {
				t.Errorf("the result lists %+v after the failure", res.Conversations)
			}
			cs, _ := s.ListConversations(ctx, ListOptions{})
			var titles []string
			for _, c := range cs {
				titles = append(titles, c.Title)
			}
			if fmt.Sprint(titles) != fmt.Sprint(tc.want) {
				t.Errorf("after a failed import: %q, want %q", titles, tc.want)
			}
			var n int
			s.db.QueryRowContext(ctx, `SELECT count(*) FROM messages`).Scan(&n)
			if want := 2 * (len(tc.want) - 1); n != want {
				t.Errorf("%d messages in the library, want %d", n, want)
			}
			if err := s.Check(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}

	s := openTemp(t)
	bad := importConv("bad role", at(2), "q")
	bad.Messages[0].Role = "robot"
	if _, err := s.Import(context.Background(), []ImportConversation{importConv("good", at(0), "q"), bad}); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown role: %v", err)
	}
	if n, _ := s.CountConversations(context.Background()); n != 0 {
		t.Errorf("a file with an unknown role imported %d conversations", n)
	}
}

// bulkConv is conversation i of a large import, the same in every
// process: a title and messages that say which conversation they are.
func bulkConv(i int) ImportConversation {
	created := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	msgs := make([]string, 4)
	for j := range msgs {
		msgs[j] = fmt.Sprintf("대화 %d, message %d: the quick brown fox", i, j)
	}
	return importConv(fmt.Sprintf("bulk %04d", i), created, msgs...)
}

func bulkConvs(n int) []ImportConversation {
	out := make([]ImportConversation, n)
	for i := range out {
		out[i] = bulkConv(i)
	}
	return out
}

// TestWriteDuringImport: a write that comes while a large import runs
// commits before the import ends, waiting for a batch, not for the
// whole import: from this process (its writers take turns, so the
// import's next batch waits for it) and from another connection, as
// from another process (the import pauses between batches for it).
func TestWriteDuringImport(t *testing.T) {
	for _, tc := range []struct {
		name    string
		another bool
		pause   time.Duration
	}{
		{"this process", false, 0},
		{"another process", true, importPause},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const total = 40
			setImportBatches(t, 2, tc.pause)
			ctx := context.Background()
			s := openTemp(t)
			w := s
			if tc.another {
				var err error
				if w, err = Open(ctx, s.Path()); err != nil {
					t.Fatal(err)
				}
				defer w.Close()
			}
			chat := mustConv(t, w, "the chat being answered")
			done := make(chan error, 1)
			go func() {
				_, err := s.Import(ctx, bulkConvs(total))
				done <- err
			}()
			// Write once the import has begun: its first batch is in.
			for n := 1; n <= 1; {
				n, _ = w.CountConversations(ctx)
				select {
				case err := <-done:
					t.Fatalf("the import ended (%v) before a write could come", err)
				default:
				}
				time.Sleep(time.Millisecond)
			}
			if _, err := w.AddMessage(ctx, Message{ConversationID: chat.ID, Role: RoleAssistant, Content: "saved"}); err != nil {
				t.Fatal(err)
			}
			n, err := w.CountConversations(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if n == total+1 {
				t.Errorf("the write committed only after the whole import")
			}
			t.Logf("the write committed with %d of %d conversations imported", n-1, total)
			if all, _ := s.CountConversations(ctx); all != total+1 {
				t.Errorf("%d conversations after the import, want %d", all, total+1)
			}
		})
	}
}

// importChildEnv makes the test binary the importer that gets killed.
const importChildEnv = "CHURON_STORE_IMPORT_CHILD"

const killedTotal = 300

// TestImportKilled kills a process with SIGKILL while it imports a large
// library, batch after batch, then checks that the database holds whole
// conversations only (each with all its messages, searchable), and that
// importing the same library again completes it without duplicating a
// conversation.
func TestImportKilled(t *testing.T) {
	p, cmd, out := startWriter(t, importChildEnv, importChild)
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "importing" {
		t.Fatalf("the child said %q", lines.Text())
	}
	ctx := context.Background()
	s, err := Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Kill at a varying point after a few batches are in.
	killAt := 6 + int(time.Now().UnixNano()%30)
	for n := 0; n < killAt; {
		if n, err = s.CountConversations(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL on Unix
		t.Fatal(err)
	}
	t.Logf("killed the import at %d conversations (%v)", killAt, cmd.Wait())

	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	cs, err := s.ListConversations(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) < killAt || len(cs) == killedTotal {
		t.Fatalf("%d conversations after the kill (killed at %d of %d)", len(cs), killAt, killedTotal)
	}
	for _, c := range cs {
		var i int
		if _, err := fmt.Sscanf(c.Title, "bulk %d", &i); err != nil {
			t.Fatalf("conversation %q", c.Title)
		}
		msgs, err := s.Messages(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := bulkConv(i).Messages
		if len(msgs) != len(want) {
			t.Fatalf("%q holds %d messages, want %d", c.Title, len(msgs), len(want))
		}
		for j, m := range msgs {
			if m.Content != want[j].Content {
				t.Fatalf("%q message %d: %q, want %q", c.Title, j, m.Content, want[j].Content)
			}
		}
	}
	if hits, err := s.Search(ctx, fmt.Sprintf(`"대화 %d, message 3"`, len(cs)-1), 0); err != nil || len(hits) != 1 {
		t.Errorf("the last whole conversation is not searchable: %+v %v", hits, err)
	}

	// The same import again brings the rest, and nothing twice.
	res, err := s.Import(ctx, bulkConvs(killedTotal))
	if err != nil {
		t.Fatal(err)
	}
	if res.Count(Skipped) != len(cs) || res.Count(Imported) != killedTotal-len(cs) {
		t.Errorf("the second import skipped %d and imported %d, want %d and %d",
			res.Count(Skipped), res.Count(Imported), len(cs), killedTotal-len(cs))
	}
	all, err := s.ListConversations(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range all {
		if seen[c.Title] {
			t.Errorf("%q twice", c.Title)
		}
		seen[c.Title] = true
	}
	if len(seen) != killedTotal {
		t.Errorf("%d conversations, want %d", len(seen), killedTotal)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// importChild imports the library in small batches, with pauses long
// enough that the parent kills it half-way.
func importChild(path string) {
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "import child:", err)
		os.Exit(3)
	}
	importBatch, importPause = 3, 50*time.Millisecond
	fmt.Println("importing")
	_, err = s.Import(ctx, bulkConvs(killedTotal))
	fmt.Fprintln(os.Stderr, "import child: not killed:", err)
	os.Exit(3)
}
