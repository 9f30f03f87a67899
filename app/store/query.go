package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// execer and querier are what *sql.DB and *sql.Tx share, so that one
// helper serves a statement run alone and one run inside a transaction.
type execer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}

type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// scanner is a row to read: *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

func scanID(r scanner) (int64, error) {
	var id int64
	err := r.Scan(&id)
	return id, err
}

// execCount runs a statement and returns how many rows it changed.
func execCount(ctx context.Context, x execer, q string, args ...any) (int64, error) {
	res, err := x.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// exec1 runs a statement that must change exactly one row; zero rows
// means the target does not exist (or is not in the state the statement
// expects) and is reported as ErrNotFound.
func (s *Store) exec1(ctx context.Context, what, q string, args ...any) error {
	n, err := execCount(ctx, s.writer(), q, args...)
	if err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("store: %s: %w", what, ErrNotFound)
	}
	return nil
}

// insert runs an INSERT and returns the new row's id.
func insert(ctx context.Context, x execer, q string, args ...any) (int64, error) {
	res, err := x.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// queryOne reads the row q selects with scan. what names the row in
// errors ("conversation 7"); no row is ErrNotFound.
func queryOne[T any](ctx context.Context, s *Store, what string, scan func(scanner) (T, error), q string, args ...any) (T, error) {
	v, err := scan(s.db.QueryRowContext(ctx, q, args...))
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		var zero T
		return zero, fmt.Errorf("store: %s: %w", what, err)
	}
	return v, nil
}

// queryAll reads every row q selects with scan, in order.
func queryAll[T any](ctx context.Context, x querier, scan func(scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := x.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
