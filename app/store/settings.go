package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Setting returns an app setting and whether it is set.
func (s *Store) Setting(ctx context.Context, key string) (string, bool, error) {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("store: setting %q: %w", key, err)
	}
	return v, true, nil
}

// SetSetting stores an app setting.
func (s *Store) SetSetting(ctx context.Context, key, value string) error {
	if _, err := s.writer().ExecContext(ctx,
		`INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
		key, value); err != nil {
		return fmt.Errorf("store: set setting %q: %w", key, err)
	}
	return nil
}

// DeleteSetting removes an app setting; removing one that is not set is
// not an error.
func (s *Store) DeleteSetting(ctx context.Context, key string) error {
	if _, err := s.writer().ExecContext(ctx, `DELETE FROM settings WHERE key = ?`, key); err != nil {
		return fmt.Errorf("store: delete setting %q: %w", key, err)
	}
	return nil
}

// Settings returns every app setting.
func (s *Store) Settings(ctx context.Context) (map[string]string, error) {
	pairs, err := queryAll(ctx, s.db, func(r scanner) (kv [2]string, err error) {
		err = r.Scan(&kv[0], &kv[1])
		return kv, err
	}, `SELECT key, value FROM settings`)
	if err != nil {
		return nil, fmt.Errorf("store: settings: %w", err)
	}
	out := make(map[string]string, len(pairs))
	for _, kv := range pairs {
		out[kv[0]] = kv[1]
	}
	return out, nil
}
