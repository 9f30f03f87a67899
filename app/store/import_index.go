package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// indexAfter runs add, which inserts messages and conversations inside
// tx, with the full-text indexes filled once at its end rather than by
// their insert triggers row by row. FTS5 writes out what it holds at
// every statement's savepoint, so a trigger run per message leaves
// thousands of tiny segments to merge: three quarters of an import's
// time. Here each index gets the new rows in one statement. The triggers
// are dropped and made again inside the transaction, so no other
// connection ever sees them missing (and a failed import rolls them
// back).
func indexAfter(ctx context.Context, tx *sql.Tx, add func() error) error {
	type state struct {
		trigger string
		last    int64
	}
	was := make([]state, len(importIndexes))
	for i, ix := range importIndexes {
		if err := tx.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?`, ix.trigger()).Scan(&was[i].trigger); err != nil {
			return fmt.Errorf("read the index trigger %s: %w", ix.trigger(), err)
		}
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM `+ix.table).Scan(&was[i].last); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DROP TRIGGER `+ix.trigger()); err != nil {
			return fmt.Errorf("index after: %w", err)
		}
	}
	if err := add(); err != nil {
		return err
	}
	for i, ix := range importIndexes {
		// FTS5 gathers what it indexes in memory and writes a segment
		// each time that passes its hash size (1 MB unless set), merging
		// segments as they pile up: for a library of 100,000 messages,
		// hundreds of segments and merge upon merge, a third of the
		// import. A larger hash for this one statement writes a few large
		// segments instead; the setting goes back after it (inside the
		// transaction, so a failed import rolls it back too).
		prev, err := ix.hashSize(ctx, tx)
		if err != nil {
			return err
		}
		if err := ix.setHashSize(ctx, tx, importHashSize); err != nil {
			return err
		}
		// Ids only grow (AUTOINCREMENT): the new rows are those above last.
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+ix.fts+`(rowid, `+ix.column+`) SELECT id, `+ix.column+` FROM `+ix.table+` WHERE id > ?`, was[i].last); err != nil {
			return fmt.Errorf("index the imported %s: %w", ix.table, err)
		}
		if err := ix.setHashSize(ctx, tx, prev); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, was[i].trigger); err != nil {
			return fmt.Errorf("restore the index trigger %s: %w", ix.trigger(), err)
		}
	}
	return nil
}

// ftsIndex is a full-text index (migrate.go makes them): the FTS5 table,
// and the table and column it indexes.
type ftsIndex struct{ fts, table, column string }

var (
	messagesIndex = ftsIndex{"messages_fts", "messages", "content"}
	titlesIndex   = ftsIndex{"conversations_fts", "conversations", "title"}
	// importIndexes are filled by an import itself.
	importIndexes = []ftsIndex{messagesIndex, titlesIndex}
)

// trigger is the trigger that indexes a row inserted one at a time.
func (ix ftsIndex) trigger() string { return ix.fts + "_insert" }

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

// hashSize is the hash size the full-text index is set to.
func (ix ftsIndex) hashSize(ctx context.Context, tx *sql.Tx) (int64, error) {
	var n int64
	err := tx.QueryRowContext(ctx, `SELECT v FROM `+ix.fts+`_config WHERE k = 'hashsize'`).Scan(&n)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return defaultHashSize, nil
	case err != nil:
		return 0, fmt.Errorf("read the hash size of %s: %w", ix.fts, err)
	}
	return n, nil
}

func (ix ftsIndex) setHashSize(ctx context.Context, tx *sql.Tx, n int64) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+ix.fts+`(`+ix.fts+`, rank) VALUES ('hashsize', ?)`, n); err != nil {
		return fmt.Errorf("set the hash size of %s: %w", ix.fts, err)
	}
	return nil
}
