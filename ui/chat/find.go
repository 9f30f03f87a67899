package chat

import (
	"strings"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/store"
	"github.com/churon/churon/ui/markdown"
)

// found is a search hit to show once its conversation's messages are.
type found struct {
	conv, msg int64
	terms     []string
	// switched: the hit was not in the branch shown and its own branch
	// was asked for; it is not asked twice.
	switched bool
}

// Find makes the next showing of conv scroll to message msg with the
// terms of query marked in it (a search result was opened). A message in
// another version than the one shown brings that version up first.
func (c *View) Find(conv, msg int64, query string) {
	c.find = &found{conv: conv, msg: msg, terms: store.SplitQuery(query)}
}

// Highlighted is the message a search opened, the text marked in it and
// where the message starts in the scrolled column (0, nil, 0: none), as
// the window's tests read it.
func (c *View) Highlighted() (msg int64, marked []string, top float32) {
	for _, v := range c.views {
		if v.marked != nil && v.built() {
			return v.msg.ID, v.marked, v.obj.Position().Y
		}
	}
	return 0, nil, 0
}

// reveal scrolls to the message Find asked for and marks it, and reports
// whether it did (else the chat shows its end as usual).
func (c *View) reveal() bool {
	f := c.find
	if f == nil || f.conv != c.conv {
		return false
	}
	v := c.byID[f.msg]
	if v == nil {
		if !f.switched {
			// In another version: show the branch through it; the
			// MessagesChanged that follows shows the chat again.
			f.switched = true
			w, conv, msg := c.w, f.conv, f.msg
			w.Commands.Run(func() error { return w.Session.SwitchVersion(conv, msg, 0) }, w.ShowError)
		} else {
			c.find = nil
		}
		return false
	}
	c.find = nil
	v.mark(f.terms)
	for i, x := range c.views {
		if x == v {
			c.sync(anchor{i: i, d: theme.Padding() * 4})
		}
	}
	return true
}

// mark puts a highlight behind the message and shows the terms in its
// text in bold, in the primary colour (once it is built, if it is not).
func (v *messageView) mark(terms []string) {
	v.terms = terms
	v.marked = []string{}
	if v.built() {
		v.applyMark()
	}
}

// applyMark marks the terms in the message's widgets.
func (v *messageView) applyMark() {
	terms := v.terms
	v.marked = []string{}
	v.changed()
	bg := markdown.NewRect(theme.ColorNameSelection, "", theme.InputRadiusSize())
	v.obj = container.NewStack(bg, v.obj)
	v.refreshThinking() // the reasoning's marks, and the row's count of them
	if v.body == nil || len(terms) == 0 {
		return
	}
	if v.text != nil {
		// A label cannot mark part of its text: the same text as rich
		// text, selectable no more until the chat is shown again.
		rt := widget.NewRichText(&widget.TextSegment{Text: v.msg.Content, Style: widget.RichTextStyleParagraph})
		rt.Wrapping = fyne.TextWrapWord
		v.marked = markRich(rt, terms)
		v.body.Objects = []fyne.CanvasObject{rt}
		v.body.Refresh()
		return
	}
	if v.md != nil {
		for _, b := range v.md.Blocks() {
			walkRich(b, func(rt *widget.RichText) { v.marked = append(v.marked, markRich(rt, terms)...) })
		}
	}
}

// walkRich calls f on every rich text inside o (code blocks, which are
// widgets of their own, are left as they are).
func walkRich(o fyne.CanvasObject, f func(*widget.RichText)) {
	switch x := o.(type) {
	case *widget.RichText:
		f(x)
	case *fyne.Container:
		for _, c := range x.Objects {
			walkRich(c, f)
		}
	}
}

// markRich splits rt's text segments around the terms (matched case-
// insensitively, as the search does) and styles the matches; it returns
// the texts marked.
func markRich(rt *widget.RichText, terms []string) []string {
	var marked []string
	var segs []widget.RichTextSegment
	changed := false
	for _, s := range rt.Segments {
		ts, ok := s.(*widget.TextSegment)
		if !ok {
			segs = append(segs, s)
			continue
		}
		parts := splitMatches(ts.Text, terms)
		if len(parts) == 1 && !parts[0].match {
			segs = append(segs, s)
			continue
		}
		changed = true
		for i, p := range parts {
			st := ts.Style
			if i < len(parts)-1 {
				st.Inline = true // one paragraph still: only its last piece ends it
			}
			if p.match {
				st.ColorName, st.TextStyle.Bold = theme.ColorNamePrimary, true
				marked = append(marked, p.text)
			}
			segs = append(segs, &widget.TextSegment{Text: p.text, Style: st})
		}
	}
	if changed {
		rt.Segments = segs
		rt.Refresh()
	}
	return marked
}

type piece struct {
	text  string
	match bool
}

// splitMatches cuts s into the pieces that match a term and those between.
func splitMatches(s string, terms []string) []piece {
	rs := []rune(s)
	lower := make([]rune, len(rs))
	for i, r := range rs {
		lower[i] = unicode.ToLower(r)
	}
	var out []piece
	start := 0
	for i := 0; i < len(rs); {
		n := 0
		for _, t := range terms {
			tr := []rune(strings.ToLower(t))
			if len(tr) > n && i+len(tr) <= len(rs) && string(lower[i:i+len(tr)]) == string(tr) {
				n = len(tr)
			}
		}
		if n == 0 {
			i++
			continue
		}
		if start < i {
			out = append(out, piece{text: string(rs[start:i])})
		}
		out = append(out, piece{text: string(rs[i : i+n]), match: true})
		i += n
		start = i
	}
	if start < len(rs) || len(out) == 0 {
		out = append(out, piece{text: string(rs[start:])})
	}
	return out
}
