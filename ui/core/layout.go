package core

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Readable lays its objects out in a column at most Max wide, centred,
// with a little room between them: long lines are hard to read.
type Readable struct{ Max float32 }

func (r *Readable) width(size fyne.Size) float32 {
	return min(size.Width-2*theme.Padding(), r.Max)
}

func (r *Readable) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	w := r.width(size)
	x := (size.Width - w) / 2
	y := theme.Padding()
	for _, o := range objs {
		if !o.Visible() {
			continue
		}
		o.Resize(fyne.NewSize(w, o.Size().Height))
		h := o.MinSize().Height
		o.Move(fyne.NewPos(x, y))
		o.Resize(fyne.NewSize(w, h))
		y += h + theme.Padding()*2
	}
}

func (r *Readable) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var w, h float32
	h = theme.Padding()
	for _, o := range objs {
		if !o.Visible() {
			continue
		}
		m := o.MinSize()
		w = max(w, m.Width)
		h += m.Height + theme.Padding()*2
	}
	return fyne.NewSize(w, h)
}

// Lines stacks a row's lines closer than a plain VBox: each label
// already carries its own padding.
func Lines(objs ...fyne.CanvasObject) *fyne.Container {
	return container.New(layout.NewCustomPaddedVBoxLayout(-2*theme.Padding()), objs...)
}

// BoldLabel is a row's title: bold, cut short with an ellipsis.
func BoldLabel(s string) *widget.Label {
	l := widget.NewLabel(s)
	l.TextStyle.Bold = true
	l.Truncation = fyne.TextTruncateEllipsis
	return l
}

// MutedLine is a row's secondary line, wrapped.
func MutedLine(s string) *widget.RichText {
	rt := NewMuted(theme.SizeNameCaptionText, fyne.TextWrapWord)
	SetMuted(rt, s)
	return rt
}
