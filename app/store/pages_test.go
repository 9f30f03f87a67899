package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// importTimes adds conversations with the given update times (ties
// included) through Import, which keeps the times it is given.
func importTimes(t *testing.T, s *Store, n int, msg func(i int) []string) []int64 {
	t.Helper()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var convs []ImportConversation
	for i := range n {
		c := ImportConversation{Conversation: Conversation{Title: fmt.Sprintf("chat %03d", i),
			Created: base.Add(time.Duration(i) * time.Minute),
			// Every third shares its update time with the one before: the id
			// breaks the tie.
			Updated: base.Add(time.Duration(i-i%3) * time.Hour), Pinned: i%17 == 5}}
		for j, text := range msg(i) {
			at := c.Conversation.Created.Add(time.Duration(j) * time.Second)
			c.Messages = append(c.Messages, Message{Role: RoleUser, Content: text, Created: at, Updated: at})
		}
		convs = append(convs, c)
	}
	res, err := s.Import(context.Background(), convs)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, c := range res.Conversations {
		ids = append(ids, c.ID)
	}
	return ids
}

func convIDs(cs []Conversation) []int64 {
	var out []int64
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

// TestConversationPage: pages of any size, read one after the other,
// are the whole list in ListConversations' order, each conversation
// once, none from the trash; and the index answers them in order.
func TestConversationPage(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	ids := importTimes(t, s, 120, func(int) []string { return nil })
	for _, id := range ids[10:14] {
		if err := s.DeleteConversation(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.ListConversations(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 116 {
		t.Fatalf("%d listed", len(all))
	}
	for _, size := range []int{1, 7, 100, 116, 500} {
		var got []int64
		var after *ListCursor
		for pages := 0; ; pages++ {
			p, err := s.ConversationPage(ctx, after, size)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Conversations) > size {
				t.Fatalf("size %d: a page of %d", size, len(p.Conversations))
			}
			got = append(got, convIDs(p.Conversations)...)
			if p.Next == nil {
				break
			}
			if pages > 200 {
				t.Fatal("the pages never end")
			}
			after = p.Next
		}
		if want := convIDs(all); !slices.Equal(got, want) {
			t.Errorf("size %d: pages give\n%v\nwant\n%v", size, got, want)
		}
	}
	if n, err := s.CountConversations(ctx); err != nil || n != 116 {
		t.Errorf("count %d, %v", n, err)
	}
	if _, err := s.ConversationPage(ctx, nil, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("limit 0: %v", err)
	}

	// A page after the hundredth reads from the index, in its order: no
	// table scan, no sort.
	plan := queryPlan(t, s, `SELECT `+convColumns+` FROM conversations WHERE deleted_at IS NULL
		AND (pinned, updated, id) < (?, ?, ?) ORDER BY pinned DESC, updated DESC, id DESC LIMIT ?`, 0, 1, 1, 10)
	if !strings.Contains(plan, "conversations_listed") || strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("a list page's plan: %s", plan)
	}
	// An import finds the chats it holds by their creation time.
	plan = queryPlan(t, s, `SELECT id FROM conversations WHERE created = ? AND deleted_at IS NULL ORDER BY id`, 1)
	if !strings.Contains(plan, "conversations_by_created") {
		t.Errorf("an import's lookup plan: %s", plan)
	}
}

func queryPlan(t *testing.T, s *Store, q string, args ...any) string {
	t.Helper()
	rows, err := s.db.Query(`EXPLAIN QUERY PLAN `+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		b.WriteString(detail + "; ")
	}
	return b.String()
}

// TestSearchConversations: the title matches come first in the list's
// order (with their newest matching message when one matches), then the
// conversations holding a match, newest match first, each once, none from
// the trash, whatever the page size and however small the chunks the
// search reads at a time.
func TestSearchConversations(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	ids := importTimes(t, s, 30, func(i int) []string {
		msgs := []string{fmt.Sprintf("message one of %d", i), fmt.Sprintf("message two of %d", i)}
		switch {
		case i%5 == 0:
			msgs[0] = "오늘 김치찌개를 끓였다, Zebra"
		case i%7 == 0:
			msgs[1] = "zebras eat grass; 날씨 좋다"
		}
		return msgs
	})
	for _, id := range []int64{ids[14], ids[15]} { // 15 has a zebra, 14 one in its title
		if err := s.DeleteConversation(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	for _, i := range []int{3, 14, 21} {
		if err := s.RenameConversation(ctx, ids[i], fmt.Sprintf("A ZEBRA story %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	type row struct {
		conv, msg int64
	}
	// The expected rows: titles in list order, then by newest match.
	expect := func(q string, titleHas func(string) bool, msgHas func(string) bool) []row {
		all, err := s.ListConversations(ctx, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []row
		seen := map[int64]bool{}
		newest := func(c int64) int64 {
			msgs, _ := s.AllMessages(ctx, c)
			var best int64
			for _, m := range msgs {
				if msgHas(m.Content) && m.ID > best {
					best = m.ID
				}
			}
			return best
		}
		for _, c := range all {
			if titleHas(c.Title) {
				out = append(out, row{c.ID, newest(c.ID)})
				seen[c.ID] = true
			}
		}
		var rest []row
		for _, c := range all {
			if m := newest(c.ID); !seen[c.ID] && m != 0 {
				rest = append(rest, row{c.ID, m})
			}
		}
		slices.SortFunc(rest, func(a, b row) int { return int(b.msg - a.msg) })
		return append(out, rest...)
	}
	contains := func(sub string) func(string) bool {
		return func(s string) bool { return strings.Contains(strings.ToLower(s), sub) }
	}
	cases := []struct {
		query        string
		title, inMsg func(string) bool
	}{
		{"zebra", contains("zebra"), contains("zebra")},
		{"김치찌개", contains("김치찌개"), contains("김치찌개")},
		{"날씨", contains("날씨"), contains("날씨")}, // two letters: a scan
		{"zebra 날씨", contains("zebra 날씨"), func(s string) bool { return contains("zebra")(s) && contains("날씨")(s) }},
		{"message", contains("message"), contains("message")},
		{"nothing-like-it", contains("nothing-like-it"), contains("nothing-like-it")},
	}
	defer func(c int, w int64, p int) { searchChunk, scanWindow, chunksAPage = c, w, p }(searchChunk, scanWindow, chunksAPage)
	for _, small := range []bool{false, true} {
		if small {
			searchChunk, scanWindow, chunksAPage = 2, 3, 1
		}
		for _, c := range cases {
			want := expect(c.query, c.title, c.inMsg)
			for _, size := range []int{1, 3, 50} {
				var got []row
				var after *SearchCursor
				for pages := 0; ; pages++ {
					p, err := s.SearchConversations(ctx, c.query, after, size)
					if err != nil {
						t.Fatal(err)
					}
					if len(p.Hits) > size {
						t.Fatalf("%q: a page of %d, asked %d", c.query, len(p.Hits), size)
					}
					for _, h := range p.Hits {
						got = append(got, row{h.Conversation.ID, h.MessageID})
						if h.MessageID != 0 && h.Snippet == "" {
							t.Errorf("%q: hit %d has no snippet", c.query, h.MessageID)
						}
					}
					if p.Next == nil {
						break
					}
					if pages > 500 {
						t.Fatalf("%q: the pages never end", c.query)
					}
					after = p.Next
				}
				if !slices.Equal(got, want) {
					t.Errorf("%q, pages of %d, small chunks %v:\n got %v\nwant %v", c.query, size, small, got, want)
				}
			}
		}
	}
	if _, err := s.SearchConversations(ctx, "  ", nil, 5); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty query: %v", err)
	}
}

// TestUpgradeToPages: a database of version 6 with chats in it gets the
// list's and the import's indexes, and its chats page as a new one's do.
func TestUpgradeToPages(t *testing.T) {
	ctx := context.Background()
	var stmts []string
	for i := range 5 {
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO conversations (title, created, updated) VALUES ('old %d', %d, %d)`, i, 1000+i, 1000+i))
	}
	s := upgraded(t, 6, stmts...)
	var names []string
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'conversations' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	if !slices.Contains(names, "conversations_listed") || !slices.Contains(names, "conversations_by_created") || slices.Contains(names, "conversations_by_update") {
		t.Errorf("indexes after the upgrade: %v", names)
	}
	p1, err := s.ConversationPage(ctx, nil, 3)
	if err != nil || len(p1.Conversations) != 3 || p1.Next == nil {
		t.Fatalf("first page %+v, %v", p1, err)
	}
	p2, err := s.ConversationPage(ctx, p1.Next, 3)
	if err != nil || len(p2.Conversations) != 2 || p2.Next != nil || p2.Conversations[1].Title != "old 0" {
		t.Fatalf("second page %+v, %v", p2, err)
	}
}
