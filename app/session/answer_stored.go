package session

import (
	"context"
	"fmt"
	"slices"
	"strings"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/store"
)

// API requests that a conversation stores: one naming it, or any with
// the person's switch on (Request.Store).

// requestSettings are a conversation's settings for an answer an API
// request asks for in it: the conversation's system prompt, context,
// overflow policy and thinking switch, the request's sampling.
func requestSettings(conv, req api.Settings) api.Settings {
	set := req
	set.SystemPrompt, set.Context, set.Overflow, set.ThinkingOff = conv.SystemPrompt, conv.Context, conv.Overflow, conv.ThinkingOff
	return set
}

// askInConversation stores a request's turn in conv and queues its
// answer there, as Send does. It runs on the scheduling goroutine.
func (m *Manager) askInConversation(conv int64, req api.Request) (*job, error) {
	var turn []api.RequestMessage
	for _, msg := range req.Messages {
		if msg.Role != "system" { // the conversation has its own system prompt
			turn = append(turn, msg)
		}
	}
	if len(turn) == 0 || strings.TrimSpace(turn[len(turn)-1].Content) == "" {
		return nil, api.ErrEmptyMessage
	}
	set, err := m.ready(conv, turn[len(turn)-1].Content)
	if err != nil {
		return nil, err
	}
	if err := m.addTurn(conv, turn); err != nil {
		return nil, err
	}
	return m.enqueue(conv, requestSettings(set, req.Settings), req.Source), nil
}

// addTurn stores messages at the end of conv's branch.
func (m *Manager) addTurn(conv int64, turn []api.RequestMessage) error {
	ctx := context.Background()
	for _, msg := range turn {
		stored, err := m.st.AddMessage(ctx, store.Message{ConversationID: conv, Role: store.Role(msg.Role), Content: msg.Content})
		if err != nil {
			return fmt.Errorf("session: store the request: %w", err)
		}
		m.emit(api.MessageAdded{Message: stored})
	}
	if c, err := m.st.Conversation(ctx, conv); err == nil && c.Title == "" {
		for _, msg := range turn {
			if msg.Role == "user" {
				if err := m.st.RenameConversation(ctx, conv, titleFrom(msg.Content)); err == nil {
					m.emit(api.ConversationChanged{Conv: conv})
				}
				break
			}
		}
	}
	return nil
}

// settingAPIConversations lists the conversations stored API requests
// made, newest first (decimal ids, comma-separated), so that a request
// that extends one continues it after a restart too.
const settingAPIConversations = "session.api_conversations"

// apiConversationsKept bounds that list: the conversations a request is
// compared with.
const apiConversationsKept = 32

// askStored stores a request (the person's switch is on) and queues its
// answer: in the conversation of an earlier request it extends — the
// same system prompt, that conversation's messages as its first — else
// in a new one. It runs on the scheduling goroutine.
func (m *Manager) askStored(req api.Request) (*job, error) {
	var system []string
	var rest []api.RequestMessage
	for _, msg := range req.Messages {
		if msg.Role == "system" {
			system = append(system, msg.Content)
		} else {
			rest = append(rest, msg)
		}
	}
	if len(rest) == 0 {
		return nil, fmt.Errorf("%w: no user message", api.ErrBadRequest)
	}
	sys := strings.Join(system, "\n\n")
	ctx := context.Background()
	ids := m.apiConversations()
	for _, id := range ids {
		c, err := m.st.Conversation(ctx, id)
		if err != nil || c.Deleted() || c.SystemPrompt != sys {
			continue
		}
		if m.answering(id) {
			continue
		}
		hist, err := m.st.Messages(ctx, id)
		if err != nil {
			continue
		}
		n := 0
		for _, h := range hist {
			if h.Role == store.RoleNotice {
				continue
			}
			if n >= len(rest) || string(h.Role) != rest[n].Role || h.Content != rest[n].Content {
				n = -1
				break
			}
			n++
		}
		if n <= 0 || n >= len(rest) {
			continue
		}
		j, err := m.askInConversation(id, api.Request{Messages: rest[n:], Settings: req.Settings, Source: req.Source})
		if err != nil {
			return nil, err
		}
		m.rememberAPIConversation(id)
		return j, nil
	}
	set := m.defaults
	set.SystemPrompt = sys
	c, err := m.newConversation("", set)
	if err != nil {
		return nil, err
	}
	m.rememberAPIConversation(c.ID)
	if err := m.addTurn(c.ID, rest); err != nil {
		return nil, err
	}
	j := m.enqueue(c.ID, requestSettings(set, req.Settings), req.Source)
	return j, nil
}

func (m *Manager) apiConversations() []int64 {
	v, _ := m.Setting(settingAPIConversations)
	var ids []int64
	for _, f := range strings.Split(v, ",") {
		var id int64
		if _, err := fmt.Sscan(strings.TrimSpace(f), &id); err == nil && id > 0 {
			ids = append(ids, id)
		}
	}
	return ids
}

func (m *Manager) rememberAPIConversation(id int64) {
	ids := append([]int64{id}, slices.DeleteFunc(m.apiConversations(), func(x int64) bool { return x == id })...)
	ids = ids[:min(len(ids), apiConversationsKept)]
	parts := make([]string, len(ids))
	for i, x := range ids {
		parts[i] = fmt.Sprint(x)
	}
	_ = m.SetSetting(settingAPIConversations, strings.Join(parts, ","))
}
