package session

import (
	"context"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/store"
)

// MessagePage returns a page of a conversation's branch shown (see
// store.PageQuery), as Messages would give those messages: an answer that
// is streaming has the text generated so far, and the answer a
// regeneration replaces is left out, with what follows it.
func (m *Manager) MessagePage(conv int64, q store.PageQuery) (store.MessagePage, error) {
	m.liveMu.Lock()
	snap := make(map[int64]string, len(m.live))
	for id, la := range m.live {
		if la.conv == conv {
			snap[id] = string(la.text)
		}
	}
	cut := m.cuts[conv]
	m.liveMu.Unlock()
	page, err := m.st.MessagePage(context.Background(), conv, q)
	if err != nil {
		return page, err
	}
	if cut != nil && cut.ctx.Err() == nil {
		found := false
		for i := range page.Messages {
			if page.Messages[i].ID == cut.parent {
				page.Total -= len(page.Messages) - (i + 1)
				page.Messages = page.Messages[:i+1]
				found = true
				break
			}
		}
		if !found {
			// The answer regenerated is not on this page: whether the
			// page comes after it needs the whole branch (rare: only
			// while an earlier answer is regenerated).
			all, err := m.Messages(conv)
			if err != nil {
				return store.MessagePage{}, err
			}
			return pageOf(all, q), nil
		}
	}
	for i := range page.Messages {
		if t, ok := snap[page.Messages[i].ID]; ok && len(t) > len(page.Messages[i].Content) {
			page.Messages[i].Content = t
		}
	}
	return page, nil
}

// pageOf picks the page q asks for out of a whole branch, as the store
// does.
func pageOf(all []api.Message, q store.PageQuery) store.MessagePage {
	limit := q.Limit
	if limit <= 0 {
		limit = store.DefaultPage
	}
	index := func(id int64) int {
		for i, m := range all {
			if m.ID == id {
				return i
			}
		}
		return -1
	}
	end := len(all)
	start := max(end-limit, 0)
	switch {
	case q.Before != 0:
		end = max(index(q.Before), 0)
		start = max(end-limit, 0)
	case q.From != 0:
		if i := index(q.From); i >= 0 {
			start = min(i, start)
		}
	}
	return store.MessagePage{Messages: all[start:end], Before: start, Total: len(all)}
}
