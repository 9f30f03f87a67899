package ui

import (
	"strings"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// rowTitle is a sidebar row's title: one line, cut with an ellipsis where
// it does not fit. It is one canvas.Text, not a Label: a Label is a
// RichText, which shapes its whole text again (with a new shaper, its
// fonts' tables set up afresh) at every layout to find where to cut it —
// four times a row before the first frame — while rowTitle cuts it when
// its width changes, in a few measures that Fyne keeps (cutTitle), the
// last of them the text it then draws (issue 25: the first frame of a
// full library).
type rowTitle struct {
	widget.BaseWidget
	full   string
	text   *canvas.Text
	cutFor float32 // the width text was cut for; -1: not cut yet
}

func newRowTitle() *rowTitle {
	t := &rowTitle{text: canvas.NewText("", nil), cutFor: -1}
	t.ExtendBaseWidget(t)
	return t
}

// SetText shows s, cut to the width the title has.
func (t *rowTitle) SetText(s string) {
	if s == t.full {
		return
	}
	t.full, t.cutFor = s, -1
	if w := t.Size().Width; w > 0 {
		t.fit(w)
	}
	canvas.Refresh(t.text)
}

// Text is the whole title, as a Label's Text is (the shown one may be cut).
func (t *rowTitle) Text() string { return t.full }

// fit cuts the text for a title width w, when it was cut for another.
func (t *rowTitle) fit(w float32) {
	if w == t.cutFor {
		return
	}
	t.cutFor = w
	th := t.Theme()
	avail := w - 2*th.Size(theme.SizeNameInnerPadding)
	size := th.Size(theme.SizeNameText)
	t.text.TextSize = size
	t.text.Text = cutTitle(t.full, avail, func(s string) float32 { return fyne.MeasureText(s, size, fyne.TextStyle{}).Width })
}

func (t *rowTitle) CreateRenderer() fyne.WidgetRenderer {
	r := &rowTitleRenderer{t: t}
	r.applyTheme()
	return r
}

type rowTitleRenderer struct{ t *rowTitle }

func (r *rowTitleRenderer) Layout(size fyne.Size) {
	t := r.t
	t.fit(size.Width)
	pad := t.Theme().Size(theme.SizeNameInnerPadding)
	h := t.text.MinSize().Height
	t.text.Move(fyne.NewPos(pad, (size.Height-h)/2))
	t.text.Resize(fyne.NewSize(max(size.Width-2*pad, 0), h))
}

// MinSize is a Label's with truncation: its padding and a line's height,
// and no width of its own (it is cut to what it gets).
func (r *rowTitleRenderer) MinSize() fyne.Size {
	th := r.t.Theme()
	pad := th.Size(theme.SizeNameInnerPadding)
	line := fyne.MeasureText("M", th.Size(theme.SizeNameText), fyne.TextStyle{}).Height
	return fyne.NewSize(2*pad, line+2*pad)
}

func (r *rowTitleRenderer) Refresh() {
	r.applyTheme()
	r.Layout(r.t.Size())
	canvas.Refresh(r.t.text)
}

// applyTheme takes the theme's text colour, and has the text cut again
// when the theme's text size is another.
func (r *rowTitleRenderer) applyTheme() {
	t := r.t
	th := t.Theme()
	t.text.Color = th.Color(theme.ColorNameForeground, fyne.CurrentApp().Settings().ThemeVariant())
	if th.Size(theme.SizeNameText) != t.text.TextSize {
		t.cutFor = -1
	}
}

func (r *rowTitleRenderer) Objects() []fyne.CanvasObject { return []fyne.CanvasObject{r.t.text} }

func (r *rowTitleRenderer) Destroy() {}

// ellipsis ends a title that was cut.
const ellipsis = "…"

// cutTitle is s as it fits in width avail, measure telling how wide a
// text is drawn: whole, or its longest beginning that fits with an
// ellipsis after it (the spaces before the ellipsis dropped, a combining
// mark kept with its letter). Where to cut is first guessed from the
// whole text's width, shared among its runes (a wide one, as Hangul or
// Han, counting two), then measured, and moved a rune at a time until it
// is the longest that fits: a few measures, each shaping the text once.
func cutTitle(s string, avail float32, measure func(string) float32) string {
	whole := measure(s)
	if s == "" || whole <= avail {
		return s
	}
	runes := []rune(s)
	weights := 0
	for _, r := range runes {
		weights += runeWeight(r)
	}
	unit := whole / float32(weights)
	room := avail - measure(ellipsis)
	n, used := 0, float32(0)
	for n < len(runes) && used+unit*float32(runeWeight(runes[n])) <= room {
		used += unit * float32(runeWeight(runes[n]))
		n++
	}
	// head is s cut after n runes, or "" where the cut would part a mark
	// from its letter.
	head := func(n int) string {
		if n < len(runes) && unicode.Is(unicode.Mn, runes[n]) {
			return ""
		}
		return strings.TrimRightFunc(string(runes[:n]), unicode.IsSpace)
	}
	fitting := map[string]bool{} // by head: the spaces dropped make the same head of several n
	fits := func(n int) bool {
		h := head(n)
		if h == "" {
			return false
		}
		f, ok := fitting[h]
		if !ok {
			f = measure(h+ellipsis) <= avail
			fitting[h] = f
		}
		return f
	}
	for n > 0 && !fits(n) {
		n--
	}
	for n+1 < len(runes) && fits(n+1) {
		n++
	}
	if n == 0 {
		return ellipsis
	}
	return head(n) + ellipsis
}

// runeWeight is how many narrow runes' room r takes, about: none for a
// combining mark, two for a wide rune (East Asian scripts), one for others.
func runeWeight(r rune) int {
	switch {
	case unicode.Is(unicode.Mn, r):
		return 0
	case unicode.In(r, unicode.Hangul, unicode.Han, unicode.Hiragana, unicode.Katakana) ||
		r >= 0xff01 && r <= 0xff60: // fullwidth forms
		return 2
	}
	return 1
}
