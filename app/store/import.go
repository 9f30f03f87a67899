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
	Messages     []Message // the branch shown, in order
	// Others are the versions off that branch, from the least to the most
	// recently chosen. Their IDs, and those of Messages, are the file's
	// own; each Other's ParentID names one of them (0: the start).
	Others []Message
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

// Import adds conversations to the library, a batch of them a
// transaction, in the order given: each conversation is written whole
// with its messages, and a batch ends after importBatch conversations or
// about importBatchTime of work, so that a write waiting for its turn (an
// answer being saved while a library of thousands of chats comes in)
// waits a moment, not the whole import. On an error, or when ctx ends,
// the batches committed before stay and the result lists them; importing
// the same conversations again adds only the rest, since what is already
// in the library is recognised, as follows.
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
//
// Messages are checked before anything is written: a message of an
// unknown role imports nothing.
func (s *Store) Import(ctx context.Context, convs []ImportConversation) (ImportResult, error) {
	for i, ic := range convs {
		for j, m := range append(ic.Messages[:len(ic.Messages):len(ic.Messages)], ic.Others...) {
			if !m.Role.valid() {
				return ImportResult{}, fmt.Errorf("store: import: conversation %d (%q), message %d: %w: role %q",
					i+1, ic.Conversation.Title, j+1, ErrInvalid, m.Role)
			}
		}
	}
	var res ImportResult
	t := now()
	for done := 0; done < len(convs); {
		if done > 0 {
			// Another process's writer sleeps in SQLite's busy handler
			// between tries, up to 100 ms: the pause lets it in (this
			// process's own writers are let in by the gate).
			select {
			case <-time.After(importPause):
			case <-ctx.Done():
				return res, fmt.Errorf("store: import: %w", ctx.Err())
			}
		}
		batch, err := s.importBatch(ctx, convs[done:], done, t)
		if err != nil {
			return res, err
		}
		res.Conversations = append(res.Conversations, batch...)
		done += len(batch)
	}
	return res, nil
}

// Batches of an import (variables so that tests can make them small).
var (
	importBatch     = 500
	importBatchTime = time.Second
	importPause     = 100 * time.Millisecond
)

// importBatch imports the first of convs, as many as make a batch, in one
// transaction; convs[0] is the import's conversation number first+1.
func (s *Store) importBatch(ctx context.Context, convs []ImportConversation, first int, t int64) ([]ImportedConversation, error) {
	var out []ImportedConversation
	err := s.tx(ctx, "import", func(tx *sql.Tx) error {
		out = out[:0]
		began := time.Now()
		x := &preparedTx{tx: tx, stmts: map[string]*sql.Stmt{}}
		return indexAfter(ctx, tx, func() error {
			for i, ic := range convs {
				r, err := importOne(ctx, tx, x, ic, t)
				if err != nil {
					return fmt.Errorf("conversation %d (%q): %w", first+i+1, ic.Conversation.Title, err)
				}
				out = append(out, r)
				// The index of the batch's messages, at its end, takes
				// about a quarter more.
				if len(out) == importBatch || time.Since(began) >= importBatchTime*3/4 {
					break
				}
			}
			return nil
		})
	})
	return out, err
}

// importOne imports one conversation inside tx, its inserts through x;
// t is the import's time.
func importOne(ctx context.Context, tx *sql.Tx, x *preparedTx, ic ImportConversation, t int64) (ImportedConversation, error) {
	c := ic.Conversation
	created, updated := millisOr(c.Created, t), millisOr(c.Updated, t)
	out := ImportedConversation{Title: c.Title}

	id, have, err := findImported(ctx, x, created, ic.Messages, t)
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
		if out.ID, err = insertConversation(ctx, x, c, created, updated); err != nil {
			return out, err
		}
		out.Outcome = Imported
	}

	var pos int
	var stamp, parent int64
	if out.Outcome == Extended { // a new conversation starts at 0
		if err := tx.QueryRowContext(ctx,
			`SELECT coalesce(max(position), 0), coalesce(max(selected), 0) FROM messages WHERE conversation_id = ?`, out.ID).Scan(&pos, &stamp); err != nil {
			return out, err
		}
	}
	// The file's ids of the messages stored, to find the parents of the
	// other versions; those of the messages the library held already map
	// to the library's.
	local := map[int64]int64{}
	if have > 0 {
		all, err := loadAll(ctx, tx, out.ID)
		if err != nil {
			return out, err
		}
		path := activePath(all)
		for i, m := range ic.Messages[:have] {
			if m.ID != 0 {
				local[m.ID] = path[i].ID
			}
		}
		parent = path[have-1].ID
	}
	add := func(m Message, parent, stamp int64) (int64, error) {
		pos++
		mc := millisOr(m.Created, t)
		m.ParentID = parent
		out.Messages++
		return insertMessage(ctx, x, m, out.ID, pos, mc, millisOr(m.Updated, mc), stamp)
	}
	// Versions get the lower stamps, in the order given, and the branch
	// shown the highest, so that it is shown again.
	others := len(ic.Others)
	if out.Outcome == Extended {
		others = 0 // the library has its own versions of what it holds
	}
	for i, m := range ic.Messages[have:] {
		id, err := add(m, parent, stamp+int64(others+i+1))
		if err != nil {
			return out, err
		}
		if m.ID != 0 {
			local[m.ID] = id
		}
		parent = id
	}
	if err := importOthers(ic.Others[:others], local, stamp, add); err != nil {
		return out, err
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
func findImported(ctx context.Context, tx querier, created int64, msgs []Message, t int64) (id int64, have int, err error) {
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

// messageKeys identifies the messages of the branch a conversation shows:
// the one an export wrote as its messages.
func messageKeys(ctx context.Context, tx querier, conv int64) ([]msgKey, error) {
	all, err := loadAll(ctx, tx, conv)
	if err != nil {
		return nil, err
	}
	var keys []msgKey
	for _, m := range activePath(all) {
		keys = append(keys, msgKey{m.Role, m.Content, m.Created.UnixMilli()})
	}
	return keys, nil
}

// importOthers stores the versions off the branch shown, each once its
// parent is stored (a file may list a reply before its parent), with the
// stamps after base in the order given. local maps the file's ids to the
// library's.
func importOthers(others []Message, local map[int64]int64, base int64, add func(Message, int64, int64) (int64, error)) error {
	done := make([]bool, len(others))
	for left := len(others); left > 0; {
		progress := false
		for i, m := range others {
			if done[i] {
				continue
			}
			parent, ok := int64(0), m.ParentID == 0
			if !ok {
				parent, ok = local[m.ParentID]
			}
			if !ok {
				continue
			}
			id, err := add(m, parent, base+int64(i+1))
			if err != nil {
				return err
			}
			if m.ID != 0 {
				local[m.ID] = id
			}
			done[i], progress = true, true
			left--
		}
		if !progress {
			for i, m := range others {
				if !done[i] {
					return fmt.Errorf("%w: version %d follows message %d, which is not in the conversation", ErrInvalid, i+1, m.ParentID)
				}
			}
		}
	}
	return nil
}

// millisOr is tm in the store's milliseconds, or def when tm is zero.
func millisOr(tm time.Time, def int64) int64 {
	if tm.IsZero() {
		return def
	}
	return tm.UnixMilli()
}
