package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Comparison is a saved side-by-side model comparison. Result is a JSON
// document whose shape app/compare owns (compare.Result); the store keeps
// it opaque, written whole and read back whole, never queried by field.
type Comparison struct {
	ID      int64
	Title   string
	Prompt  string
	Result  string // empty in ListComparisons, which leaves the documents out
	Created time.Time
	Updated time.Time
}

// SaveComparison stores c: a new row when c.ID is 0, else it replaces the
// title, prompt and result of comparison c.ID. It returns the comparison
// as stored, with its id and times.
func (s *Store) SaveComparison(ctx context.Context, c Comparison) (Comparison, error) {
	t := now()
	if c.ID == 0 {
		res, err := s.db.ExecContext(ctx,
			`INSERT INTO comparisons (created, updated, title, prompt, result) VALUES (?, ?, ?, ?, ?)`,
			t, t, c.Title, c.Prompt, c.Result)
		if err != nil {
			return Comparison{}, fmt.Errorf("store: save comparison: %w", err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return Comparison{}, fmt.Errorf("store: save comparison: %w", err)
		}
		return s.Comparison(ctx, id)
	}
	if err := s.exec1(ctx, fmt.Sprintf("save comparison %d", c.ID),
		`UPDATE comparisons SET updated = ?, title = ?, prompt = ?, result = ? WHERE id = ?`,
		t, c.Title, c.Prompt, c.Result, c.ID); err != nil {
		return Comparison{}, err
	}
	return s.Comparison(ctx, c.ID)
}

// Comparison returns one comparison with its result.
func (s *Store) Comparison(ctx context.Context, id int64) (Comparison, error) {
	var (
		c                Comparison
		created, updated int64
	)
	err := s.db.QueryRowContext(ctx,
		`SELECT id, created, updated, title, prompt, result FROM comparisons WHERE id = ?`, id).
		Scan(&c.ID, &created, &updated, &c.Title, &c.Prompt, &c.Result)
	if errors.Is(err, sql.ErrNoRows) {
		return Comparison{}, fmt.Errorf("store: comparison %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Comparison{}, fmt.Errorf("store: comparison %d: %w", id, err)
	}
	c.Created, c.Updated = fromMillis(created), fromMillis(updated)
	return c, nil
}

// ListComparisons returns the comparisons most recently saved first,
// without their results (which can be large): open one with Comparison.
// limit 0 means all.
func (s *Store) ListComparisons(ctx context.Context, limit int) ([]Comparison, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.db.QueryContext(ctx,
		`SELECT id, created, updated, title, prompt FROM comparisons ORDER BY updated DESC, id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list comparisons: %w", err)
	}
	defer rows.Close()
	var out []Comparison
	for rows.Next() {
		var (
			c                Comparison
			created, updated int64
		)
		if err := rows.Scan(&c.ID, &created, &updated, &c.Title, &c.Prompt); err != nil {
			return nil, fmt.Errorf("store: list comparisons: %w", err)
		}
		c.Created, c.Updated = fromMillis(created), fromMillis(updated)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list comparisons: %w", err)
	}
	return out, nil
}

// DeleteComparison removes a comparison for good (comparisons have no
// trash: they can be run again).
func (s *Store) DeleteComparison(ctx context.Context, id int64) error {
	return s.exec1(ctx, fmt.Sprintf("delete comparison %d", id), `DELETE FROM comparisons WHERE id = ?`, id)
}
