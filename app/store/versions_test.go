package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// contents is the branch shown, as its texts.
func contents(t *testing.T, s *Store, conv int64) string {
	t.Helper()
	msgs, err := s.Messages(context.Background(), conv)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		out = append(out, m.Content)
	}
	return strings.Join(out, " ")
}

// selectShows selects message id and checks the branch conversation conv
// then shows.
func selectShows(t *testing.T, s *Store, id, conv int64, want string) {
	t.Helper()
	if err := s.SelectMessage(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	wantShown(t, s, conv, want, fmt.Sprintf("with message %d selected", id))
}

// wantShown checks the branch conversation conv shows, as its texts; when
// says at which step of the test.
func wantShown(t *testing.T, s *Store, conv int64, want, when string) {
	t.Helper()
	if got := contents(t, s, conv); got != want {
		t.Fatalf("%s the chat shows %q, want %q", when, got, want)
	}
}

// TestVersions edits and regenerates as versions: the earlier ones stay,
// switching to one brings back what followed it, and each fork remembers
// the branch last shown below it.
func TestVersions(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	c := mustConv(t, s, "versions")
	q1 := mustAdd(t, s, c.ID, RoleUser, "q1")
	a1 := mustAdd(t, s, c.ID, RoleAssistant, "a1")
	q2 := mustAdd(t, s, c.ID, RoleUser, "q2")
	mustAdd(t, s, c.ID, RoleAssistant, "a2")

	// Regenerate a1: a new answer after q1; q2 and a2 stay behind a1.
	b1, err := s.AddVersion(ctx, a1.ID, Message{ConversationID: c.ID, Role: RoleAssistant, Content: "b1"})
	if err != nil {
		t.Fatal(err)
	}
	wantShown(t, s, c.ID, "q1 b1", "after the new version")
	mustAdd(t, s, c.ID, RoleUser, "r2")
	wantShown(t, s, c.ID, "q1 b1 r2", "as the branch goes on")
	msgs, _ := s.Messages(ctx, c.ID)
	if msgs[1].Version != 2 || msgs[1].Versions != 2 || msgs[0].Versions != 1 {
		t.Fatalf("versions of the answer %d/%d, question %d/%d", msgs[1].Version, msgs[1].Versions, msgs[0].Version, msgs[0].Versions)
	}

	// Back to a1: its turns come back.
	selectShows(t, s, a1.ID, c.ID, "q1 a1 q2 a2")
	// Edit q2 inside version 1, then switch to b1 and back: the edit is
	// the branch remembered under a1.
	if _, err := s.AddVersion(ctx, q2.ID, Message{ConversationID: c.ID, Role: RoleUser, Content: "q2'"}); err != nil {
		t.Fatal(err)
	}
	selectShows(t, s, b1.ID, c.ID, "q1 b1 r2")
	selectShows(t, s, a1.ID, c.ID, "q1 a1 q2'") // the edit remembered
	// A version of the first message is a second start.
	if _, err := s.AddVersion(ctx, q1.ID, Message{ConversationID: c.ID, Role: RoleUser, Content: "p1"}); err != nil {
		t.Fatal(err)
	}
	wantShown(t, s, c.ID, "p1", "with a new first message")
	vs, err := s.Versions(ctx, q1.ID)
	if err != nil || len(vs) != 2 || vs[0].ID != q1.ID || vs[1].Content != "p1" {
		t.Fatalf("versions of q1: %+v %v", vs, err)
	}
	all, _ := s.AllMessages(ctx, c.ID)
	if len(all) != 8 {
		t.Fatalf("%d messages kept, want all 8", len(all))
	}
	if _, err := s.AddVersion(ctx, 9999, Message{ConversationID: c.ID, Role: RoleUser}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("version of a missing message: %v", err)
	}
	if err := s.SelectMessage(ctx, 9999); !errors.Is(err, ErrNotFound) {
		t.Fatalf("select a missing message: %v", err)
	}
}

// TestDeleteNotice deletes a notice between a question and its answer:
// the answer then follows the question, and the chat reads on.
func TestDeleteNotice(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	c := mustConv(t, s, "notice")
	mustAdd(t, s, c.ID, RoleUser, "q1")
	n := mustAdd(t, s, c.ID, RoleNotice, "dropped")
	mustAdd(t, s, c.ID, RoleAssistant, "a1")
	if err := s.DeleteMessage(ctx, n.ID); err != nil {
		t.Fatal(err)
	}
	wantShown(t, s, c.ID, "q1 a1", "after deleting the notice")
	mustAdd(t, s, c.ID, RoleUser, "q2")
	wantShown(t, s, c.ID, "q1 a1 q2", "then")
	if err := s.DeleteMessage(ctx, n.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleting it twice: %v", err)
	}
}

// TestUpgradeToVersions opens a database of schema 5 (a linear history)
// with this build: the history becomes one branch, and goes on.
func TestUpgradeToVersions(t *testing.T) {
	ctx := context.Background()
	s := upgraded(t, 5,
		`INSERT INTO conversations (id, title, created, updated) VALUES (3, 'old', 1000, 2000)`,
		`INSERT INTO conversations (id, title, created, updated) VALUES (4, 'other', 1000, 2000)`,
		`INSERT INTO messages (id, conversation_id, position, role, content, created, updated) VALUES (10, 3, 1, 'user', 'q1', 1000, 1000)`,
		`INSERT INTO messages (id, conversation_id, position, role, content, created, updated) VALUES (11, 4, 1, 'user', 'elsewhere', 1000, 1000)`,
		`INSERT INTO messages (id, conversation_id, position, role, content, created, updated) VALUES (12, 3, 2, 'notice', 'n', 1100, 1100)`,
		// A gap in positions, as DeleteMessage leaves.
		`INSERT INTO messages (id, conversation_id, position, role, content, created, updated) VALUES (14, 3, 5, 'assistant', 'a1', 1200, 1200)`,
	)
	msgs, err := s.Messages(ctx, 3)
	if err != nil || len(msgs) != 3 || msgs[0].ParentID != 0 || msgs[1].ParentID != 10 || msgs[2].ParentID != 12 {
		t.Fatalf("upgraded messages %+v %v", msgs, err)
	}
	a2, err := s.AddVersion(ctx, 14, Message{ConversationID: 3, Role: RoleAssistant, Content: "a2"})
	if err != nil || a2.ParentID != 12 {
		t.Fatalf("a version of the old answer: %+v %v", a2, err)
	}
	wantShown(t, s, 3, "q1 n a2", "after the upgrade")
	wantShown(t, s, 4, "elsewhere", "in the other conversation")
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestImportVersions imports a conversation with versions off its
// branch: the same branch is shown, and the versions are there.
func TestImportVersions(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	// File ids: 1 q1, 2 a1 (shown), 3 a0 (an earlier answer), 4 q2 after it, 5 q1' (another start).
	ic := ImportConversation{Conversation: Conversation{Title: "imported", Created: time.UnixMilli(5000)},
		Messages: []Message{{ID: 1, Role: RoleUser, Content: "q1"}, {ID: 2, ParentID: 1, Role: RoleAssistant, Content: "a1"}},
		Others: []Message{
			{ID: 4, ParentID: 3, Role: RoleUser, Content: "q2"}, // listed before its parent
			{ID: 3, ParentID: 1, Role: RoleAssistant, Content: "a0"},
			{ID: 5, Role: RoleUser, Content: "q1'"},
		}}
	for i := range ic.Messages {
		ic.Messages[i].Created = time.UnixMilli(int64(6000 + i))
	}
	res, err := s.Import(ctx, []ImportConversation{ic})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Conversations[0].ID
	wantShown(t, s, id, "q1 a1", "once imported")
	if all, _ := s.AllMessages(ctx, id); len(all) != 5 {
		t.Fatalf("%d messages imported", len(all))
	}
	msgs, _ := s.Messages(ctx, id)
	vs, _ := s.Versions(ctx, msgs[1].ID)
	if len(vs) != 2 || msgs[1].Versions != 2 || msgs[0].Versions != 2 {
		t.Fatalf("versions %+v; answer %d/%d", vs, msgs[1].Version, msgs[1].Versions)
	}
	a0 := vs[0]
	if a0.Content == "a1" {
		a0 = vs[1]
	}
	selectShows(t, s, a0.ID, id, "q1 a0 q2")
	// Importing it again, with the same branch shown, adds nothing.
	if err := s.SelectMessage(ctx, msgs[1].ID); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Import(ctx, []ImportConversation{ic}); err != nil || res.Count(Skipped) != 1 {
		t.Fatalf("imported again: %+v %v", res, err)
	}
	bad := ic
	bad.Conversation.Created = time.UnixMilli(7000)
	bad.Others = []Message{{ID: 9, ParentID: 42, Role: RoleUser, Content: "lost"}}
	if _, err := s.Import(ctx, []ImportConversation{bad}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a version whose parent is missing: %v", err)
	}
}
