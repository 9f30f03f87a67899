package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver

	"github.com/churon/churon/app/paths"
)

// Store is the chat database. It is safe for concurrent use by many
// goroutines, and several processes (the desktop app and `churon chat`)
// may use the same file at once: SQLite's WAL mode lets readers proceed
// while one writer writes, and writers wait up to BusyTimeout for each
// other.
type Store struct {
	db   *sql.DB
	path string
	gate gate // this process's writers, in turn
}

// BusyTimeout is how long a write waits for another connection or process
// that holds the write lock. It is long: no front end waits on a write
// (they run off the drawing goroutine), and a writer that gives up loses
// what it was saving — an answer's last words behind a large import, or
// behind a disk that stalls for a few seconds.
const BusyTimeout = 30 * time.Second

// Open opens (creating if needed) the database at path and migrates it to
// the current schema. The folder is created with owner-only permissions:
// chats are private.
func Open(ctx context.Context, path string) (*Store, error) {
	return openAt(ctx, path, SchemaVersion)
}

// OpenDefault opens the database at paths.Database(): under $CHURON_HOME
// when set, else in the XDG data folder.
func OpenDefault(ctx context.Context) (*Store, error) {
	return Open(ctx, paths.Database())
}

func openAt(ctx context.Context, path string, target int) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("store: open: %w: empty path", ErrInvalid)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := migrate(ctx, db, target); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return &Store{db: db, path: path, gate: newGate()}, nil
}

// dsn builds the connection string. Every connection of the pool gets the
// same settings:
//   - WAL: readers never block the writer and a crash never corrupts;
//   - synchronous=FULL: each commit is on disk when it returns, so a
//     committed message survives a power cut, not only a killed process.
//     Commits are rare (a streamed answer commits about once a second), so
//     the fsync costs nothing a person notices;
//   - foreign keys on, so deleting a conversation deletes its messages;
//   - BEGIN IMMEDIATE for transactions: a transaction that will write takes
//     the write lock up front and waits (busy timeout) instead of failing
//     with SQLITE_BUSY when it later tries to upgrade a read lock.
func dsn(path string) string {
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(BusyTimeout.Milliseconds()))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "FULL")
	q.Set("_foreign_keys", "1")
	q.Set("_txlock", "immediate")
	// In a file: URI SQLite decodes %XX, and '?' and '#' end the path.
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return "file:" + r.Replace(path) + "?" + q.Encode()
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// Version reports the database's schema version.
func (s *Store) Version(ctx context.Context) (int, error) { return version(ctx, s.db) }

// Check runs SQLite's integrity check and the full-text index's own check.
func (s *Store) Check(ctx context.Context) error {
	var res string
	if err := s.db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil {
		return fmt.Errorf("store: integrity check: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("store: integrity check: %s", res)
	}
	if _, err := s.writer().ExecContext(ctx, `INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		return fmt.Errorf("store: full-text index check: %w", err)
	}
	return nil
}

// now is the store's clock, in milliseconds since the epoch: every
// timestamp in the database is an INTEGER of those.
func now() int64 { return time.Now().UnixMilli() }

func fromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// tx runs f in an immediate transaction, in this process's writers' turn.
func (s *Store) tx(ctx context.Context, what string, f func(tx *sql.Tx) error) error {
	if err := s.gate.enter(ctx); err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	defer s.gate.leave()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: %s: commit: %w", what, err)
	}
	return nil
}
