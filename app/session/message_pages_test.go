package session

import (
	"fmt"
	"testing"

	"github.com/churon/churon/app/store"
)

// TestMessagePageIsMessages: a page of a chat is the messages Messages
// gives, the end's and those before; pageOf picks the same pages out of
// a whole branch as the store does.
func TestMessagePageIsMessages(t *testing.T) {
	f, _ := storiesFixture(t)
	conv := f.conv(greedy(4))
	for i := range 3 {
		f.send(conv, fmt.Sprintf("Once upon a time %d", i))
	}
	all, err := f.m.Messages(conv)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 6 {
		t.Fatalf("%d messages", len(all))
	}
	for _, tc := range []struct {
		name     string
		q        store.PageQuery
		from, to int
	}{
		{"the end", store.PageQuery{Limit: 4}, 2, 6},
		{"before the fourth", store.PageQuery{Before: all[3].ID, Limit: 2}, 1, 3},
		{"from the second", store.PageQuery{From: all[1].ID, Limit: 2}, 1, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := f.m.MessagePage(conv, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			local := pageOf(all, tc.q)
			for _, got := range []store.MessagePage{p, local} {
				if got.Before != tc.from || got.Total != len(all) || len(got.Messages) != tc.to-tc.from {
					t.Fatalf("page of %d after %d of %d, want %d after %d", len(got.Messages), got.Before, got.Total, tc.to-tc.from, tc.from)
				}
				for i, m := range got.Messages {
					if w := all[tc.from+i]; m.ID != w.ID || m.Content != w.Content {
						t.Errorf("message %d is %d %q, want %d %q", i, m.ID, m.Content, w.ID, w.Content)
					}
				}
			}
		})
	}
}
