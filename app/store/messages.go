package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"
)

// Role is who wrote a message.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
	// RoleNotice is a note from the program to the person, shown in the
	// chat but never part of a prompt: e.g. that older messages no longer
	// fit in the model's context. Its Sampler holds the notice's details
	// as JSON (app/session's shape).
	RoleNotice Role = "notice"
)

func (r Role) valid() bool {
	switch r {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool, RoleNotice:
		return true
	}
	return false
}

// Message is one turn of a conversation. The generation fields are set on
// assistant messages only.
type Message struct {
	ID             int64
	ConversationID int64
	Position       int // 1, 2, 3… within the conversation
	Role           Role
	Content        string
	Created        time.Time
	Updated        time.Time

	Model        string // model file that wrote the answer
	Quant        string // its quantization, e.g. "Q4_K_M"
	Sampler      string // JSON of the sampler settings used (app/session's shape)
	PromptTokens int    // prompt length the answer was generated from
	// PromptReused of the PromptTokens came from the conversation's KV
	// cache; the rest were run through the model.
	PromptReused int
	GenTokens    int
	TTFT         time.Duration
	PromptTPS    float64
	GenTPS       float64
	// FinishReason is why generation ended ("eos", "stop", "length",
	// "cancelled", "error", …). It is empty while the answer streams, and
	// stays empty when the program died mid-answer: the content is then
	// what was committed last.
	FinishReason string

	// ParentID is the message this one follows (0: it opens the
	// conversation). Messages with the same parent are versions of one
	// another: an edit or a regenerated answer (see versions.go).
	ParentID int64
	// Version is the message's place among its versions, oldest first
	// (1-based), and Versions how many there are; Messages and
	// AllMessages set them.
	Version, Versions int
	// Selected orders versions by when each was last chosen or written:
	// at a fork the conversation goes on with the one chosen last.
	Selected int64

	// Reasoning is an answer's thinking, apart from its Content (a
	// <think> block, gpt-oss's analysis channel); ReasoningTokens of the
	// GenTokens went to it, over ReasoningTime.
	Reasoning       string
	ReasoningTokens int
	ReasoningTime   time.Duration
}

const msgColumns = `id, conversation_id, position, role, content, created, updated, model, quant, sampler,
	prompt_tokens, gen_tokens, ttft_ms, prompt_tps, gen_tps, finish_reason, prompt_reused, parent_id, selected,
	reasoning, reasoning_tokens, reasoning_ms`

func scanMessage(r scanner) (Message, error) {
	var (
		m                Message
		created, updated int64
		ttftMs, reasMs   float64
		parent           sql.NullInt64
	)
	err := r.Scan(&m.ID, &m.ConversationID, &m.Position, &m.Role, &m.Content, &created, &updated, &m.Model, &m.Quant, &m.Sampler,
		&m.PromptTokens, &m.GenTokens, &ttftMs, &m.PromptTPS, &m.GenTPS, &m.FinishReason, &m.PromptReused, &parent, &m.Selected,
		&m.Reasoning, &m.ReasoningTokens, &reasMs)
	m.ParentID = parent.Int64
	m.ReasoningTime = time.Duration(math.Round(reasMs * float64(time.Millisecond)))
	m.Created, m.Updated = fromMillis(created), fromMillis(updated)
	// Rounded, not truncated: a duration written as ttftMs(d) reads back
	// as d exactly, so export → import → export is stable.
	m.TTFT = time.Duration(math.Round(ttftMs * float64(time.Millisecond)))
	return m, err
}

func ttftMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// AddMessage appends m to its conversation (m.ConversationID) and
// returns it with its id, position and times: after m.ParentID when that
// is set, else after the last message of the branch shown. The new
// message, and the branch that leads to it, become the ones shown. It
// also marks the conversation as updated.
func (s *Store) AddMessage(ctx context.Context, m Message) (Message, error) {
	return s.add(ctx, m, false)
}

// AddVersion stores m as a new version of message of: with the same
// parent, shown from now on instead of it (of and what follows it stay,
// one switch away).
func (s *Store) AddVersion(ctx context.Context, of int64, m Message) (Message, error) {
	m.ParentID = of
	return s.add(ctx, m, true)
}

func (s *Store) add(ctx context.Context, m Message, sibling bool) (Message, error) {
	if !m.Role.valid() {
		return Message{}, fmt.Errorf("store: add message: %w: role %q", ErrInvalid, m.Role)
	}
	var id int64
	err := s.tx(ctx, fmt.Sprintf("add message to conversation %d", m.ConversationID), func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM conversations WHERE id = ?`, m.ConversationID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return ErrNotFound
		}
		all, err := loadAll(ctx, tx, m.ConversationID)
		if err != nil {
			return err
		}
		t, pos, stamp := now(), 1, int64(1)
		if len(all) > 0 {
			pos = all[len(all)-1].Position + 1
		}
		for _, x := range all {
			stamp = max(stamp, x.Selected+1)
		}
		byID := index(all)
		parent := m.ParentID
		switch {
		case sibling:
			of, ok := byID[m.ParentID]
			if !ok {
				return fmt.Errorf("%w: message %d is not in conversation %d", ErrNotFound, m.ParentID, m.ConversationID)
			}
			parent = of.ParentID
		case parent != 0:
			if _, ok := byID[parent]; !ok {
				return fmt.Errorf("%w: message %d is not in conversation %d", ErrNotFound, parent, m.ConversationID)
			}
		default:
			if path := activePath(all); len(path) > 0 {
				parent = path[len(path)-1].ID
			}
		}
		m.ParentID = parent
		if id, err = insertMessage(ctx, tx, m, m.ConversationID, pos, t, t, stamp); err != nil {
			return err
		}
		if err := choose(ctx, tx, byID, parent, stamp); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE conversations SET updated = ? WHERE id = ?`, t, m.ConversationID)
		return err
	})
	if err != nil {
		return Message{}, err
	}
	// With its place among its versions, so that a new version shows its
	// switcher from the start.
	vs, err := s.Versions(ctx, id)
	if err != nil {
		return Message{}, err
	}
	for _, v := range vs {
		if v.ID == id {
			return v, nil
		}
	}
	return Message{}, fmt.Errorf("store: add message: message %d: %w", id, ErrNotFound)
}

// insertMessage adds m to conversation conv at position pos with the
// given times and selection stamp, after m.ParentID (0: at the start),
// for AddMessage and Import; m's id, conversation and position are
// ignored.
func insertMessage(ctx context.Context, x execer, m Message, conv int64, pos int, created, updated, selected int64) (int64, error) {
	var parent any
	if m.ParentID != 0 {
		parent = m.ParentID
	}
	return insert(ctx, x,
		`INSERT INTO messages (conversation_id, position, role, content, created, updated, model, quant, sampler,
			prompt_tokens, gen_tokens, ttft_ms, prompt_tps, gen_tps, finish_reason, prompt_reused, parent_id, selected,
			reasoning, reasoning_tokens, reasoning_ms)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		conv, pos, m.Role, m.Content, created, updated, m.Model, m.Quant, m.Sampler,
		m.PromptTokens, m.GenTokens, ttftMs(m.TTFT), m.PromptTPS, m.GenTPS, m.FinishReason, m.PromptReused, parent, selected,
		m.Reasoning, m.ReasoningTokens, ttftMs(m.ReasoningTime))
}

// AppendAssistant starts a streamed answer: an assistant message at the
// end of the conversation with the given metadata (model, quant, sampler;
// content usually empty) and no finish reason. Grow it with UpdateMessage
// and close it with FinishMessage.
func (s *Store) AppendAssistant(ctx context.Context, conv int64, meta Message) (Message, error) {
	meta.ConversationID = conv
	meta.Role = RoleAssistant
	meta.FinishReason = ""
	return s.AddMessage(ctx, meta)
}

// UpdateMessage replaces a message's content: the streaming path calls it
// with the answer so far, and editing a message uses it too. Each call is
// one durable commit.
func (s *Store) UpdateMessage(ctx context.Context, id int64, content string) error {
	return s.exec1(ctx, fmt.Sprintf("update message %d", id),
		`UPDATE messages SET content = ?, updated = ? WHERE id = ?`, content, now(), id)
}

// UpdateAnswer replaces a streaming answer's content and reasoning so
// far, in one durable commit.
func (s *Store) UpdateAnswer(ctx context.Context, id int64, content, reasoning string) error {
	return s.exec1(ctx, fmt.Sprintf("update answer %d", id),
		`UPDATE messages SET content = ?, reasoning = ?, updated = ? WHERE id = ?`, content, reasoning, now(), id)
}

// FinishMessage writes a finished answer: content, reasoning, model, quant, sampler,
// token counts (prompt reuse included), timings and finish reason of m (looked up by m.ID), and
// marks the conversation as updated.
func (s *Store) FinishMessage(ctx context.Context, m Message) error {
	return s.tx(ctx, fmt.Sprintf("finish message %d", m.ID), func(tx *sql.Tx) error {
		t := now()
		n, err := execCount(ctx, tx,
			`UPDATE messages SET content = ?, updated = ?, model = ?, quant = ?, sampler = ?,
				prompt_tokens = ?, gen_tokens = ?, ttft_ms = ?, prompt_tps = ?, gen_tps = ?, finish_reason = ?,
				prompt_reused = ?, reasoning = ?, reasoning_tokens = ?, reasoning_ms = ?
			 WHERE id = ?`,
			m.Content, t, m.Model, m.Quant, m.Sampler, m.PromptTokens, m.GenTokens, ttftMs(m.TTFT),
			m.PromptTPS, m.GenTPS, m.FinishReason, m.PromptReused, m.Reasoning, m.ReasoningTokens, ttftMs(m.ReasoningTime), m.ID)
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrNotFound
		}
		_, err = tx.ExecContext(ctx,
			`UPDATE conversations SET updated = ? WHERE id = (SELECT conversation_id FROM messages WHERE id = ?)`, t, m.ID)
		return err
	})
}

// Message returns one message.
func (s *Store) Message(ctx context.Context, id int64) (Message, error) {
	return queryOne(ctx, s, fmt.Sprintf("message %d", id), scanMessage,
		`SELECT `+msgColumns+` FROM messages WHERE id = ?`, id)
}

// Messages returns the branch of a conversation that is shown, in order:
// at each fork the version chosen last (see versions.go).
func (s *Store) Messages(ctx context.Context, conv int64) ([]Message, error) {
	all, err := loadAll(ctx, s.db, conv)
	if err != nil {
		return nil, fmt.Errorf("store: messages of conversation %d: %w", conv, err)
	}
	return activePath(all), nil
}

// AllMessages returns every message of a conversation, every version of
// every branch, in the order they were written, with Version and Versions
// set.
func (s *Store) AllMessages(ctx context.Context, conv int64) ([]Message, error) {
	all, err := loadAll(ctx, s.db, conv)
	if err != nil {
		return nil, fmt.Errorf("store: messages of conversation %d: %w", conv, err)
	}
	return all, nil
}

// DeleteMessage deletes one message. What followed it follows its parent
// instead, so deleting a notice, or one message of a chain, leaves the
// rest of the conversation as it was. Later messages keep their
// positions; the order is what matters, not that positions are
// contiguous.
func (s *Store) DeleteMessage(ctx context.Context, id int64) error {
	return s.tx(ctx, fmt.Sprintf("delete message %d", id), func(tx *sql.Tx) error {
		var parent sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT parent_id FROM messages WHERE id = ?`, id).Scan(&parent)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET parent_id = ? WHERE parent_id = ?`, parent, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM messages WHERE id = ?`, id)
		return err
	})
}
