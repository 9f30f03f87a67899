package session

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/store"
)

// NewConversation creates an empty conversation with the default
// settings. An empty title is replaced by the start of the first message.
func (m *Manager) NewConversation(title string) (api.Conversation, error) {
	var c api.Conversation
	err := m.call(func() error {
		if m.s.closing {
			return api.ErrClosed
		}
		var err error
		c, err = m.newConversation(title, m.defaults)
		return err
	})
	return c, err
}

// newConversation stores a conversation with the given settings and says
// so. It runs on the scheduling goroutine.
func (m *Manager) newConversation(title string, set api.Settings) (api.Conversation, error) {
	c, err := m.st.CreateConversation(context.Background(), store.Conversation{
		Title: title, SystemPrompt: set.SystemPrompt, Sampler: encodeSettings(set),
	})
	if err != nil {
		return c, fmt.Errorf("session: new conversation: %w", err)
	}
	m.emit(api.ConversationChanged{Conv: c.ID})
	return c, nil
}

// Send stores the person's message and queues an answer. It returns the
// stored message; the answer arrives as MessageAdded, Token…, Stats and
// Done events. It fails with ErrBusy while the conversation generates and
// ErrNoModel when no model is loaded or loading.
func (m *Manager) Send(conv int64, text string) (api.Message, error) {
	var msg api.Message
	err := m.call(func() error {
		set, err := m.ready(conv, text)
		if err != nil {
			return err
		}
		ctx := context.Background()
		msg, err = m.st.AddMessage(ctx, store.Message{ConversationID: conv, Role: store.RoleUser, Content: text})
		if err != nil {
			return fmt.Errorf("session: send: %w", err)
		}
		m.emit(api.MessageAdded{Message: msg})
		if c, err := m.st.Conversation(ctx, conv); err == nil && c.Title == "" {
			if err := m.st.RenameConversation(ctx, conv, titleFrom(text)); err == nil {
				m.emit(api.ConversationChanged{Conv: conv})
			}
		}
		m.enqueue(conv, set, SourceWindow)
		return nil
	})
	return msg, err
}

// Regenerate answers again: msg is an answer (a new version of it is
// written) or a person's message (a new version of what follows it). The
// earlier answer stays, with what followed it, one version away.
// Notices are never what is answered: an answer after a notice is
// answered from the question before the notice.
func (m *Manager) Regenerate(conv, msg int64) error {
	return m.call(func() error {
		set, err := m.ready(conv)
		if err != nil {
			return err
		}
		ctx := context.Background()
		target, err := m.message(conv, msg)
		if err != nil {
			return err
		}
		parent := target.ParentID
		if target.Role == store.RoleUser {
			parent = target.ID
		}
		all, err := m.st.AllMessages(ctx, conv)
		if err != nil {
			return fmt.Errorf("session: regenerate: %w", err)
		}
		if q := answered(all, parent); q == nil || q.Role != store.RoleUser {
			return api.ErrNoPrompt
		}
		if err := m.st.SelectMessage(ctx, parent); err != nil {
			return fmt.Errorf("session: regenerate: %w", err)
		}
		j := m.enqueue(conv, set, SourceWindow)
		j.parent = parent
		m.liveMu.Lock()
		m.cuts[conv] = j
		m.liveMu.Unlock()
		m.emit(api.MessagesChanged{Conv: conv})
		return nil
	})
}

// answered is the message an answer after id answers: id itself, or the
// first message before it that is not a notice (nil: none).
func answered(all []api.Message, id int64) *api.Message {
	by := make(map[int64]*api.Message, len(all))
	for i := range all {
		by[all[i].ID] = &all[i]
	}
	for hops := 0; hops <= len(all); hops++ {
		m := by[id]
		if m == nil || m.Role != store.RoleNotice {
			return m
		}
		id = m.ParentID
	}
	return nil
}

// Edit writes a new version of one of the person's messages and answers
// it. The earlier version stays, with what followed it.
func (m *Manager) Edit(conv, msg int64, text string) error {
	return m.call(func() error {
		set, err := m.ready(conv, text)
		if err != nil {
			return err
		}
		target, err := m.message(conv, msg)
		if err != nil {
			return err
		}
		if target.Role != store.RoleUser {
			return api.ErrNotUserMessage
		}
		ctx := context.Background()
		if _, err := m.st.AddVersion(ctx, msg, store.Message{ConversationID: conv, Role: store.RoleUser, Content: text}); err != nil {
			return fmt.Errorf("session: edit: %w", err)
		}
		m.emit(api.MessagesChanged{Conv: conv})
		m.enqueue(conv, set, SourceWindow)
		return nil
	})
}

// SwitchVersion shows version (1-based, oldest first) of message msg,
// with the branch that follows it as it was last shown; version 0 shows
// the branch through msg itself, wherever it is. The next answer
// follows that branch; the KV cache is reused only as far as its tokens
// match the branch's prompt.
func (m *Manager) SwitchVersion(conv, msg int64, version int) error {
	return m.call(func() error {
		if m.answering(conv) {
			return api.ErrBusy
		}
		if _, err := m.message(conv, msg); err != nil {
			return err
		}
		ctx := context.Background()
		vs, err := m.st.Versions(ctx, msg)
		if err != nil {
			return fmt.Errorf("session: switch version: %w", err)
		}
		pick := msg // version 0: msg's own branch (a search found it)
		if version != 0 {
			if version < 1 || version > len(vs) {
				return fmt.Errorf("session: switch version: %w: message %d has %d versions, not %d", store.ErrNotFound, msg, len(vs), version)
			}
			pick = vs[version-1].ID
		}
		if err := m.st.SelectMessage(ctx, pick); err != nil {
			return fmt.Errorf("session: switch version: %w", err)
		}
		m.emit(api.MessagesChanged{Conv: conv})
		return nil
	})
}

// DeleteMessage deletes one message; what followed it follows the message
// before it (so deleting a notice leaves the chat as it reads otherwise).
func (m *Manager) DeleteMessage(conv, msg int64) error {
	return m.call(func() error {
		if m.answering(conv) {
			return api.ErrBusy
		}
		if _, err := m.message(conv, msg); err != nil {
			return err
		}
		if err := m.st.DeleteMessage(context.Background(), msg); err != nil {
			return fmt.Errorf("session: %w", err)
		}
		m.emit(api.MessagesChanged{Conv: conv})
		return nil
	})
}

func (m *Manager) message(conv, id int64) (api.Message, error) {
	msg, err := m.st.Message(context.Background(), id)
	if err != nil {
		return msg, fmt.Errorf("session: %w", err)
	}
	if msg.ConversationID != conv {
		return msg, fmt.Errorf("%w: message %d is in conversation %d, not %d", api.ErrWrongConversation, id, msg.ConversationID, conv)
	}
	return msg, nil
}

// Delete stops the conversation's answer and moves the conversation to the
// trash; Undo brings it back.
func (m *Manager) Delete(conv int64) error {
	return m.call(func() error {
		if err := m.st.DeleteConversation(context.Background(), conv); err != nil {
			return fmt.Errorf("session: %w", err)
		}
		m.stop(conv)
		cs := m.conv(conv)
		cs.deleted = true
		if cs.saving {
			cs.drop = true
		} else if cs.seq != nil {
			cs.seq.Close()
			cs.seq = nil
		}
		m.emit(api.ConversationChanged{Conv: conv, Deleted: true})
		return nil
	})
}

// Undo restores a deleted conversation.
func (m *Manager) Undo(conv int64) error {
	return m.changeConv(conv, func(ctx context.Context) error {
		if err := m.st.RestoreConversation(ctx, conv); err != nil {
			return err
		}
		m.conv(conv).deleted = false
		return nil
	})
}

// Rename sets a conversation's title.
func (m *Manager) Rename(conv int64, title string) error {
	return m.changeConv(conv, func(ctx context.Context) error { return m.st.RenameConversation(ctx, conv, title) })
}

// SetPinned pins a conversation to the top of the list, or unpins it.
func (m *Manager) SetPinned(conv int64, pinned bool) error {
	return m.changeConv(conv, func(ctx context.Context) error { return m.st.SetPinned(ctx, conv, pinned) })
}

// changeConv runs change on the scheduling goroutine and, when it
// succeeds, says that the conversation changed.
func (m *Manager) changeConv(conv int64, change func(context.Context) error) error {
	return m.call(func() error {
		if err := change(context.Background()); err != nil {
			return fmt.Errorf("session: %w", err)
		}
		m.emit(api.ConversationChanged{Conv: conv})
		return nil
	})
}

// SetSettings stores a conversation's settings; they apply from its next
// answer.
func (m *Manager) SetSettings(conv int64, set api.Settings) error {
	if err := Validate(set); err != nil {
		return err
	}
	return m.call(func() error {
		ctx := context.Background()
		c, err := m.st.Conversation(ctx, conv)
		if err != nil {
			return fmt.Errorf("session: %w", err)
		}
		c.SystemPrompt, c.Sampler = set.SystemPrompt, encodeSettings(set)
		if err := m.st.UpdateConversation(ctx, c); err != nil {
			return fmt.Errorf("session: %w", err)
		}
		m.emit(api.ConversationChanged{Conv: conv})
		return nil
	})
}

// Settings returns a conversation's settings.
func (m *Manager) Settings(conv int64) (api.Settings, error) {
	c, err := m.st.Conversation(context.Background(), conv)
	if err != nil {
		return api.Settings{}, fmt.Errorf("session: %w", err)
	}
	return decodeSettings(c.SystemPrompt, c.Sampler, m.defaults)
}

// ListConversations lists conversations, pinned first, then the most
// recently active.
func (m *Manager) ListConversations() ([]api.Conversation, error) {
	return m.st.ListConversations(context.Background(), store.ListOptions{})
}

// Trash lists deleted conversations that have not been purged.
func (m *Manager) Trash() ([]api.Conversation, error) {
	return m.st.ListConversations(context.Background(), store.ListOptions{Deleted: true})
}

// Conversation returns one conversation.
func (m *Manager) Conversation(conv int64) (api.Conversation, error) {
	return m.st.Conversation(context.Background(), conv)
}

// Search finds messages containing every term of query (see
// store.Search).
func (m *Manager) Search(query string, limit int) ([]api.SearchHit, error) {
	return m.st.Search(context.Background(), query, limit)
}

// Messages returns a conversation's messages. An answer that is streaming
// has the text generated so far, which may be ahead of what is saved.
func (m *Manager) Messages(conv int64) ([]api.Message, error) {
	// Snapshot the live text before reading the store: whichever of the
	// two is longer is the newer (both are prefixes of the final answer).
	m.liveMu.Lock()
	snap := make(map[int64]string, len(m.live))
	snapReas := make(map[int64]string, len(m.live))
	for id, la := range m.live {
		if la.conv == conv {
			snap[id], snapReas[id] = string(la.text), string(la.reasoning)
		}
	}
	cut := m.cuts[conv]
	m.liveMu.Unlock()
	msgs, err := m.st.Messages(context.Background(), conv)
	if err != nil {
		return nil, err
	}
	if cut != nil && cut.ctx.Err() == nil {
		// A regenerated answer is on its way: the version it replaces is
		// not what the chat reads on with.
		for i := range msgs {
			if msgs[i].ID == cut.parent {
				msgs = msgs[:i+1]
				break
			}
		}
	}
	for i := range msgs {
		if t, ok := snap[msgs[i].ID]; ok && len(t) > len(msgs[i].Content) {
			msgs[i].Content = t
		}
		if r, ok := snapReas[msgs[i].ID]; ok && len(r) > len(msgs[i].Reasoning) {
			msgs[i].Reasoning = r
		}
	}
	return msgs, nil
}

// titleFrom makes a conversation title from its first message.
func titleFrom(text string) string {
	const max = 48
	line := strings.TrimSpace(text)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = strings.TrimSpace(line[:i])
	}
	line = strings.Join(strings.Fields(line), " ")
	if utf8.RuneCountInString(line) <= max {
		return line
	}
	r := []rune(line)
	return strings.TrimSpace(string(r[:max])) + "…"
}
