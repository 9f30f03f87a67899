package markdown

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// column stacks objects vertically at full width with a fixed gap, which
// may be negative to eat into RichText's inner padding (tight lists).
// Boxed blocks (code, tables, rules) have no padding of their own, so
// they get theme padding on each side in addition.
type column struct{ gap float32 }

// boxed reports whether o draws to its edges, unlike text, which RichText
// surrounds with inner padding.
func boxed(o fyne.CanvasObject) bool {
	switch o := o.(type) {
	case *CodeBlock:
		return true
	case *fyne.Container:
		_, isGrid := o.Layout.(*grid)
		return isGrid
	}
	return false
}

// between is the space between two neighbouring blocks.
func (c *column) between(a, b fyne.CanvasObject) float32 {
	g := c.gap
	if boxed(a) || boxed(b) {
		g += theme.Padding() * 2
	}
	return g
}

// each calls f with every visible object and the space above it.
func (c *column) each(objs []fyne.CanvasObject, f func(o fyne.CanvasObject, gap float32)) {
	var prev fyne.CanvasObject
	for _, o := range objs {
		if !o.Visible() {
			continue
		}
		var gap float32
		if prev != nil {
			gap = c.between(prev, o)
		}
		prev = o
		f(o, gap)
	}
}

func (c *column) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	y := float32(0)
	c.each(objs, func(o fyne.CanvasObject, gap float32) {
		y += gap
		// Resize first: a wrapped RichText knows its height only once it
		// knows its width.
		o.Resize(fyne.NewSize(size.Width, o.Size().Height))
		h := o.MinSize().Height
		o.Move(fyne.NewPos(0, y))
		o.Resize(fyne.NewSize(size.Width, h))
		y += h
	})
}

func (c *column) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var w, h float32
	c.each(objs, func(o fyne.CanvasObject, gap float32) {
		h += gap
		m := o.MinSize()
		w = max(w, m.Width)
		h += m.Height
	})
	return fyne.NewSize(w, max(h, 0))
}

// hang puts a list bullet (objs[0]) in a fixed-width gutter and the item's
// content (objs[1]) beside it, so wrapped lines and nested lists indent
// under the text rather than under the bullet.
type hang struct{ width float32 }

func (l *hang) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	if len(objs) != 2 {
		return
	}
	gutter := l.width + theme.Padding()
	b := objs[0].MinSize()
	objs[0].Move(fyne.NewPos(gutter-theme.Padding()-b.Width+theme.InnerPadding()/2, 0))
	objs[0].Resize(b)
	objs[1].Move(fyne.NewPos(gutter, 0))
	objs[1].Resize(fyne.NewSize(max(size.Width-gutter, 0), size.Height))
}

func (l *hang) MinSize(objs []fyne.CanvasObject) fyne.Size {
	if len(objs) != 2 {
		return fyne.Size{}
	}
	b, c := objs[0].MinSize(), objs[1].MinSize()
	return fyne.NewSize(l.width+theme.Padding()+c.Width, max(b.Height, c.Height))
}

// grid lays table cells out in equal-width columns; each row is as tall
// as its tallest (wrapped) cell.
type grid struct{ cols int }

func (g *grid) rows(objs []fyne.CanvasObject) int { return (len(objs) + g.cols - 1) / g.cols }

func (g *grid) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	colW := size.Width / float32(g.cols)
	y := float32(0)
	for r := 0; r < g.rows(objs); r++ {
		row := objs[r*g.cols : min((r+1)*g.cols, len(objs))]
		h := float32(0)
		for _, o := range row {
			o.Resize(fyne.NewSize(colW, o.Size().Height))
			h = max(h, o.MinSize().Height)
		}
		for i, o := range row {
			o.Move(fyne.NewPos(float32(i)*colW, y))
			o.Resize(fyne.NewSize(colW, h))
		}
		y += h
	}
}

func (g *grid) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var w, h float32
	for r := 0; r < g.rows(objs); r++ {
		row := objs[r*g.cols : min((r+1)*g.cols, len(objs))]
		rw, rh := float32(0), float32(0)
		for _, o := range row {
			m := o.MinSize()
			rw = max(rw, m.Width)
			rh = max(rh, m.Height)
		}
		w = max(w, rw*float32(g.cols))
		h += rh
	}
	return fyne.NewSize(w, h)
}
