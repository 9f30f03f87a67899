package synthchat

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestWords: n words of the asked language, a paragraph break every 14.
func TestWords(t *testing.T) {
	for _, tc := range []struct {
		ko   bool
		list []string
	}{{false, english}, {true, korean}} {
		r := rand.New(rand.NewPCG(1, 2))
		text := Words(r, 30, tc.ko)
		fields := strings.Fields(strings.ReplaceAll(text, ".", ""))
		if len(fields) != 30 {
			t.Fatalf("korean %v: %d words, want 30: %q", tc.ko, len(fields), text)
		}
		for _, w := range fields {
			if !slices.Contains(tc.list, w) {
				t.Fatalf("korean %v: %q is not one of the language's words", tc.ko, w)
			}
		}
		if got := strings.Count(text, ".\n\n"); got != 2 {
			t.Errorf("korean %v: %d paragraph breaks in 30 words, want 2", tc.ko, got)
		}
	}
}

// TestMessage: the same seed gives the same messages; lengths stay in
// 20–300 words; code, tables and the rare terms all occur, the rare ones
// about once in RareEvery.
func TestMessage(t *testing.T) {
	const n = 4000
	a, b := rand.New(rand.NewPCG(7, 8)), rand.New(rand.NewPCG(7, 8))
	var code, table, rare int
	for range n {
		m := Message(a)
		if m != Message(b) {
			t.Fatal("the same seed gave different messages")
		}
		code += strings.Count(m, "```go")
		table += strings.Count(m, "| name |")
		if strings.Contains(m, "zebra") || strings.Contains(m, "김치찌개") {
			rare++
		}
		prose, _, _ := strings.Cut(m, "\n\n```")
		prose, _, _ = strings.Cut(prose, "\n\n| name")
		prose = strings.TrimSuffix(strings.TrimSuffix(prose, " zebra crossing."), " 김치찌개를 먹었습니다.")
		if k := len(strings.Fields(prose)); k < 20 || k > 300 {
			t.Fatalf("a message of %d words: %q", k, m)
		}
	}
	if code == 0 || table == 0 {
		t.Errorf("%d code blocks and %d tables in %d messages", code, table, n)
	}
	if want := n / RareEvery; rare < want/2 || rare > want*2 {
		t.Errorf("%d messages with a rare term in %d, want about %d", rare, n, want)
	}
}
