package store

import (
	"context"
	"database/sql"
	"testing"
)

// TestImportIndexesOnce: an import fills the full-text index itself (the
// insert trigger is off meanwhile): its messages are found, those added
// after it too (the trigger is back), and a failed import leaves the
// trigger as it was.
func TestImportIndexesOnce(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	before := mustConv(t, s, "before")
	mustAdd(t, s, before.ID, RoleUser, "an aardvark before the import")
	_, err := s.Import(ctx, []ImportConversation{{Conversation: Conversation{Title: "imported"},
		Messages: []Message{{Role: RoleUser, Content: "an aardvark in the file"}, {Role: RoleAssistant, Content: "호랑이 이야기"}}}})
	if err != nil {
		t.Fatal(err)
	}
	// A bad role fails the import before it starts; a unique clash fails
	// it inside the transaction.
	if _, err := s.Import(ctx, []ImportConversation{{Conversation: Conversation{Title: "bad"}, Messages: []Message{{Role: "alien"}}}}); err == nil {
		t.Fatal("a bad role imported")
	}
	after := mustConv(t, s, "after")
	mustAdd(t, s, after.ID, RoleUser, "an aardvark after the import")
	for q, want := range map[string]int{"aardvark": 3, "호랑이": 1, "in the file": 1} {
		hits, err := s.Search(ctx, q, 10)
		if err != nil || len(hits) != want {
			t.Errorf("%q: %d hits, want %d (%v)", q, len(hits), want, err)
		}
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	// The import's larger hash was for its own statement: the index is
	// back at FTS5's own, after the import that worked and the one that
	// failed.
	for _, ix := range importIndexes {
		var size int64
		if err := s.tx(ctx, "read", func(tx *sql.Tx) (err error) { size, err = ix.hashSize(ctx, tx); return err }); err != nil {
			t.Fatal(err)
		}
		if size != defaultHashSize {
			t.Errorf("after the imports the hash size of %s is %d, want %d", ix.fts, size, defaultHashSize)
		}
	}
}
