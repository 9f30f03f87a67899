package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestMessagePages reads a conversation with versions a page at a time:
// the pages are the branch shown, in order, with the same versions as
// Messages gives, and a page from a message runs to the end.
func TestMessagePages(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	c := mustConv(t, s, "pages")
	var ids []int64
	for i := range 12 {
		role := RoleUser
		if i%2 == 1 {
			role = RoleAssistant
		}
		ids = append(ids, mustAdd(t, s, c.ID, role, fmt.Sprintf("m%d", i)).ID)
	}
	// An edit of m4 leaves m4..m11 on another branch; switch back to it,
	// so that the rows between the page's positions include the edit.
	if _, err := s.AddVersion(ctx, ids[4], Message{ConversationID: c.ID, Role: RoleUser, Content: "edited"}); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, s, c.ID, RoleAssistant, "after the edit")
	if err := s.SelectMessage(ctx, ids[4]); err != nil {
		t.Fatal(err)
	}
	want, err := s.Messages(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 12 {
		t.Fatalf("the branch has %d messages", len(want))
	}
	for _, tc := range []struct {
		name          string
		q             PageQuery
		from, to      int // the page is want[from:to]
		before, total int
	}{
		{"the end", PageQuery{Limit: 5}, 7, 12, 7, 12},
		{"before m7", PageQuery{Before: ids[7], Limit: 5}, 2, 7, 2, 12},
		{"the start", PageQuery{Before: ids[3], Limit: 5}, 0, 3, 0, 12},
		{"all", PageQuery{}, 0, 12, 0, 12},
		{"from m2", PageQuery{From: ids[2], Limit: 3}, 2, 12, 2, 12},
		{"from near the end", PageQuery{From: ids[10], Limit: 5}, 7, 12, 7, 12},
		{"before the first", PageQuery{Before: ids[0], Limit: 5}, 0, 0, 0, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := s.MessagePage(ctx, c.ID, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if p.Before != tc.before || p.Total != tc.total || len(p.Messages) != tc.to-tc.from {
				t.Fatalf("page of %d after %d of %d, want %d after %d of %d", len(p.Messages), p.Before, p.Total, tc.to-tc.from, tc.before, tc.total)
			}
			for i, m := range p.Messages {
				w := want[tc.from+i]
				if m.ID != w.ID || m.Content != w.Content || m.Version != w.Version || m.Versions != w.Versions || m.Role != w.Role {
					t.Errorf("message %d: %d %q %d/%d, want %d %q %d/%d", i, m.ID, m.Content, m.Version, m.Versions, w.ID, w.Content, w.Version, w.Versions)
				}
			}
		})
	}
	if want[4].Versions != 2 {
		t.Errorf("m4 has %d versions", want[4].Versions)
	}
	// A message off the branch shown cannot end a page.
	edited, _ := s.Versions(ctx, ids[4])
	if _, err := s.MessagePage(ctx, c.ID, PageQuery{Before: edited[1].ID}); !errors.Is(err, ErrNotFound) {
		t.Errorf("a page before a message off the branch: %v", err)
	}
}
