package chat

import (
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/ui/core"
)

// pageSize is how many messages are read at a time: the last of a chat
// when it opens, then older ones as the person scrolls up to them.
// Several screenfuls, so that a wheel never waits for the disk.
const pageSize = 100

// olderBefore is how close (in messages) the part in sight may come to
// the first message read before the ones before it are asked for.
const olderBefore = 20

// setOlder remembers what comes before a page just shown.
func (c *View) setOlder(p store.MessagePage) {
	c.older = p.Before
	c.first = 0
	if len(p.Messages) > 0 {
		c.first = p.Messages[0].ID
	}
}

// maybeOlder reads the page before the messages read when the part in
// sight (from message i on) comes near their start. They are put above
// with the view kept where it is (sync's anchor), so nothing moves.
func (c *View) maybeOlder(i int) {
	if c.older == 0 || c.olderAsked || c.loading || c.first == 0 || i > olderBefore {
		return
	}
	c.olderAsked = true
	gen, conv, first, sess := c.gen, c.conv, c.first, c.w.Session
	core.Then(c.w.Reads, func() (store.MessagePage, error) {
		return sess.MessagePage(conv, store.PageQuery{Before: first, Limit: pageSize})
	}, func(p store.MessagePage, err error) {
		if gen != c.gen || c.first != first {
			return // another conversation, or this one shown again
		}
		c.olderAsked = false
		if err != nil {
			// The branch changed meanwhile (a version was chosen): the
			// chat is shown again, from its new branch.
			c.older = 0
			c.w.ShowError(err)
			return
		}
		a := c.here()
		var views []*messageView
		for _, m := range p.Messages {
			if m.Role == "system" {
				continue
			}
			v := newMessageView(c, m)
			c.byID[m.ID] = v
			views = append(views, v)
		}
		c.views = append(views, c.views...)
		c.setOlder(p)
		if !a.end {
			a.i += len(views)
		}
		c.sync(a)
		c.refreshActions()
	})
}
