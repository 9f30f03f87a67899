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

// Row is a list's row, or a page's header: body at the width left over,
// actions side by side at the right, centred on the row's height.
func Row(body fyne.CanvasObject, actions ...fyne.CanvasObject) *fyne.Container {
	return container.NewBorder(nil, nil, nil, container.NewCenter(container.NewHBox(actions...)), body)
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

// Column stacks its objects top to bottom at its full width, Gap apart,
// and gives the object at index Fill the height the others leave. Each
// object is measured at the width it gets: a wrapped text (a banner) is
// taller when narrow, and a layout that asked its height before giving it
// its width (Border, VBox) would lay it over what comes below.
type Column struct {
	Fill int
	Gap  float32
}

func (c *Column) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	heights := make([]float32, len(objs))
	var used float32
	for i, o := range objs {
		if i == c.Fill || !o.Visible() {
			continue
		}
		heights[i] = heightAt(o, size.Width)
		used += heights[i] + c.gap(heights[i])
	}
	if c.Fill >= 0 && c.Fill < len(heights) {
		used += c.Gap
		heights[c.Fill] = max(size.Height-used, 0)
	}
	var y float32
	for i, o := range objs {
		if !o.Visible() {
			continue
		}
		o.Move(fyne.NewPos(0, y))
		o.Resize(fyne.NewSize(size.Width, heights[i]))
		y += heights[i] + c.gap(heights[i])
		if i == c.Fill {
			y += c.Gap - c.gap(heights[i])
		}
	}
}

// gap is the room after an object h high: none after an empty one (no
// banners).
func (c *Column) gap(h float32) float32 {
	if h <= 0 {
		return 0
	}
	return c.Gap
}

func (c *Column) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var w, h float32
	for i, o := range objs {
		if !o.Visible() {
			continue
		}
		m := o.MinSize()
		w = max(w, m.Width)
		h += m.Height + c.gap(m.Height)
		if i == c.Fill {
			h += c.Gap - c.gap(m.Height)
		}
	}
	return fyne.NewSize(w, h)
}

// heightAt is o's height at width w: it is given the width first, so
// that wrapped text inside it measures itself at that width.
func heightAt(o fyne.CanvasObject, w float32) float32 {
	o.Resize(fyne.NewSize(w, o.Size().Height))
	return o.MinSize().Height
}
