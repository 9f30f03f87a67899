package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The sidebar reads the library a page at a time, so that what it costs
// follows what is on the screen, not how many chats there are: a list
// page walks the conversations_listed index from a cursor (no OFFSET, so
// page 100 costs what page 1 does), and a search page reads the newest
// matches until it has a page of conversations.

// ListCursor is where a page of the conversation list ended: the next
// page starts after it.
type ListCursor struct {
	Pinned  bool
	Updated int64 // milliseconds, as stored
	ID      int64
}

// ConversationPage is a page of the conversation list.
type ConversationPage struct {
	Conversations []Conversation
	// Next is where the next page starts; nil when this one is the last.
	Next *ListCursor
}

// ConversationPage returns up to limit conversations not in the trash,
// in ListConversations' order (pinned first, then the most recently
// updated), starting after the cursor (nil: at the top).
func (s *Store) ConversationPage(ctx context.Context, after *ListCursor, limit int) (ConversationPage, error) {
	if limit <= 0 {
		return ConversationPage{}, fmt.Errorf("store: conversation page: %w: limit %d", ErrInvalid, limit)
	}
	q := `SELECT ` + convColumns + ` FROM conversations WHERE deleted_at IS NULL`
	var args []any
	if after != nil {
		// The order is (pinned, updated, id), all descending: a row value
		// compare is the cursor, and the index answers it.
		q += ` AND (pinned, updated, id) < (?, ?, ?)`
		args = append(args, after.Pinned, after.Updated, after.ID)
	}
	q += ` ORDER BY pinned DESC, updated DESC, id DESC LIMIT ?`
	// One more than asked says whether a next page exists.
	args = append(args, limit+1)
	convs, err := queryAll(ctx, s.db, scanConversation, q, args...)
	if err != nil {
		return ConversationPage{}, fmt.Errorf("store: conversation page: %w", err)
	}
	var p ConversationPage
	if len(convs) > limit {
		convs = convs[:limit]
		last := convs[limit-1]
		p.Next = &ListCursor{Pinned: last.Pinned, Updated: last.Updated.UnixMilli(), ID: last.ID}
	}
	p.Conversations = convs
	return p, nil
}

// CountConversations counts the conversations not in the trash.
func (s *Store) CountConversations(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM conversations WHERE deleted_at IS NULL`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count conversations: %w", err)
	}
	return n, nil
}

// ConversationIDs returns the id of every conversation, in the trash or
// not: what a sweep of files named after conversations needs, without
// reading the conversations.
func (s *Store) ConversationIDs(ctx context.Context) (map[int64]bool, error) {
	ids, err := queryAll(ctx, s.db, scanID, `SELECT id FROM conversations`)
	if err != nil {
		return nil, fmt.Errorf("store: conversation ids: %w", err)
	}
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// ConversationHit is a conversation that matches a search, with the
// newest of its messages that matches (none when only its title does).
type ConversationHit struct {
	Conversation Conversation
	MessageID    int64  // 0: the title matched, no message
	Snippet      string // around the first match in that message
}

// SearchCursor is where a page of search results ended. It remembers the
// conversations already listed, so that each is listed once.
type SearchCursor struct {
	titlesRead int   // title matches listed so far
	titlesDone bool  // every title match is listed: now the messages
	before     int64 // the messages below this id are still to read (0: from the newest)
	seen       map[int64]bool
}

// SearchPage is a page of search results.
type SearchPage struct {
	Hits []ConversationHit
	// Next continues the search; nil when it is done.
	Next *SearchCursor
}

// Chunks of the search: FTS candidates read at once, and the message
// ids a scan of short terms covers per page (so that a page of a rare
// two-letter word costs the same as any other, whatever the library's
// size: it comes back short, with a cursor to go on).
// (Variables so that tests can make them small.)
var (
	searchChunk       = 256
	scanWindow  int64 = 5000
	chunksAPage       = 8
)

const titleSnippet = 40

// SearchConversations finds the conversations whose title contains the
// query (case-insensitively, the query whole) or which hold a message
// containing every term of it (as Search matches), each once: the title
// matches first in the list's order, then the others by their newest
// matching message. It returns a page of at most limit from the cursor
// (nil: the start). A page may hold fewer than limit while Next is set:
// a page is bounded in work, not only in rows.
//
// Messages are read newest stored first (by id: the order they were
// written in this library, or imported), which lets the index stop at
// the first page instead of sorting every match.
func (s *Store) SearchConversations(ctx context.Context, query string, after *SearchCursor, limit int) (SearchPage, error) {
	terms := SplitQuery(query)
	if len(terms) == 0 {
		return SearchPage{}, fmt.Errorf("store: search: %w: empty query", ErrInvalid)
	}
	if limit <= 0 {
		return SearchPage{}, fmt.Errorf("store: search: %w: limit %d", ErrInvalid, limit)
	}
	cur := SearchCursor{seen: map[int64]bool{}}
	if after != nil {
		cur = *after
		cur.seen = make(map[int64]bool, len(after.seen))
		for id := range after.seen {
			cur.seen[id] = true
		}
	}
	f := newHitFilter(terms)
	var page SearchPage
	if !cur.titlesDone {
		hits, done, err := s.titleMatches(ctx, strings.TrimSpace(query), cur.titlesRead, limit)
		if err != nil {
			return SearchPage{}, fmt.Errorf("store: search %q: %w", query, err)
		}
		if err := s.snippets(ctx, terms, hits); err != nil {
			return SearchPage{}, fmt.Errorf("store: search %q: %w", query, err)
		}
		for _, h := range hits {
			cur.seen[h.Conversation.ID] = true
		}
		cur.titlesRead += len(hits)
		cur.titlesDone = done
		page.Hits = hits
	}
	more := !cur.titlesDone || cur.before != 1
	for chunk := 0; cur.titlesDone && more && len(page.Hits) < limit && chunk < chunksAPage; chunk++ {
		msgs, low, err := f.chunk(ctx, s.db, cur.before)
		if err != nil {
			return SearchPage{}, fmt.Errorf("store: search %q: %w", query, err)
		}
		for _, m := range msgs {
			if cur.seen[m.conv.ID] {
				continue
			}
			if len(page.Hits) == limit {
				low = m.id + 1 // full: the next page reads on from here
				break
			}
			cur.seen[m.conv.ID] = true
			page.Hits = append(page.Hits, ConversationHit{Conversation: m.conv, MessageID: m.id, Snippet: snippet(m.content, terms, titleSnippet)})
		}
		cur.before = max(low, 1)
		more = low > 1
	}
	if more {
		page.Next = &cur
	}
	return page, nil
}

// titleMatches returns up to limit conversations, from the skip-th on,
// whose title contains q, in the list's order, and whether they are all.
// A query of three characters or more is answered by the titles'
// trigram index (which folds case in every script, as the messages'
// does); a shorter one, which no trigram holds, by reading the titles
// alone and comparing them in Go (strings.ToLower: SQLite's lower()
// knows only ASCII).
func (s *Store) titleMatches(ctx context.Context, q string, skip, limit int) ([]ConversationHit, bool, error) {
	var convs []Conversation
	if utf8.RuneCountInString(q) >= minIndexedRunes {
		// One more than asked says whether more follow.
		var err error
		convs, err = queryAll(ctx, s.db, scanConversation, `SELECT `+convColumns+` FROM conversations
			WHERE deleted_at IS NULL AND id IN (SELECT rowid FROM conversations_fts WHERE conversations_fts MATCH ?)
			ORDER BY pinned DESC, updated DESC, id DESC LIMIT ? OFFSET ?`, ftsPhrase(q), limit+1, skip)
		if err != nil {
			return nil, false, err
		}
	} else {
		ids, err := s.shortTitleMatches(ctx, q, skip, limit+1)
		if err != nil {
			return nil, false, err
		}
		for _, id := range ids {
			c, err := s.Conversation(ctx, id)
			if err != nil {
				return nil, false, err
			}
			convs = append(convs, c)
		}
	}
	done := len(convs) <= limit
	out := make([]ConversationHit, 0, min(len(convs), limit))
	for _, c := range convs[:min(len(convs), limit)] {
		out = append(out, ConversationHit{Conversation: c})
	}
	return out, done, nil
}

// shortTitleMatches returns the ids of up to limit conversations, from
// the skip-th on, whose title contains q, in the list's order.
func (s *Store) shortTitleMatches(ctx context.Context, q string, skip, limit int) ([]int64, error) {
	lq := strings.ToLower(q)
	rows, err := s.db.QueryContext(ctx, `SELECT id, title FROM conversations WHERE deleted_at IS NULL
		ORDER BY pinned DESC, updated DESC, id DESC`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() && len(out) < limit {
		var (
			id    int64
			title string
		)
		if err := rows.Scan(&id, &title); err != nil {
			return nil, err
		}
		if !strings.Contains(strings.ToLower(title), lq) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// snippets gives title matches the newest of their messages that match,
// when one does. The messages are read newest first and matched here:
// a query of the index per row costs more than reading a chat's text.
func (s *Store) snippets(ctx context.Context, terms []string, hits []ConversationHit) error {
	lower := make([]string, len(terms))
	for i, t := range terms {
		lower[i] = strings.ToLower(t)
	}
	for i := range hits {
		id, text, err := s.newestMatch(ctx, hits[i].Conversation.ID, lower)
		if err != nil {
			return err
		}
		if id != 0 {
			hits[i].MessageID, hits[i].Snippet = id, snippet(text, terms, titleSnippet)
		}
	}
	return nil
}

// newestMatch is the newest message of conv holding every (lower-case)
// term, or 0.
func (s *Store) newestMatch(ctx context.Context, conv int64, terms []string) (int64, string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, content FROM messages WHERE conversation_id = ? ORDER BY id DESC`, conv)
	if err != nil {
		return 0, "", err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id   int64
			text string
		)
		if err := rows.Scan(&id, &text); err != nil {
			return 0, "", err
		}
		lt := strings.ToLower(text)
		all := true
		for _, t := range terms {
			if !strings.Contains(lt, t) {
				all = false
				break
			}
		}
		if all {
			return id, text, nil
		}
	}
	return 0, "", rows.Err()
}

// hitFilter reads the messages that match a query, newest stored first.
type hitFilter struct {
	match string // the FTS5 query of the terms the trigram index answers; "" when none does
	likes []string
}

func newHitFilter(terms []string) *hitFilter {
	f := &hitFilter{}
	var match []string
	for _, t := range terms {
		if utf8.RuneCountInString(t) >= minIndexedRunes {
			match = append(match, ftsPhrase(t))
		} else {
			f.likes = append(f.likes, "%"+escapeLike(t)+"%")
		}
	}
	f.match = strings.Join(match, " AND ")
	return f
}

type hitRow struct {
	id      int64
	conv    Conversation
	content string
}

// chunk reads matching messages of conversations not in the trash with
// ids below before (0: all), newest first: those among the next
// searchChunk candidates of the index or, without indexed terms, among
// the next scanWindow ids. It returns them and the lowest id it looked
// at (1: nothing is left below).
func (f *hitFilter) chunk(ctx context.Context, db *sql.DB, before int64) ([]hitRow, int64, error) {
	if before == 0 {
		if err := db.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) + 1 FROM messages`).Scan(&before); err != nil {
			return nil, 0, err
		}
	}
	var (
		where = []string{`c.deleted_at IS NULL`}
		args  []any
		low   = int64(1)
		scan  bool // a scan of the window of ids below before
	)
	switch {
	case f.match != "":
		ids, err := queryAll(ctx, db, scanID, `SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? AND rowid < ?
			ORDER BY rowid DESC LIMIT ?`, f.match, before, searchChunk)
		if err != nil {
			return nil, 0, err
		}
		if len(ids) == 0 {
			return nil, 1, nil
		}
		if len(ids) == searchChunk {
			low = ids[len(ids)-1]
		}
		where = append(where, `m.id IN (?`+strings.Repeat(`, ?`, len(ids)-1)+`)`)
		for _, id := range ids {
			args = append(args, id)
		}
	default:
		low = max(before-scanWindow, 1)
		where = append(where, `m.id < ? AND m.id >= ?`)
		args = append(args, before, low)
		scan = true
	}
	for _, l := range f.likes {
		where = append(where, `m.content LIKE ? ESCAPE '\'`)
		args = append(args, l)
	}
	q := `SELECT m.id, m.content, ` + prefixed("c.", convColumns) + `
		FROM messages m JOIN conversations c ON c.id = m.conversation_id
		WHERE ` + strings.Join(where, " AND ") + ` ORDER BY m.id DESC`
	if scan {
		// A common word fills a chunk long before the window's end: stop
		// there, and go on from the last match next time.
		q += ` LIMIT ?`
		args = append(args, searchChunk)
	}
	out, err := queryAll(ctx, db, func(r scanner) (hitRow, error) {
		var h hitRow
		var (
			created, updated int64
			deleted          sql.NullInt64
		)
		c := &h.conv
		err := r.Scan(&h.id, &h.content, &c.ID, &c.Title, &created, &updated, &c.Pinned, &c.SystemPrompt, &c.Sampler, &c.ModelPath, &deleted)
		c.Created, c.Updated = fromMillis(created), fromMillis(updated)
		if deleted.Valid {
			c.DeletedAt = fromMillis(deleted.Int64)
		}
		return h, err
	}, q, args...)
	if scan && len(out) == searchChunk {
		low = out[len(out)-1].id
	}
	return out, low, err
}

// prefixed qualifies each of a list of columns.
func prefixed(p, cols string) string {
	fields := strings.Split(cols, ",")
	for i, f := range fields {
		fields[i] = p + strings.TrimSpace(f)
	}
	return strings.Join(fields, ", ")
}
