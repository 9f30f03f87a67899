package chat

import (
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
)

// The chat's column holds widgets only for the messages in and near
// sight: a chat of thousands of messages opens and scrolls at the cost of
// a screenful. Every message has a height, measured once its widgets were
// laid out at the column's width (and again when the width or its text
// changes), or else guessed from its text; the column is as long as
// their sum, so the scroll bar and the scrolling work over the whole chat.
// When a guess above the part in sight is replaced by a measure, the view
// keeps what it shows where it was (an anchor), so nothing jumps.

// ahead is how much of the chat beyond what is in sight, above and below,
// has widgets: scrolling a wheel step finds them ready. Messages further
// than keepBeyond from sight lose theirs.
const (
	ahead      = 0.5 // of the view's height
	keepBeyond = 2.0
)

// lazyColumn lays out the built messages of a View where their heights
// put them, centred at most readableWidth wide, like core.Readable.
type lazyColumn struct{ c *View }

func (l *lazyColumn) MinSize([]fyne.CanvasObject) fyne.Size {
	c := l.c
	return fyne.NewSize(0, c.total(c.colWidth(c.viewSize().Width)))
}

func (l *lazyColumn) Layout(_ []fyne.CanvasObject, size fyne.Size) {
	c := l.c
	w := c.colWidth(size.Width)
	x := (size.Width - w) / 2
	p := theme.Padding()
	y := p
	moved := false
	for _, v := range c.views {
		if v.built() {
			if v.hw != w {
				moved = true
			} else if h := v.obj.MinSize().Height; h != v.h {
				// It changed without saying so (a theme, a button's
				// text): measured again, and the view kept in place.
				v.h, moved = h, true
			}
			h := c.measure(v, w)
			v.obj.Move(fyne.NewPos(x, y))
			v.obj.Resize(fyne.NewSize(w, h))
		}
		y += c.height(v, w) + 2*p
	}
	if c.waiting.Visible() {
		c.waiting.Resize(fyne.NewSize(w, c.waiting.Size().Height))
		c.waiting.Move(fyne.NewPos(x, y))
		c.waiting.Resize(fyne.NewSize(w, c.waiting.MinSize().Height))
	}
	if moved && !c.syncing {
		// The width changed (the window was resized), or a height:
		// which messages are in sight changed with it.
		c.w.Do(c.relayout)
	}
}

// colWidth is the column's width in a view width wide.
func (c *View) colWidth(width float32) float32 {
	return max(min(width-2*theme.Padding(), readableWidth), 1)
}

// measure lays v's widgets out at width w and returns their height, kept
// until the width or the message changes.
func (c *View) measure(v *messageView, w float32) float32 {
	if v.hw != w {
		v.obj.Resize(fyne.NewSize(w, v.obj.Size().Height))
		v.h, v.hw = v.obj.MinSize().Height, w
	}
	return v.h
}

// height is v's height at width w: measured, or else guessed.
func (c *View) height(v *messageView, w float32) float32 {
	if v.hw == w {
		return v.h
	}
	if v.estW != w {
		v.est, v.estW = estimate(v, w), w
	}
	return v.est
}

// estimate guesses a message's height from its text: lines of about the
// width of its characters (Hangul and other wide scripts about twice a
// Latin letter), a line for each blank line, and a header row. Only a
// guess: measuring replaces it as the message comes near sight.
func estimate(v *messageView, w float32) float32 {
	size := theme.TextSize()
	line := size * 1.55
	perLine := max(w/(size*0.55), 10)
	lines := float32(0)
	run := float32(0)
	s := v.msg.Content
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == '\n':
			lines += float32(int(run/perLine)) + 1
			run = 0
		case r >= 0x1100:
			run += 1.9
		default:
			run++
		}
	}
	lines += float32(int(run/perLine)) + 1
	chrome := size * 3.5 // the author and actions row, the footer
	if v.msg.Role == "notice" {
		chrome = size
	}
	if v.msg.Reasoning != "" {
		chrome += size * 2.5 // the folded reasoning's row
	}
	return chrome + lines*line
}

// total is the column's height: every message and the waiting line, with
// the room between them that core.Readable leaves.
func (c *View) total(w float32) float32 {
	p := theme.Padding()
	h := p
	for _, v := range c.views {
		h += c.height(v, w) + 2*p
	}
	if c.waiting.Visible() {
		h += c.waiting.MinSize().Height + 2*p
	}
	return h
}

// top is where message i starts in the column at width w.
func (c *View) top(i int, w float32) float32 {
	p := theme.Padding()
	y := p
	for _, v := range c.views[:i] {
		y += c.height(v, w) + 2*p
	}
	return y
}

// anchor is what stays in place as heights change: message i's top at d
// below the top of the view, or the end of the chat at the bottom.
type anchor struct {
	i   int
	d   float32
	end bool
}

// here is the anchor that keeps what the view shows now: the first
// message in sight.
func (c *View) here() anchor {
	if len(c.views) == 0 {
		return anchor{end: true}
	}
	w := c.colWidth(c.viewSize().Width)
	off := c.scroll.Offset.Y
	p := theme.Padding()
	y := p
	for i, v := range c.views {
		h := c.height(v, w)
		if y+h+2*p > off {
			return anchor{i: i, d: y - off}
		}
		y += h + 2*p
	}
	return anchor{end: true}
}

// reflow lays the column out again after messages changed: to its end
// when following, else keeping what is in sight in place.
func (c *View) reflow() {
	if c.follow {
		c.toEnd()
	} else {
		c.relayout()
	}
}

// relayout lays the column out again keeping what is in sight in place:
// after a message's height changed, or the width.
func (c *View) relayout() {
	if c.follow && (c.pinned || c.atBottom()) {
		c.sync(anchor{end: true})
		return
	}
	c.sync(c.here())
}

// viewSize is the size of the part in sight, or a window's worth before
// the view was first laid out.
func (c *View) viewSize() fyne.Size {
	s := c.scroll.Size()
	if s.Width < 1 || s.Height < 1 {
		return fyne.NewSize(readableWidth+2*theme.Padding(), 800)
	}
	return s
}

// sync builds the widgets of the messages in and near sight, measures
// them, drops those far from it, and scrolls so that a stays in place.
func (c *View) sync(a anchor) {
	if c.syncing {
		return
	}
	c.syncing = true
	defer func() { c.syncing = false }()
	size := c.viewSize()
	w := c.colWidth(size.Width)
	budget, later := c.aheadBudget, false
	viewH := size.Height
	p := theme.Padding()
	var off float32
	// Measuring replaces guesses, which moves things: place the anchor
	// again until nothing new was measured.
	for range 4 {
		total := c.total(w)
		switch {
		case a.end || a.i >= len(c.views):
			off = total - viewH
		default:
			off = c.top(a.i, w) - a.d
		}
		off = max(0, min(off, total-viewH))
		lo, hi := off-ahead*viewH, off+viewH+ahead*viewH
		fresh := false
		y := p
		for _, v := range c.views {
			h := c.height(v, w)
			if y+h >= lo && y <= hi {
				inSight := y+h >= off && y <= off+viewH
				if !v.built() {
					if !inSight && budget == 0 {
						// Built between frames (buildAhead), not in this one.
						later = true
						y += h + 2*p
						continue
					}
					if !inSight {
						budget--
					}
					v.build()
					fresh = true
				}
				if v.hw != w {
					c.measure(v, w)
					fresh = true
				}
			}
			y += c.height(v, w) + 2*p
			if y > hi {
				break
			}
		}
		if !fresh {
			break
		}
	}
	// Drop the widgets far from sight; list those kept in order. Those
	// kept out of sight are hidden: Fyne paints every object shown, in
	// sight or clipped away, and draws the text of each into a texture
	// the first time — the screenfuls kept around would cost every frame
	// what the one in sight does.
	lo, hi := off-keepBeyond*viewH, off+viewH+keepBeyond*viewH
	objs := make([]fyne.CanvasObject, 0, 32)
	y := p
	for _, v := range c.views {
		h := c.height(v, w)
		if v.built() {
			switch {
			case (y+h < lo || y > hi) && !v.kept():
				v.release()
			case y+h+2*p < off || y > off+viewH:
				v.obj.Hide()
				objs = append(objs, v.obj)
			default:
				v.obj.Show()
				objs = append(objs, v.obj)
			}
		}
		y += h + 2*p
	}
	objs = append(objs, c.waiting)
	c.box.Objects = objs
	defer c.maybeOlder(c.firstInSight(off, w))
	total := c.total(w)
	// The column is laid out, and the scroll told of its new length and
	// place, without a Refresh of either: a container's Refresh refreshes
	// everything in it, and every RichText wraps its text again on
	// Refresh — the whole screenful at each wheel step.
	want := fyne.NewSize(max(size.Width, 0), max(total, size.Height))
	if c.box.Size() != want {
		c.box.Resize(want)
	} else {
		c.box.Layout.Layout(c.box.Objects, want)
	}
	canvas.Refresh(c.box)
	c.scroll.Offset = fyne.NewPos(0, off+1) // so that the scroll to off is one
	c.scroll.ScrollToOffset(fyne.NewPos(0, off))
	c.lastY = c.scroll.Offset.Y
	c.pinned = c.lastY >= total-viewH-1
	c.seen = size
	if later {
		c.scheduleAhead()
	}
}

// scheduleAhead builds the messages near sight but out of it after the
// frame, one at a time, so that a wheel step finds them ready and no
// frame builds more than what it brings into sight.
func (c *View) scheduleAhead() {
	if c.aheadQueued {
		return
	}
	c.aheadQueued = true
	gen := c.gen
	c.w.Do(func() {
		c.aheadQueued = false
		if gen != c.gen || c.syncing {
			return
		}
		c.aheadBudget = 1
		defer func() { c.aheadBudget = 0 }()
		c.relayout()
	})
}

// viewport holds the scroll and tells the view when its size changes: a
// taller or wider window shows other messages.
type viewport struct{ c *View }

func (l *viewport) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objs {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(size)
	}
	if c := l.c; size != c.seen && !c.syncing && len(c.views) > 0 {
		c.relayout()
	}
}

func (l *viewport) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var m fyne.Size
	for _, o := range objs {
		m = m.Max(o.MinSize())
	}
	return m
}

// firstInSight is the first message seen with the view at off.
func (c *View) firstInSight(off, w float32) int {
	p := theme.Padding()
	y := p
	for i, v := range c.views {
		y += c.height(v, w) + 2*p
		if y > off {
			return i
		}
	}
	return len(c.views)
}

// built counts the messages that have widgets (for tests).
func (c *View) builtCount() int {
	n := 0
	for _, v := range c.views {
		if v.built() {
			n++
		}
	}
	return n
}
