package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// titleHits is the titles of every title match of q, a page of n at a
// time (SearchConversations lists title matches first).
func titleHits(t *testing.T, s *Store, q string, n int) []string {
	t.Helper()
	var out []string
	var cur *SearchCursor
	for {
		p, err := s.SearchConversations(context.Background(), q, cur, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range p.Hits {
			if h.MessageID == 0 {
				out = append(out, h.Conversation.Title)
			}
		}
		if p.Next == nil {
			return out
		}
		cur = p.Next
	}
}

// TestTitleSearch: a title matches a query it contains, case folded in
// any script, through the index for three characters or more and by
// reading the titles for fewer; renamed, trashed and purged chats and
// those imported (whose index an import fills itself) are found as they
// are now; pages of any size list each match once, in the list's order.
func TestTitleSearch(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	titles := []string{"Kimchi stew", "김치찌개 레시피", "ÉCOLE d'été", "Ωμέγα notes", "quoted \"lazy dog\" title", "old name", "trashed kimchi"}
	ids := map[string]int64{}
	for _, ti := range titles {
		ids[ti] = mustConv(t, s, ti).ID
	}
	if _, err := s.Import(ctx, []ImportConversation{importConv("Imported KIMCHI", at(0), "q")}); err != nil {
		t.Fatal(err)
	}
	if err := s.RenameConversation(ctx, ids["old name"], "new kimchi name"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteConversation(ctx, ids["trashed kimchi"]); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q    string
		want []string // newest first
	}{
		{"kimchi", []string{"Imported KIMCHI", "new kimchi name", "Kimchi stew"}},
		{"KIM", []string{"Imported KIMCHI", "new kimchi name", "Kimchi stew"}},
		{"김치", []string{"김치찌개 레시피"}},       // two characters: no trigram
		{"찌개 레", []string{"김치찌개 레시피"}},     // across a space
		{"école", []string{"ÉCOLE d'été"}}, // case folded beyond ASCII
		{"ΩΜΈΓΑ", []string{"Ωμέγα notes"}}, // and back
		{"é", []string{"ÉCOLE d'été"}},     // one character
		{`"lazy dog"`, []string{`quoted "lazy dog" title`}},
		{"old name", nil},
		{"trashed", nil},
	} {
		for _, n := range []int{1, 2, 50} {
			if got := titleHits(t, s, tc.q, n); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("%q, pages of %d: %q, want %q", tc.q, n, got, tc.want)
			}
		}
	}
	if _, err := s.PurgeDeleted(ctx, at(0).AddDate(100, 0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	// The index answers, not a read of every conversation.
	plan := queryPlan(t, s, `SELECT rowid FROM conversations_fts WHERE conversations_fts MATCH ?`, ftsPhrase("kimchi"))
	if !strings.Contains(plan, "VIRTUAL TABLE INDEX") {
		t.Errorf("title search plan: %s", plan)
	}
}

// TestUpgradeToTitleIndex opens a database of the schema before the
// titles' index (version 8), with chats in it: after the upgrade their
// titles are found by the index, and new and renamed ones too.
func TestUpgradeToTitleIndex(t *testing.T) {
	ctx := context.Background()
	var stmts []string
	for i, ti := range []string{"옛날 김치찌개 이야기", "Old Weather chat", "another"} {
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO conversations (title, created, updated) VALUES ('%s', %d, %d)`, ti, 1000+i, 1000+i))
	}
	s := upgraded(t, 8, stmts...)
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	c := mustConv(t, s, "new weather")
	if err := s.RenameConversation(ctx, c.ID, "newer WEATHER"); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"김치찌개":    "[옛날 김치찌개 이야기]",
		"weather": "[newer WEATHER Old Weather chat]",
		"anot":    "[another]",
	} {
		if got := fmt.Sprint(titleHits(t, s, q, 10)); got != want {
			t.Errorf("%q after the upgrade: %s, want %s", q, got, want)
		}
	}
}
