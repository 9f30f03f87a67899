package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/churon/churon/internal/enum"
)

// ImportConversation is a conversation to import together with its
// messages, as another database or an export file held it. The ids,
// conversation ids and positions of the values are ignored (the store
// assigns its own); every other field, timestamps included, is kept. A
// zero Created or Updated becomes the time of the import.
type ImportConversation struct {
	Conversation Conversation
	Messages     []Message // in order
}

// ImportOutcome says what Import did with one conversation.
type ImportOutcome int

const (
	// Imported: the conversation was new to the library and was added.
	Imported ImportOutcome = iota
	// Extended: the library held an earlier state of the conversation (its
	// messages are a prefix of the imported ones); the messages it lacked
	// were appended.
	Extended
	// Skipped: the library already holds the conversation, with every
	// imported message (and possibly more).
	Skipped
)

var importOutcomeNames = [...]string{Imported: "imported", Extended: "extended", Skipped: "skipped"}

func (o ImportOutcome) String() string { return enum.Name(o, "ImportOutcome", importOutcomeNames[:]) }

// ImportedConversation is the result for one conversation, in the order
// they were given.
type ImportedConversation struct {
	ID       int64 // the conversation in this library
	Title    string
	Outcome  ImportOutcome
	Messages int // messages added (all of them when Imported, 0 when Skipped)
}

// ImportResult is what Import did.
type ImportResult struct {
	Conversations []ImportedConversation
}

// Count is the number of conversations with the given outcome.
func (r ImportResult) Count(o ImportOutcome) int {
	n := 0
	for _, c := range r.Conversations {
		if c.Outcome == o {
			n++
		}
	}
	return n
}

// Import adds conversations to the library in one transaction: either all
// of them are imported or, on any error, none is.
//
// A conversation that is already in the library is not duplicated. It is
// recognised by its creation time (kept to the millisecond by export and
// import) and its messages, compared by role, content and creation time:
// when a conversation of the library (not in the trash) created at the
// same instant holds the imported messages or more, the import skips it;
// when it holds a prefix of them, the missing messages are appended to it.
// So importing a file twice, or importing a backup back into the library
// it came from, adds nothing, and importing a newer backup of a chat that
// went on elsewhere brings its new turns. A chat edited in both places
// (neither history a prefix of the other) is imported as a separate
// conversation: nothing in the library is ever overwritten.
func (s *Store) Import(ctx context.Context, convs []ImportConversation) (ImportResult, error) {
	for i, ic := range convs {
		for j, m := range ic.Messages {
			if !m.Role.valid() {
				return ImportResult{}, fmt.Errorf("store: import: conversation %d (%q), message %d: %w: role %q",
					i+1, ic.Conversation.Title, j+1, ErrInvalid, m.Role)
			}
		}
	}
	var res ImportResult
	err := s.tx(ctx, "import", func(tx *sql.Tx) error {
		t := now()
		for i, ic := range convs {
			r, err := importOne(ctx, tx, ic, t)
			if err != nil {
				return fmt.Errorf("conversation %d (%q): %w", i+1, ic.Conversation.Title, err)
			}
			res.Conversations = append(res.Conversations, r)
		}
		return nil
	})
	if err != nil {
		return ImportResult{}, err
	}
	return res, nil
}

// importOne imports one conversation inside tx; t is the import's time.
func importOne(ctx context.Context, tx *sql.Tx, ic ImportConversation, t int64) (ImportedConversation, error) {
	c := ic.Conversation
	created, updated := millisOr(c.Created, t), millisOr(c.Updated, t)
	out := ImportedConversation{Title: c.Title}

	id, have, err := findImported(ctx, tx, created, ic.Messages, t)
	if err != nil {
		return out, err
	}
	switch {
	case id != 0 && have >= len(ic.Messages):
		out.ID, out.Outcome = id, Skipped
		return out, nil
	case id != 0:
		out.ID, out.Outcome = id, Extended
	default:
		if out.ID, err = insertConversation(ctx, tx, c, created, updated); err != nil {
			return out, err
		}
		out.Outcome = Imported
	}

	var pos int
	if err := tx.QueryRowContext(ctx,
		`SELECT coalesce(max(position), 0) FROM messages WHERE conversation_id = ?`, out.ID).Scan(&pos); err != nil {
		return out, err
	}
	for _, m := range ic.Messages[have:] {
		pos++
		mc := millisOr(m.Created, t)
		if _, err := insertMessage(ctx, tx, m, out.ID, pos, mc, millisOr(m.Updated, mc)); err != nil {
			return out, err
		}
		out.Messages++
	}
	if out.Outcome == Extended {
		if _, err := tx.ExecContext(ctx,
			`UPDATE conversations SET updated = max(updated, ?) WHERE id = ?`, updated, out.ID); err != nil {
			return out, err
		}
	}
	return out, nil
}

// findImported looks for a conversation of the library (not in the trash)
// that is the imported one: created at the same millisecond, with a
// history that is a prefix of the imported messages or has them as its
// prefix. It returns its id (0: none) and how many of the imported
// messages it already holds. Of several, the one holding the most wins.
func findImported(ctx context.Context, tx *sql.Tx, created int64, msgs []Message, t int64) (id int64, have int, err error) {
	// All ids first: the messages of each are read with the rows closed.
	ids, err := queryAll(ctx, tx, scanID,
		`SELECT id FROM conversations WHERE created = ? AND deleted_at IS NULL ORDER BY id`, created)
	if err != nil {
		return 0, 0, err
	}
	best, bestHave := int64(0), -1
	for _, cid := range ids {
		existing, err := messageKeys(ctx, tx, cid)
		if err != nil {
			return 0, 0, err
		}
		n := min(len(existing), len(msgs))
		same := true
		for i := range n {
			if existing[i] != keyOf(msgs[i], t) {
				same = false
				break
			}
		}
		if same && n > bestHave {
			best, bestHave = cid, n
		}
	}
	if best == 0 {
		return 0, 0, nil
	}
	return best, bestHave, nil
}

// msgKey is what identifies a message across libraries.
type msgKey struct {
	role    Role
	content string
	created int64
}

func keyOf(m Message, t int64) msgKey {
	return msgKey{m.Role, m.Content, millisOr(m.Created, t)}
}

func scanMsgKey(r scanner) (msgKey, error) {
	var k msgKey
	err := r.Scan(&k.role, &k.content, &k.created)
	return k, err
}

func messageKeys(ctx context.Context, tx *sql.Tx, conv int64) ([]msgKey, error) {
	return queryAll(ctx, tx, scanMsgKey,
		`SELECT role, content, created FROM messages WHERE conversation_id = ? ORDER BY position`, conv)
}

// millisOr is tm in the store's milliseconds, or def when tm is zero.
func millisOr(tm time.Time, def int64) int64 {
	if tm.IsZero() {
		return def
	}
	return tm.UnixMilli()
}
