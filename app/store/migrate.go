package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// A migration moves the schema from version-1 to version. Migrations are
// append-only: once released, a migration is never edited, because
// databases out there have already run it.
type migration struct {
	version int
	name    string
	up      func(ctx context.Context, tx *sql.Tx) error
}

func execAll(stmts ...string) func(context.Context, *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		for _, s := range stmts {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	}
}

// Ids are AUTOINCREMENT so that they are never reused: a regenerated
// answer gets a new id, and an id the UI or an undo still holds never
// names another message or conversation.
var migrations = []migration{
	{1, "conversations, messages, settings", execAll(
		`CREATE TABLE conversations (
			id            INTEGER PRIMARY KEY AUTOINCREMENT,
			title         TEXT    NOT NULL DEFAULT '',
			created       INTEGER NOT NULL,
			updated       INTEGER NOT NULL,
			pinned        INTEGER NOT NULL DEFAULT 0,
			system_prompt TEXT    NOT NULL DEFAULT '',
			sampler       TEXT    NOT NULL DEFAULT '',
			model_path    TEXT    NOT NULL DEFAULT ''
		)`,
		`CREATE TABLE messages (
			id              INTEGER PRIMARY KEY AUTOINCREMENT,
			conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
			position        INTEGER NOT NULL,
			role            TEXT    NOT NULL,
			content         TEXT    NOT NULL DEFAULT '',
			created         INTEGER NOT NULL,
			updated         INTEGER NOT NULL,
			model           TEXT    NOT NULL DEFAULT '',
			quant           TEXT    NOT NULL DEFAULT '',
			sampler         TEXT    NOT NULL DEFAULT '',
			prompt_tokens   INTEGER NOT NULL DEFAULT 0,
			gen_tokens      INTEGER NOT NULL DEFAULT 0,
			ttft_ms         REAL    NOT NULL DEFAULT 0,
			prompt_tps      REAL    NOT NULL DEFAULT 0,
			gen_tps         REAL    NOT NULL DEFAULT 0,
			finish_reason   TEXT    NOT NULL DEFAULT '',
			UNIQUE (conversation_id, position)
		)`,
		`CREATE INDEX conversations_by_update ON conversations (pinned DESC, updated DESC)`,
		`CREATE TABLE settings (
			key   TEXT PRIMARY KEY,
			value TEXT NOT NULL
		) WITHOUT ROWID`,
	)},
	// Full-text search. An external-content FTS5 table indexes
	// messages.content without a second copy of the text; triggers keep it
	// in step, and 'rebuild' indexes what a version-1 database already holds.
	// doc.go explains the trigram tokenizer.
	{2, "full-text index over message content", execAll(fullTextIndex(messagesIndex)...)},
	// Soft delete, so that deleting a conversation can be undone.
	{3, "soft delete of conversations", execAll(
		`ALTER TABLE conversations ADD COLUMN deleted_at INTEGER`,
		`CREATE INDEX conversations_deleted ON conversations (deleted_at) WHERE deleted_at IS NOT NULL`,
	)},
	// How much of an answer's prompt came from the conversation's KV cache,
	// so the chat can show "reused / processed" after a restart too.
	{4, "prompt tokens reused from the KV cache", execAll(
		`ALTER TABLE messages ADD COLUMN prompt_reused INTEGER NOT NULL DEFAULT 0`,
	)},
	// Side-by-side quantization comparisons. The result is one JSON
	// document (app/compare.Result): it is written once when a run ends and
	// read back whole to reopen or export it, never queried by field.
	{5, "quantization comparisons", execAll(
		`CREATE TABLE comparisons (
			id      INTEGER PRIMARY KEY AUTOINCREMENT,
			created INTEGER NOT NULL,
			updated INTEGER NOT NULL,
			title   TEXT    NOT NULL DEFAULT '',
			prompt  TEXT    NOT NULL DEFAULT '',
			result  TEXT    NOT NULL DEFAULT ''
		)`,
		`CREATE INDEX comparisons_by_update ON comparisons (updated DESC)`,
	)},
	// Versions: editing or regenerating keeps the earlier message, so a
	// conversation is a tree (versions.go says why a tree and how the
	// branch shown is chosen). parent_id is no foreign key: deleting a
	// message hands its replies to its parent instead of cascading. The
	// linear history of older databases becomes a chain, each message the
	// child of the one before it, and each chosen.
	{6, "message versions: parent and chosen branch", execAll(
		`ALTER TABLE messages ADD COLUMN parent_id INTEGER`,
		`ALTER TABLE messages ADD COLUMN selected INTEGER NOT NULL DEFAULT 0`,
		`UPDATE messages SET selected = position, parent_id = (
			SELECT p.id FROM messages p WHERE p.conversation_id = messages.conversation_id AND p.position < messages.position
			ORDER BY p.position DESC LIMIT 1)`,
		`CREATE INDEX messages_by_parent ON messages (conversation_id, parent_id)`,
	)},
	// An answer's reasoning (a <think> block, gpt-oss's analysis channel)
	// kept apart from its content, with what it took: the chat shows it
	// folded above the answer, and the next prompt leaves it out where the
	// template says so.
	{7, "answer reasoning", execAll(
		`ALTER TABLE messages ADD COLUMN reasoning TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE messages ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE messages ADD COLUMN reasoning_ms REAL NOT NULL DEFAULT 0`,
	)},
	// Libraries of thousands of chats (pages.go): the sidebar's pages walk
	// an index in its own order, of the chats not in the trash (it
	// replaces the one of version 1, which knew neither the id that breaks
	// ties nor the trash), and an import finds a chat it already holds by
	// its creation time without reading every conversation.
	{8, "indexes for pages of the list and for imports", execAll(
		`DROP INDEX conversations_by_update`,
		`CREATE INDEX conversations_listed ON conversations (pinned DESC, updated DESC, id DESC) WHERE deleted_at IS NULL`,
		`CREATE INDEX conversations_by_created ON conversations (created)`,
	)},
	// Title search without reading every conversation (pages.go): a
	// trigram index over the titles, kept in step by triggers as the
	// messages' is (an import fills it at each batch's end instead,
	// import_index.go), and 'rebuild' indexes the titles already there.
	{9, "full-text index over conversation titles", execAll(fullTextIndex(titlesIndex)...)},
}

// fullTextIndex makes ix: an external-content FTS5 table (the text is
// not copied) with the trigram tokenizer, the triggers that keep it in
// step with its table, and its filling from the rows already there.
func fullTextIndex(ix ftsIndex) []string {
	return []string{
		`CREATE VIRTUAL TABLE ` + ix.fts + ` USING fts5(
			` + ix.column + `, content='` + ix.table + `', content_rowid='id', tokenize='trigram')`,
		`CREATE TRIGGER ` + ix.trigger() + ` AFTER INSERT ON ` + ix.table + ` BEGIN
			INSERT INTO ` + ix.fts + `(rowid, ` + ix.column + `) VALUES (new.id, new.` + ix.column + `);
		END`,
		`CREATE TRIGGER ` + ix.fts + `_delete AFTER DELETE ON ` + ix.table + ` BEGIN
			INSERT INTO ` + ix.fts + `(` + ix.fts + `, rowid, ` + ix.column + `) VALUES ('delete', old.id, old.` + ix.column + `);
		END`,
		`CREATE TRIGGER ` + ix.fts + `_update AFTER UPDATE OF ` + ix.column + ` ON ` + ix.table + ` BEGIN
			INSERT INTO ` + ix.fts + `(` + ix.fts + `, rowid, ` + ix.column + `) VALUES ('delete', old.id, old.` + ix.column + `);
			INSERT INTO ` + ix.fts + `(rowid, ` + ix.column + `) VALUES (new.id, new.` + ix.column + `);
		END`,
		`INSERT INTO ` + ix.fts + `(` + ix.fts + `) VALUES ('rebuild')`,
	}
}

// SchemaVersion is the schema version this build writes.
var SchemaVersion = migrations[len(migrations)-1].version

// migrate brings the database up to target. Each step runs in its own
// immediate (write-locked) transaction together with the version bump, so
// a crash leaves the database at a whole version and two processes opening
// the same file at once do not both run a step.
func migrate(ctx context.Context, db *sql.DB, target int) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("store: create schema_version: %w", err)
	}
	for _, m := range migrations {
		if m.version > target {
			break
		}
		if err := step(ctx, db, m); err != nil {
			return err
		}
	}
	v, err := version(ctx, db)
	if err != nil {
		return err
	}
	if v > SchemaVersion {
		return fmt.Errorf("%w: the database is at version %d, this build knows up to %d", ErrSchemaTooNew, v, SchemaVersion)
	}
	return nil
}

func step(ctx context.Context, db *sql.DB, m migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: migration %d: %w", m.version, err)
	}
	defer tx.Rollback()
	var v int
	err = tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
			return fmt.Errorf("store: migration %d: %w", m.version, err)
		}
	case err != nil:
		return fmt.Errorf("store: migration %d: read version: %w", m.version, err)
	}
	if v >= m.version {
		return nil
	}
	if v != m.version-1 {
		return fmt.Errorf("store: migration %d (%s): database is at version %d", m.version, m.name, v)
	}
	if err := m.up(ctx, tx); err != nil {
		return fmt.Errorf("store: migration %d (%s): %w", m.version, m.name, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, m.version); err != nil {
		return fmt.Errorf("store: migration %d: %w", m.version, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: migration %d: commit: %w", m.version, err)
	}
	return nil
}

func version(ctx context.Context, db *sql.DB) (int, error) {
	var v int
	err := db.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: read schema version: %w", err)
	}
	return v, nil
}
