package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/session"
)

// chatView shows the messages of one conversation and streams answers
// into them. Only the message that is streaming is re-rendered as tokens
// arrive; the rest of the history is left alone.
type chatView struct {
	ui      *UI
	conv    int64
	views   []*messageView
	byID    map[int64]*messageView
	box     *fyne.Container
	scroll  *container.Scroll
	empty   *fyne.Container
	emptyTx *widget.Label
	waiting *widget.RichText
	content *fyne.Container
}

// ReadableWidth is the widest a message column gets: long lines are hard
// to read.
const ReadableWidth = 860

func newChatView(u *UI) *chatView {
	c := &chatView{ui: u, byID: map[int64]*messageView{}}
	c.waiting = newMuted(theme.SizeNameText, fyne.TextWrapWord)
	setMuted(c.waiting, lang.X("chat.waiting", "Waiting for the model…"))
	c.waiting.Hide()
	c.box = container.New(&readable{max: ReadableWidth})
	c.scroll = container.NewVScroll(c.box)
	title := widget.NewLabelWithStyle(lang.X("chat.empty.title", "New chat"), fyne.TextAlignCenter, fyne.TextStyle{Bold: true})
	title.SizeName = theme.SizeNameHeadingText
	c.emptyTx = widget.NewLabelWithStyle("", fyne.TextAlignCenter, fyne.TextStyle{})
	c.emptyTx.Wrapping = fyne.TextWrapWord
	// A wrapped label in a centred box would shrink to one word a line:
	// give the text a readable width instead.
	c.empty = container.NewCenter(container.NewGridWrap(fyne.NewSize(520, 140), container.NewVBox(title, c.emptyTx)))
	c.content = container.NewStack(c.scroll, c.empty)
	return c
}

// show loads a conversation's messages (0: an empty new chat).
func (c *chatView) show(conv int64) {
	c.conv = conv
	c.views = nil
	c.byID = map[int64]*messageView{}
	if conv != 0 {
		msgs, err := c.ui.s.Messages(conv)
		if err != nil {
			c.ui.showError(err)
		}
		for _, m := range msgs {
			if m.Role == "system" {
				continue
			}
			c.addView(m)
		}
	}
	c.rebuild()
	c.scroll.ScrollToBottom()
	if c.ui.status != nil {
		c.ui.status.showCache(conv)
	}
}

func (c *chatView) addView(m session.Message) *messageView {
	v := newMessageView(c, m)
	c.views = append(c.views, v)
	c.byID[m.ID] = v
	c.ui.noteText(m.Content)
	return v
}

// rebuild lays the message objects out again after messages were added
// or removed (not after a message's text changed).
func (c *chatView) rebuild() {
	objs := make([]fyne.CanvasObject, 0, len(c.views)+1)
	for _, v := range c.views {
		objs = append(objs, v.obj)
	}
	objs = append(objs, c.waiting)
	c.box.Objects = objs
	c.box.Refresh()
	c.refreshEmpty()
	c.refreshActions()
}

func (c *chatView) refreshEmpty() {
	if len(c.views) > 0 {
		c.empty.Hide()
		return
	}
	switch {
	case c.ui.model != nil && session.IsDemo(c.ui.model.Path):
		c.emptyTx.SetText(lang.X("chat.empty.demo", "The built-in demo writes short English stories: start one (“Once upon a time”). Real answers need a real model."))
	case c.ui.model != nil:
		c.emptyTx.SetText(lang.X("chat.empty.ready", "Ask {{.Model}} anything. Enter sends, Shift+Enter starts a new line.",
			map[string]any{"Model": modelLabel(c.ui.model.Path)}))
	case c.ui.loadingPath != "":
		c.emptyTx.SetText(lang.X("chat.empty.loading", "The model is loading. You can type already: your message waits for it."))
	default:
		c.emptyTx.SetText(lang.X("chat.empty.nomodel", "Open a model to start: use the model button at the top left."))
	}
	c.empty.Show()
}

// refreshActions enables Edit and Regenerate only while the conversation
// is not generating.
func (c *chatView) refreshActions() {
	busy := c.ui.generating[c.conv]
	for _, v := range c.views {
		v.setBusy(busy)
	}
}

// atBottom reports whether the view shows the end of the conversation, so
// that new text should keep it there.
func (c *chatView) atBottom() bool {
	return c.scroll.Offset.Y+c.scroll.Size().Height >= c.box.MinSize().Height-theme.Padding()*8
}

func (c *chatView) onMessageAdded(m session.Message) {
	if _, ok := c.byID[m.ID]; ok {
		return
	}
	follow := c.atBottom() || m.Role == "user"
	v := c.addView(m)
	if m.Role == "assistant" {
		v.streaming = true
		v.refreshBody()
		c.waiting.Hide()
	}
	c.rebuild()
	if follow {
		c.scroll.ScrollToBottom()
	}
}

func (c *chatView) onToken(t session.Token) {
	if t.Conv != c.conv {
		return
	}
	v := c.byID[t.Msg]
	if v == nil || t.Offset > len(v.msg.Content) {
		// We missed the start (the view was opened mid-answer): the
		// manager's Messages has the text so far.
		c.show(c.conv)
		return
	}
	follow := c.atBottom()
	v.streaming = true
	v.msg.Content = v.msg.Content[:t.Offset] + t.Text
	v.tokens, v.elapsed = t.Tokens, t.Elapsed
	v.scheduleRender()
	c.waiting.Hide()
	if follow {
		c.scroll.ScrollToBottom()
	}
}

func (c *chatView) onStats(st session.Stats) {
	if v := c.byID[st.Msg]; v != nil && st.Conv == c.conv {
		s := st
		v.stats = &s
		v.refreshFooter()
	}
}

func (c *chatView) onDone(d session.Done) {
	if d.Conv != c.conv {
		return
	}
	c.waiting.Hide()
	if v := c.byID[d.Msg]; v != nil {
		v.streaming = false
		v.msg.FinishReason = string(d.Reason)
		v.refreshBody()
		v.refreshFooter()
	}
	c.refreshActions()
}

func (c *chatView) onQueued(q session.Queued) {
	if q.Conv != c.conv {
		return
	}
	if q.Position > 0 {
		setMuted(c.waiting, lang.X("chat.queued", "Waiting for another chat to finish ({{.Ahead}} ahead)…", map[string]any{"Ahead": q.Position}))
	} else {
		setMuted(c.waiting, lang.X("chat.waiting", "Waiting for the model…"))
	}
	c.waiting.Show()
}

func (c *chatView) editing() bool {
	for _, v := range c.views {
		if v.editor != nil {
			return true
		}
	}
	return false
}

func (c *chatView) cancelEdit() {
	for _, v := range c.views {
		if v.editor != nil {
			v.onCancelEdit()
		}
	}
}

// readable lays its objects out in a column at most max wide, centred,
// with a little room between messages.
type readable struct{ max float32 }

func (r *readable) width(size fyne.Size) float32 {
	return min(size.Width-2*theme.Padding(), r.max)
}

func (r *readable) Layout(objs []fyne.CanvasObject, size fyne.Size) {
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

func (r *readable) MinSize(objs []fyne.CanvasObject) fyne.Size {
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
