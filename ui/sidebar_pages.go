package ui

import "github.com/churon/churon/app/api/session"

// The sidebar's rows come a page at a time from the session (the store's
// pages.go), so that the window's cost follows what is on the screen and
// not the size of the library.
const (
	pageSize     = 100 // rows a reading brings
	pagePrefetch = 30  // a row this near the end of what was read asks for more
	screenRows   = 40  // a short page is followed by another until this many
)

// sidePage is a page of rows and where the next one starts: one of the
// cursors, that of the conversation list or that of a search; both nil
// when there is no next page.
type sidePage struct {
	rows   []sideRow
	list   *session.ListCursor
	search *session.SearchCursor
}

// more is where the page after p starts, nil when p was the last.
func (p sidePage) more() *sidePage {
	if p.list == nil && p.search == nil {
		return nil
	}
	return &sidePage{list: p.list, search: p.search}
}

// readPage reads up to n rows from where from says (nil: the top): the
// conversations, pinned first then the most recent, or with a query
// those whose title or messages match it, one row each with the newest
// matching snippet. It reads the database.
func readPage(sess session.Service, q string, from *sidePage, n int) (sidePage, error) {
	var out sidePage
	if q == "" {
		var after *session.ListCursor
		if from != nil {
			after = from.list
		}
		p, err := sess.ConversationPage(after, n)
		if err != nil {
			return out, err
		}
		out.rows = make([]sideRow, 0, len(p.Conversations))
		for _, c := range p.Conversations {
			out.rows = append(out.rows, sideRow{conv: c})
		}
		out.list = p.Next
		return out, nil
	}
	var after *session.SearchCursor
	if from != nil {
		after = from.search
	}
	p, err := sess.SearchConversations(q, after, n)
	if err != nil {
		return out, err
	}
	out.rows = make([]sideRow, 0, len(p.Hits))
	for _, h := range p.Hits {
		out.rows = append(out.rows, sideRow{conv: h.Conversation, snippet: h.Snippet, msg: h.MessageID})
	}
	out.search = p.Next
	return out, nil
}
