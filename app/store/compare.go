package store

import (
	"context"
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
		id, err := insert(ctx, s.writer(),
			`INSERT INTO comparisons (created, updated, title, prompt, result) VALUES (?, ?, ?, ?, ?)`,
			t, t, c.Title, c.Prompt, c.Result)
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

// cmpColumns are what scanComparison reads; a list selects ” for the
// result.
const cmpColumns = `id, created, updated, title, prompt, result`

func scanComparison(r scanner) (Comparison, error) {
	var (
		c                Comparison
		created, updated int64
	)
	err := r.Scan(&c.ID, &created, &updated, &c.Title, &c.Prompt, &c.Result)
	c.Created, c.Updated = fromMillis(created), fromMillis(updated)
	return c, err
}

// Comparison returns one comparison with its result.
func (s *Store) Comparison(ctx context.Context, id int64) (Comparison, error) {
	return queryOne(ctx, s, fmt.Sprintf("comparison %d", id), scanComparison,
		`SELECT `+cmpColumns+` FROM comparisons WHERE id = ?`, id)
}

// ListComparisons returns the comparisons most recently saved first,
// without their results (which can be large): open one with Comparison.
// limit 0 means all.
func (s *Store) ListComparisons(ctx context.Context, limit int) ([]Comparison, error) {
	if limit <= 0 {
		limit = -1
	}
	out, err := queryAll(ctx, s.db, scanComparison,
		`SELECT id, created, updated, title, prompt, '' FROM comparisons ORDER BY updated DESC, id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list comparisons: %w", err)
	}
	return out, nil
}

// DeleteComparison removes a comparison for good (comparisons have no
// trash: they can be run again).
func (s *Store) DeleteComparison(ctx context.Context, id int64) error {
	return s.exec1(ctx, fmt.Sprintf("delete comparison %d", id), `DELETE FROM comparisons WHERE id = ?`, id)
}
