package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Conversation is one chat.
type Conversation struct {
	ID      int64
	Title   string
	Created time.Time
	Updated time.Time // last message or change; the sidebar sorts by it
	Pinned  bool
	// SystemPrompt and Sampler are the conversation's own settings.
	// Sampler is JSON whose shape app/session owns (the store keeps it
	// opaque so the engine's types never become the file format).
	SystemPrompt string
	Sampler      string
	ModelPath    string    // the model that last answered here
	DeletedAt    time.Time // zero unless soft-deleted
}

// Deleted reports whether the conversation is in the trash.
func (c Conversation) Deleted() bool { return !c.DeletedAt.IsZero() }

const convColumns = `id, title, created, updated, pinned, system_prompt, sampler, model_path, deleted_at`

func scanConversation(r scanner) (Conversation, error) {
	var (
		c                Conversation
		created, updated int64
		deleted          sql.NullInt64
	)
	if err := r.Scan(&c.ID, &c.Title, &created, &updated, &c.Pinned, &c.SystemPrompt, &c.Sampler, &c.ModelPath, &deleted); err != nil {
		return c, err
	}
	c.Created, c.Updated = fromMillis(created), fromMillis(updated)
	if deleted.Valid {
		c.DeletedAt = fromMillis(deleted.Int64)
	}
	return c, nil
}

// CreateConversation stores a new conversation from c's title, pinned
// flag, system prompt, sampler settings and model path, and returns it
// with its id and times.
func (s *Store) CreateConversation(ctx context.Context, c Conversation) (Conversation, error) {
	t := now()
	id, err := insertConversation(ctx, s.writer(), c, t, t)
	if err != nil {
		return Conversation{}, fmt.Errorf("store: create conversation: %w", err)
	}
	return s.Conversation(ctx, id)
}

// insertConversation adds c (title, pinned flag, settings, model path)
// with the given times, for CreateConversation and Import.
func insertConversation(ctx context.Context, x execer, c Conversation, created, updated int64) (int64, error) {
	return insert(ctx, x,
		`INSERT INTO conversations (title, created, updated, pinned, system_prompt, sampler, model_path)
		 VALUES (?, ?, ?, ?, ?, ?, ?)`,
		c.Title, created, updated, c.Pinned, c.SystemPrompt, c.Sampler, c.ModelPath)
}

// Conversation returns one conversation, deleted or not.
func (s *Store) Conversation(ctx context.Context, id int64) (Conversation, error) {
	return queryOne(ctx, s, fmt.Sprintf("conversation %d", id), scanConversation,
		`SELECT `+convColumns+` FROM conversations WHERE id = ?`, id)
}

// ListOptions select conversations.
type ListOptions struct {
	Deleted bool // list the trash (soft-deleted conversations) instead
	Limit   int  // 0 = all
}

// ListConversations returns conversations pinned first, then most recently
// updated first (the trash: most recently deleted first).
func (s *Store) ListConversations(ctx context.Context, opt ListOptions) ([]Conversation, error) {
	q := `SELECT ` + convColumns + ` FROM conversations WHERE deleted_at IS NULL ORDER BY pinned DESC, updated DESC, id DESC`
	if opt.Deleted {
		q = `SELECT ` + convColumns + ` FROM conversations WHERE deleted_at IS NOT NULL ORDER BY deleted_at DESC, id DESC`
	}
	limit := opt.Limit
	if limit <= 0 {
		limit = -1
	}
	out, err := queryAll(ctx, s.db, scanConversation, q+` LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list conversations: %w", err)
	}
	return out, nil
}

// UpdateConversation writes c's title, pinned flag, system prompt, sampler
// settings and model path. It does not change the update time, so renaming
// or pinning does not reorder the sidebar.
func (s *Store) UpdateConversation(ctx context.Context, c Conversation) error {
	return s.exec1(ctx, fmt.Sprintf("update conversation %d", c.ID),
		`UPDATE conversations SET title = ?, pinned = ?, system_prompt = ?, sampler = ?, model_path = ? WHERE id = ?`,
		c.Title, c.Pinned, c.SystemPrompt, c.Sampler, c.ModelPath, c.ID)
}

// RenameConversation sets the title.
func (s *Store) RenameConversation(ctx context.Context, id int64, title string) error {
	return s.exec1(ctx, fmt.Sprintf("rename conversation %d", id),
		`UPDATE conversations SET title = ? WHERE id = ?`, title, id)
}

// SetPinned pins or unpins a conversation.
func (s *Store) SetPinned(ctx context.Context, id int64, pinned bool) error {
	return s.exec1(ctx, fmt.Sprintf("pin conversation %d", id),
		`UPDATE conversations SET pinned = ? WHERE id = ?`, pinned, id)
}

// SetModelPath records the model that last answered in a conversation.
func (s *Store) SetModelPath(ctx context.Context, id int64, path string) error {
	return s.exec1(ctx, fmt.Sprintf("set model of conversation %d", id),
		`UPDATE conversations SET model_path = ? WHERE id = ?`, path, id)
}

// DeleteConversation moves a conversation to the trash: it disappears from
// lists and search, and RestoreConversation brings it back until
// PurgeDeleted removes it for good.
func (s *Store) DeleteConversation(ctx context.Context, id int64) error {
	return s.exec1(ctx, fmt.Sprintf("delete conversation %d", id),
		`UPDATE conversations SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL`, now(), id)
}

// RestoreConversation undoes DeleteConversation.
func (s *Store) RestoreConversation(ctx context.Context, id int64) error {
	return s.exec1(ctx, fmt.Sprintf("restore conversation %d", id),
		`UPDATE conversations SET deleted_at = NULL WHERE id = ? AND deleted_at IS NOT NULL`, id)
}

// PurgeDeleted removes for good the conversations deleted at or before
// the given time, with their messages, and returns how many it removed.
func (s *Store) PurgeDeleted(ctx context.Context, before time.Time) (int, error) {
	n, err := execCount(ctx, s.writer(), `DELETE FROM conversations WHERE deleted_at IS NOT NULL AND deleted_at <= ?`, before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("store: purge deleted conversations: %w", err)
	}
	return int(n), nil
}
