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
// four times a row before the first frame — while rowTitle measures each
// rune once for the whole list (runeWidths) and shapes a title once, when
// it is cut (issue 25: the first frame of a full library).
type rowTitle struct {
	widget.BaseWidget
	widths *runeWidths
	full   string
	text   *canvas.Text
	cutFor float32 // the width text was cut for; -1: not cut yet
}

func newRowTitle(widths *runeWidths) *rowTitle {
	t := &rowTitle{widths: widths, text: canvas.NewText("", nil), cutFor: -1}
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
	t.text.TextSize = th.Size(theme.SizeNameText)
	t.text.Text = t.widths.cut(t.full, avail, t.text.TextSize)
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

// runeWidths remembers how wide each rune is, alone, in the sidebar's
// text size, so that cutting a title to a width measures mostly runes
// seen in other titles before.
type runeWidths struct {
	size float32 // the text size the widths are for
	w    map[rune]float32
}

func newRuneWidths() *runeWidths { return &runeWidths{w: map[rune]float32{}} }

func (rw *runeWidths) width(r rune, size float32) float32 {
	if size != rw.size {
		rw.size, rw.w = size, map[rune]float32{}
	}
	w, ok := rw.w[r]
	if !ok {
		w = fyne.MeasureText(string(r), size, fyne.TextStyle{}).Width
		rw.w[r] = w
	}
	return w
}

// ellipsis ends a title that was cut.
const ellipsis = "…"

// cut is s as it fits in width avail at text size size: whole, or its
// longest beginning that fits with an ellipsis after it (the spaces
// before the ellipsis dropped, a combining mark kept with its letter).
// The runes' widths alone only guess where to cut (shaping joins and
// kerns them); the guess is then measured whole, and moved a rune at a
// time until it is the longest that fits.
func (rw *runeWidths) cut(s string, avail, size float32) string {
	measure := func(s string) float32 { return fyne.MeasureText(s, size, fyne.TextStyle{}).Width }
	if s == "" || measure(s) <= avail {
		return s
	}
	runes := []rune(s)
	room := avail - measure(ellipsis)
	n, used := 0, float32(0)
	for n < len(runes) {
		w := rw.width(runes[n], size)
		if used+w > room {
			break
		}
		used += w
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
	fits := func(n int) bool {
		h := head(n)
		return h != "" && measure(h+ellipsis) <= avail
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
