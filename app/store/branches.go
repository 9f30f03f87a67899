package store

import (
	"context"
	"fmt"
)

// Branches returns what Messages and AllMessages return — the branch a
// conversation shows, and every message of it — from one reading: an
// export of thousands of chats needs both of each.
func (s *Store) Branches(ctx context.Context, conv int64) (shown, all []Message, err error) {
	all, err = loadAll(ctx, s.db, conv)
	if err != nil {
		return nil, nil, fmt.Errorf("store: messages of conversation %d: %w", conv, err)
	}
	return activePath(all), all, nil
}
