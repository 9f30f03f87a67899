package chat

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// questionText is a question's text: a selectable, word-wrapped
// widget.Label, shown and selected exactly as one, that wraps its text
// once per SetText instead of twice.
//
// Why: Label.SetText refreshes its RichText (which wraps the text) and
// then its renderer, whose Refresh refreshes the same RichText again
// with nothing changed. Scrolling a 2,000-message chat hands question
// widgets from message to message (shells.go), so every step sets texts
// anew, and that second wrap was about a third of the scroll's 2.6 GB of
// allocations (Fyne measures every candidate line with a new text
// shaper; issue 25, docs/performance.md).
//
// How: the label's renderer is wrapped. Its Refresh refreshes only the
// selection (the highlight, which must follow the new text), unless the
// theme changed since the last one: then it runs the label's own
// Refresh, which also gives the selection the new theme.
type questionText struct {
	widget.Label
}

func newQuestionText(text string) *questionText {
	q := &questionText{}
	q.Text = text
	q.Wrapping = fyne.TextWrapWord
	q.Selectable = true
	q.ExtendBaseWidget(q)
	return q
}

// CreateRenderer wraps the label's renderer (see the type).
func (q *questionText) CreateRenderer() fyne.WidgetRenderer {
	inner := q.Label.CreateRenderer()
	return &questionRenderer{WidgetRenderer: inner, q: q, look: q.look()}
}

// themeLook is what of the theme the label's renderer passes on to its
// selection: a change means its full Refresh must run. (fyne.Theme
// values cannot be compared: a theme may be an uncomparable struct.)
type themeLook struct {
	variant   fyne.ThemeVariant
	selection any
	textSize  float32
}

func (q *questionText) look() themeLook {
	th := q.Theme()
	v := fyne.CurrentApp().Settings().ThemeVariant()
	return themeLook{variant: v, selection: th.Color(theme.ColorNameSelection, v), textSize: th.Size(theme.SizeNameText)}
}

type questionRenderer struct {
	fyne.WidgetRenderer
	q    *questionText
	look themeLook
}

// Refresh runs after Label.Refresh has wrapped the text: it skips the
// label renderer's second wrap (see the type).
func (r *questionRenderer) Refresh() {
	if look := r.q.look(); look != r.look {
		r.look = look
		r.WidgetRenderer.Refresh()
		return
	}
	// The label's objects, when selectable: its selection, then its
	// text (label.go's labelRenderer.Objects).
	if objs := r.WidgetRenderer.Objects(); len(objs) == 2 {
		objs[0].Refresh()
	}
}
