package store

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// SearchHit is a message that matches a search.
type SearchHit struct {
	ConversationID    int64
	ConversationTitle string
	MessageID         int64
	Role              Role
	Created           time.Time
	// Snippet is the text around the first match, with "…" where it was
	// cut.
	Snippet string
}

// minIndexedRunes is the shortest term the trigram index can answer.
const minIndexedRunes = 3

// Search finds messages of conversations not in the trash that contain
// every term of query, newest first, at most limit (0 = 50).
//
// Terms are separated by spaces; "double quotes" make a phrase one term.
// A term matches anywhere inside a word, case-insensitively, in any
// script: "김치" finds "김치찌개를", "wor" finds "world". Terms of three or
// more characters are answered by the trigram index; shorter ones (common
// in Korean, where many words are two syllables) by a scan of the
// messages the other terms left, or of all messages.
func (s *Store) Search(ctx context.Context, query string, limit int) ([]SearchHit, error) {
	terms := SplitQuery(query)
	if len(terms) == 0 {
		return nil, fmt.Errorf("store: search: %w: empty query", ErrInvalid)
	}
	if limit <= 0 {
		limit = 50
	}
	var (
		where []string
		args  []any
		match []string
	)
	for _, t := range terms {
		if utf8.RuneCountInString(t) >= minIndexedRunes {
			match = append(match, ftsPhrase(t))
		} else {
			where = append(where, `m.content LIKE ? ESCAPE '\'`)
			args = append(args, "%"+escapeLike(t)+"%")
		}
	}
	if len(match) > 0 {
		where = append([]string{`m.id IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?)`}, where...)
		args = append([]any{strings.Join(match, " AND ")}, args...)
	}
	q := `SELECT m.id, m.conversation_id, c.title, m.role, m.content, m.created
		FROM messages m JOIN conversations c ON c.id = m.conversation_id
		WHERE c.deleted_at IS NULL AND ` + strings.Join(where, " AND ") + `
		ORDER BY m.created DESC, m.id DESC LIMIT ?`
	args = append(args, limit)
	out, err := queryAll(ctx, s.db, func(r scanner) (SearchHit, error) {
		var (
			h       SearchHit
			content string
			created int64
		)
		err := r.Scan(&h.MessageID, &h.ConversationID, &h.ConversationTitle, &h.Role, &content, &created)
		h.Created = fromMillis(created)
		h.Snippet = snippet(content, terms, 40)
		return h, err
	}, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: search %q: %w", query, err)
	}
	return out, nil
}

// SplitQuery splits a search query into the terms Search looks for: on
// white space, keeping "quoted phrases" whole. The chat view marks the
// same terms in the message a hit opens.
func SplitQuery(q string) []string {
	var (
		out   []string
		cur   strings.Builder
		quote bool
	)
	flush := func() {
		if t := strings.TrimSpace(cur.String()); t != "" {
			out = append(out, t)
		}
		cur.Reset()
	}
	for _, r := range q {
		switch {
		case r == '"':
			flush()
			quote = !quote
		case unicode.IsSpace(r) && !quote:
			flush()
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return out
}

// ftsPhrase is t as an FTS5 phrase: with the trigram tokenizer, the
// rows that contain t, case folded.
func ftsPhrase(t string) string { return `"` + strings.ReplaceAll(t, `"`, `""`) + `"` }

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// snippet returns up to width characters either side of the first match of
// any term, matching case-insensitively as the index does.
func snippet(content string, terms []string, width int) string {
	text := []rune(content)
	lower := lowerRunes(content)
	at, n := -1, 0
	for _, t := range terms {
		tr := lowerRunes(t)
		if i := indexRunes(lower, tr); i >= 0 && (at < 0 || i < at) {
			at, n = i, len(tr)
		}
	}
	if at < 0 {
		at = 0
	}
	start, end := max(0, at-width), min(len(text), at+n+width)
	s := strings.Join(strings.Fields(string(text[start:end])), " ")
	if start > 0 {
		s = "…" + s
	}
	if end < len(text) {
		s += "…"
	}
	return s
}

// lowerRunes lower-cases rune by rune, so that indexes into the result
// are indexes into the original's runes (strings.ToLower may change the
// number of runes).
func lowerRunes(s string) []rune {
	out := []rune(s)
	for i, r := range out {
		out[i] = unicode.ToLower(r)
	}
	return out
}

func indexRunes(s, sub []rune) int {
	if len(sub) == 0 {
		return -1
	}
outer:
	for i := 0; i+len(sub) <= len(s); i++ {
		for j, r := range sub {
			if s[i+j] != r {
				continue outer
			}
		}
		return i
	}
	return -1
}
