package session

import "github.com/churon/churon/app/store"

// The library a page at a time (app/store's pages.go): lists that cost
// what they show, however many chats there are.
type (
	ListCursor       = store.ListCursor
	ConversationPage = store.ConversationPage
	SearchCursor     = store.SearchCursor
	SearchPage       = store.SearchPage
	ConversationHit  = store.ConversationHit
)

// Pages reads the conversation list and search results a page at a time.
type Pages interface {
	// ConversationPage lists up to limit conversations after the cursor
	// (nil: from the top), pinned first, then the most recently updated.
	ConversationPage(after *ListCursor, limit int) (ConversationPage, error)
	// SearchConversations finds the conversations whose title or messages
	// match query, each once (see store.SearchConversations), a page at
	// a time from the cursor (nil: the start).
	SearchConversations(query string, after *SearchCursor, limit int) (SearchPage, error)
}
