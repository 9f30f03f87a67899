package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// indexAfter runs add, which inserts messages inside tx, with the
// full-text index filled once at its end rather than by the insert
// trigger row by row. FTS5 writes out what it holds at every statement's
// savepoint, so a trigger run per message leaves thousands of tiny
// segments to merge: three quarters of an import's time. Here the index
// gets the new messages in one statement. The trigger is dropped and made
// again inside the transaction, so no other connection ever sees it
// missing (and a failed import rolls both back).
func indexAfter(ctx context.Context, tx *sql.Tx, add func() error) error {
	var trigger string
	if err := tx.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'messages_fts_insert'`).Scan(&trigger); err != nil {
		return fmt.Errorf("read the index trigger: %w", err)
	}
	var last int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM messages`).Scan(&last); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DROP TRIGGER messages_fts_insert`); err != nil {
		return fmt.Errorf("index after: %w", err)
	}
	if err := add(); err != nil {
		return err
	}
	// FTS5 gathers what it indexes in memory and writes a segment each
	// time that passes its hash size (1 MB unless set), merging segments
	// as they pile up: for a library of 100,000 messages, hundreds of
	// segments and merge upon merge, a third of the import. A larger
	// hash for this one statement writes a few large segments instead;
	// the setting goes back after it (inside the transaction, so a
	// failed import rolls it back too).
	prev, err := ftsHashSize(ctx, tx)
	if err != nil {
		return err
	}
	if err := setFTSHashSize(ctx, tx, importHashSize); err != nil {
		return err
	}
	// Ids only grow (AUTOINCREMENT): the new messages are those above last.
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages_fts(rowid, content) SELECT id, content FROM messages WHERE id > ?`, last); err != nil {
		return fmt.Errorf("index the imported messages: %w", err)
	}
	if err := setFTSHashSize(ctx, tx, prev); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, trigger); err != nil {
		return fmt.Errorf("restore the index trigger: %w", err)
	}
	return nil
}

// preparedTx runs statements inside tx, each prepared once: an import
// runs the same inserts and look-ups ten thousand times and more, and
// preparing each anew cost a tenth of it. The statements close with tx.
type preparedTx struct {
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

func (p *preparedTx) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	st, ok := p.stmts[q]
	if !ok {
		var err error
		if st, err = p.tx.PrepareContext(ctx, q); err != nil {
			return nil, err
		}
		p.stmts[q] = st
	}
	return st, nil
}

func (p *preparedTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	st, err := p.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (p *preparedTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := p.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// importHashSize is the full-text index's in-memory hash while an import
// indexes its messages (C memory of the statement, given back after it).
const importHashSize = 64 << 20

// defaultHashSize is FTS5's own hash size, for an index that never set
// one.
const defaultHashSize = 1 << 20

// ftsHashSize is the hash size the full-text index is set to.
func ftsHashSize(ctx context.Context, tx *sql.Tx) (int64, error) {
	var n int64
	err := tx.QueryRowContext(ctx, `SELECT v FROM messages_fts_config WHERE k = 'hashsize'`).Scan(&n)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return defaultHashSize, nil
	case err != nil:
		return 0, fmt.Errorf("read the index's hash size: %w", err)
	}
	return n, nil
}

func setFTSHashSize(ctx context.Context, tx *sql.Tx, n int64) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages_fts(messages_fts, rank) VALUES ('hashsize', ?)`, n); err != nil {
		return fmt.Errorf("set the index's hash size: %w", err)
	}
	return nil
}
