package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
)

// A conversation is a tree of messages. Editing a message or
// regenerating an answer adds a sibling (a message with the same parent)
// instead of overwriting or deleting, so every earlier version stays with
// whatever followed it. A tree rather than version groups on a linear
// list, because a version is not one message but a branch: switching back
// to an earlier question must bring back the answers and turns that
// followed it, and a tree holds that with one parent per message and no
// copying.
//
// Which branch is shown is remembered per fork: each message has a
// selection stamp, raised above every other stamp of its conversation
// when the message is written or chosen, together with its ancestors'.
// At each fork the branch shown goes on with the child of the highest
// stamp. So choosing a version changes only the forks above it, and the
// choices made further down inside that version are kept: switching away
// and back returns to the same branch.

// loadAll reads every message of a conversation in the order written and
// sets Version and Versions: siblings are numbered by creation time.
func loadAll(ctx context.Context, q querier, conv int64) ([]Message, error) {
	all, err := queryAll(ctx, q, scanMessage, `SELECT `+msgColumns+` FROM messages WHERE conversation_id = ? ORDER BY position`, conv)
	if err != nil {
		return nil, err
	}
	kids := children(all)
	for _, sib := range kids {
		for i, k := range sib {
			all[k].Version, all[k].Versions = i+1, len(sib)
		}
	}
	return all, nil
}

// children maps each parent id (0: the start) to the indexes in all of
// its children, oldest first.
func children(all []Message) map[int64][]int {
	kids := map[int64][]int{}
	for i, m := range all {
		kids[m.ParentID] = append(kids[m.ParentID], i)
	}
	for _, sib := range kids {
		slices.SortStableFunc(sib, func(a, b int) int {
			return cmp.Or(all[a].Created.Compare(all[b].Created), cmp.Compare(all[a].ID, all[b].ID))
		})
	}
	return kids
}

func index(all []Message) map[int64]Message {
	by := make(map[int64]Message, len(all))
	for _, m := range all {
		by[m.ID] = m
	}
	return by
}

// activePath is the branch shown: from the start, at each fork the child
// chosen last. A message whose parent is missing (which the store never
// writes) is treated as a start, so that nothing becomes unreachable.
func activePath(all []Message) []Message {
	by := index(all)
	kids := map[int64][]int{}
	for i, m := range all {
		p := m.ParentID
		if _, ok := by[p]; !ok {
			p = 0
		}
		kids[p] = append(kids[p], i)
	}
	var path []Message
	seen := map[int64]bool{}
	for at := int64(0); ; {
		best := -1
		for _, k := range kids[at] {
			if best < 0 || all[k].Selected > all[best].Selected ||
				all[k].Selected == all[best].Selected && all[k].ID > all[best].ID {
				best = k
			}
		}
		if best < 0 || seen[all[best].ID] {
			return path
		}
		seen[all[best].ID] = true
		path = append(path, all[best])
		at = all[best].ID
	}
}

// choose stamps id and its ancestors with stamp, so that the branch shown
// leads through id.
func choose(ctx context.Context, tx *sql.Tx, by map[int64]Message, id, stamp int64) error {
	for hops := 0; id != 0 && hops <= len(by); hops++ {
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET selected = ? WHERE id = ?`, stamp, id); err != nil {
			return err
		}
		id = by[id].ParentID
	}
	return nil
}

// SelectMessage shows the branch through message id: it becomes the
// version shown among its siblings, and below it the branch goes on as it
// did when it was last shown.
func (s *Store) SelectMessage(ctx context.Context, id int64) error {
	return s.tx(ctx, fmt.Sprintf("select message %d", id), func(tx *sql.Tx) error {
		var conv int64
		if err := tx.QueryRowContext(ctx, `SELECT conversation_id FROM messages WHERE id = ?`, id).Scan(&conv); err != nil {
			if err == sql.ErrNoRows {
				return ErrNotFound
			}
			return err
		}
		all, err := loadAll(ctx, tx, conv)
		if err != nil {
			return err
		}
		stamp := int64(1)
		for _, m := range all {
			stamp = max(stamp, m.Selected+1)
		}
		return choose(ctx, tx, index(all), id, stamp)
	})
}

// Versions returns the versions of message id (it included), oldest
// first.
func (s *Store) Versions(ctx context.Context, id int64) ([]Message, error) {
	m, err := s.Message(ctx, id)
	if err != nil {
		return nil, err
	}
	all, err := loadAll(ctx, s.db, m.ConversationID)
	if err != nil {
		return nil, fmt.Errorf("store: versions of message %d: %w", id, err)
	}
	var out []Message
	for _, k := range children(all)[m.ParentID] {
		out = append(out, all[k])
	}
	return out, nil
}
