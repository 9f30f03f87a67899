package session

import (
	"context"

	"github.com/churon/churon/app/store"
)

// ConversationPage lists a page of conversations, pinned first, then the
// most recently updated, after the cursor (nil: from the top).
func (m *Manager) ConversationPage(after *store.ListCursor, limit int) (store.ConversationPage, error) {
	return m.st.ConversationPage(context.Background(), after, limit)
}

// SearchConversations finds a page of the conversations whose title or
// messages match query, from the cursor (nil: the start).
func (m *Manager) SearchConversations(query string, after *store.SearchCursor, limit int) (store.SearchPage, error) {
	return m.st.SearchConversations(context.Background(), query, after, limit)
}
