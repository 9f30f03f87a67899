package store

import (
	"context"
	"database/sql"
	"fmt"
)

// A long conversation is read a page at a time: the chat opens on its
// last messages and reads older ones as the person scrolls up. Which
// messages form the branch shown is decided over the whole tree (see
// versions.go), but that needs only each message's id, parent, stamp and
// time — never its text. So a page reads the tree's skeleton, walks the
// branch, and reads whole rows for the page's messages alone, by
// conversation and position (the index of UNIQUE (conversation_id,
// position)): positions grow along a branch, since a reply is always
// written after what it follows.

// PageQuery says which page of a conversation's branch to read.
type PageQuery struct {
	// Before: the page ends just before this message of the branch (0:
	// at its end).
	Before int64
	// From, when set (and Before is not): the page starts at this
	// message and runs to the end of the branch, however long, so that a
	// search hit opens with everything after it. A message off the
	// branch is ignored: the page is the branch's last.
	From int64
	// Limit is the most messages a page holds (Before, or neither); 0:
	// DefaultPage.
	Limit int
}

// DefaultPage is how many messages a page holds unless asked otherwise:
// several screenfuls.
const DefaultPage = 100

// MessagePage is part of the branch shown of a conversation, in order,
// with Version and Versions set as Messages sets them.
type MessagePage struct {
	Messages []Message
	// Before is how many messages of the branch come before the page,
	// Total how many it has in all.
	Before, Total int
}

// MessagePage reads one page of the branch of conv that is shown.
func (s *Store) MessagePage(ctx context.Context, conv int64, q PageQuery) (MessagePage, error) {
	page, err := messagePage(ctx, s.db, conv, q)
	if err != nil {
		return MessagePage{}, fmt.Errorf("store: page of conversation %d: %w", conv, err)
	}
	return page, nil
}

func messagePage(ctx context.Context, db querier, conv int64, q PageQuery) (MessagePage, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultPage
	}
	tree, err := queryAll(ctx, db, scanSkeleton,
		`SELECT id, parent_id, selected, created, position FROM messages WHERE conversation_id = ? ORDER BY position`, conv)
	if err != nil {
		return MessagePage{}, err
	}
	for _, sib := range children(tree) {
		for i, k := range sib {
			tree[k].Version, tree[k].Versions = i+1, len(sib)
		}
	}
	path := activePath(tree)
	end := len(path)
	start := max(end-limit, 0)
	switch {
	case q.Before != 0:
		end = indexOf(path, q.Before)
		if end < 0 {
			return MessagePage{}, fmt.Errorf("%w: message %d is not in the branch shown", ErrNotFound, q.Before)
		}
		start = max(end-limit, 0)
	case q.From != 0:
		if i := indexOf(path, q.From); i >= 0 {
			start = min(i, start)
		}
	}
	page := MessagePage{Before: start, Total: len(path)}
	if start == end {
		return page, nil
	}
	rows, err := queryAll(ctx, db, scanMessage,
		`SELECT `+msgColumns+` FROM messages WHERE conversation_id = ? AND position BETWEEN ? AND ? ORDER BY position`,
		conv, path[start].Position, path[end-1].Position)
	if err != nil {
		return MessagePage{}, err
	}
	// The rows between include other branches' messages: keep the
	// branch's.
	byID := make(map[int64]Message, len(rows))
	for _, m := range rows {
		byID[m.ID] = m
	}
	for _, sk := range path[start:end] {
		m, ok := byID[sk.ID]
		if !ok {
			return MessagePage{}, fmt.Errorf("%w: message %d went while reading", ErrNotFound, sk.ID)
		}
		m.Version, m.Versions = sk.Version, sk.Versions
		page.Messages = append(page.Messages, m)
	}
	return page, nil
}

// scanSkeleton reads what choosing the branch needs of a message.
func scanSkeleton(r scanner) (Message, error) {
	var (
		m       Message
		created int64
		parent  sql.NullInt64
	)
	err := r.Scan(&m.ID, &parent, &m.Selected, &created, &m.Position)
	m.ParentID = parent.Int64
	m.Created = fromMillis(created)
	return m, err
}

func indexOf(path []Message, id int64) int {
	for i, m := range path {
		if m.ID == id {
			return i
		}
	}
	return -1
}
