package chat

import (
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/ui/core"
)

// View shows the messages of one conversation and streams answers into
// them. Only the message that is streaming is re-rendered as tokens
// arrive; the rest of the history is left alone.
type View struct {
	w     *core.Window
	shown func(conv int64) // told which conversation is shown, once its messages are
	conv  int64
	// loading: the conversation's messages are being read (on the
	// command worker: a long chat must not hold the window up); gen
	// tells a reading that was overtaken by another.
	loading bool
	gen     int
	// later holds what the session said of the conversation while its
	// messages were being read, replayed once they are shown.
	later   []func()
	views   []*messageView
	byID    map[int64]*messageView
	box     *fyne.Container
	scroll  *container.Scroll
	empty   *fyne.Container
	emptyTx *widget.Label
	waiting *widget.RichText
	content *fyne.Container
	find    *found // a search hit to scroll to (find.go)

	// follow: the view keeps the end of the conversation in sight as the
	// answer grows. The person scrolling up turns it off (and shows jump);
	// scrolling back to the end, or jump, turns it on again.
	follow bool
	lastY  float32
	// older: how many messages of the branch come before those read
	// (pages.go), the first of which is first; olderAsked: they are
	// being read.
	older      int
	first      int64
	olderAsked bool
	// syncing: the column is being laid out (column.go); the scrolls it
	// makes are its own, not the person's.
	syncing bool
	// pinned: the last layout put the end of the chat at the bottom of
	// the view; seen is the view's size it was made for.
	pinned bool
	seen   fyne.Size
	// questions and answers are widgets of messages gone from sight,
	// kept for others (shells.go).
	questions, answers []*shell
	// aheadBudget is how many messages out of sight a layout may build
	// (scheduleAhead's); aheadQueued: one such layout is on its way.
	aheadBudget int
	aheadQueued bool
	jump        *widget.Button
	jumpAt      *fyne.Container

	// frame: a render of the streaming answers is on its way to Fyne's
	// goroutine; dirty are the answers that got text since the last one.
	frame bool
	dirty map[*messageView]bool

	// waitedSince is when each conversation that waits for its turn
	// began to (kept while another is shown, so its count goes on);
	// queuedText says what the one shown waits for.
	waitedSince map[int64]time.Time
	queuedText  string
	queuedTick  bool // a once-a-second update of the count is scheduled
	now         func() time.Time
}

// frameEvery is the most often streaming text reaches the widgets: every
// token that arrived since the last frame is rendered at once, so a fast
// model costs one re-render a frame however many tokens it makes, and what
// the person clicks never queues behind a backlog of renders.
const frameEvery = 33 * time.Millisecond

// onRender, when set (by tests), is told of every render of a streaming
// answer.
var onRender func()

// readableWidth is the widest a message column gets: long lines are hard
// to read.
const readableWidth = 860

// NewView makes the view; shown is called with each conversation shown.
func NewView(w *core.Window, shown func(conv int64)) *View {
	c := &View{w: w, shown: shown, byID: map[int64]*messageView{}, follow: true, dirty: map[*messageView]bool{},
		waitedSince: map[int64]time.Time{}, now: time.Now}
	c.waiting = core.NewMuted(theme.SizeNameText, fyne.TextWrapWord)
	c.waiting.Hide()
	c.box = container.New(&lazyColumn{c: c})
	c.scroll = container.NewVScroll(c.box)
	title := widget.NewLabelWithStyle(lang.X("chat.empty.title", "New chat"), fyne.TextAlignCenter, fyne.TextStyle{Bold: true})
	title.SizeName = theme.SizeNameHeadingText
	c.emptyTx = widget.NewLabelWithStyle("", fyne.TextAlignCenter, fyne.TextStyle{})
	c.emptyTx.Wrapping = fyne.TextWrapWord
	// A wrapped label in a centred box would shrink to one word a line:
	// give the text a readable width instead.
	c.empty = container.NewCenter(container.NewGridWrap(fyne.NewSize(520, 140), container.NewVBox(title, c.emptyTx)))
	c.scroll.OnScrolled = c.onScrolled
	c.jump = widget.NewButtonWithIcon(lang.X("chat.jump", "Jump to latest"), theme.MoveDownIcon(), c.onJump)
	c.jump.Importance = widget.HighImportance
	c.jumpAt = container.NewBorder(nil, container.NewPadded(container.NewHBox(layout.NewSpacer(), c.jump, layout.NewSpacer())), nil, nil)
	c.jumpAt.Hide()
	c.content = container.NewStack(container.New(&viewport{c: c}, c.scroll), c.empty, c.jumpAt)
	return c
}

// Content is the view's widgets, for the window's centre.
func (c *View) Content() fyne.CanvasObject { return c.content }

// Show shows a conversation (0: an empty new chat). Its messages are read
// off Fyne's goroutine (Window.Reads) and appear once read.
func (c *View) Show(conv int64) {
	c.conv = conv
	c.gen++
	c.later = nil
	c.dropViews()
	c.byID = map[int64]*messageView{}
	c.dirty = map[*messageView]bool{}
	c.setFollow(true)
	c.waiting.Hide()
	if conv == 0 {
		c.loading = false
		c.showMessages(nil)
		return
	}
	c.loading = true
	c.older, c.olderAsked = 0, false
	c.rebuild()
	// A long chat opens on its last page (or from a search hit on):
	// older messages are read as they are scrolled to (loadOlder).
	q := store.PageQuery{Limit: pageSize}
	if f := c.find; f != nil && f.conv == conv {
		q.From = f.msg
	}
	gen, sess := c.gen, c.w.Session
	core.Then(c.w.Reads, func() (store.MessagePage, error) { return sess.MessagePage(conv, q) }, func(page store.MessagePage, err error) {
		if gen != c.gen {
			return // another conversation was opened meanwhile
		}
		c.loading = false
		if err != nil {
			c.w.ShowError(err)
		}
		// What arrived while reading is in the page: start again from it.
		c.dropViews()
		c.byID = map[int64]*messageView{}
		c.setOlder(page)
		c.showMessages(page.Messages)
		later := c.later
		c.later = nil
		for _, f := range later {
			f()
		}
	})
}

// ShowNew shows a conversation just made, which has no messages yet:
// nothing to read, so what the session says of it applies at once.
func (c *View) ShowNew(conv int64) {
	c.conv = conv
	c.gen++
	c.later = nil
	c.loading = false
	c.older, c.olderAsked = 0, false
	c.dropViews()
	c.byID = map[int64]*messageView{}
	c.dirty = map[*messageView]bool{}
	c.setFollow(true)
	c.waiting.Hide()
	c.showMessages(nil)
}

// deferred keeps f for after the messages being read are shown, and
// reports whether it did.
func (c *View) deferred(f func()) bool {
	if !c.loading {
		return false
	}
	c.later = append(c.later, f)
	return true
}

// showMessages lays a conversation's messages out, scrolled to the end.
// Only those in and near sight get widgets (column.go).
func (c *View) showMessages(msgs []session.Message) {
	for _, m := range msgs {
		if m.Role == "system" {
			continue
		}
		c.addView(m)
	}
	// A search hit is shown where it is (find.go); anything else from
	// its end.
	if !c.reveal() {
		c.toEnd()
	}
	c.RefreshEmpty()
	c.refreshActions()
	c.shown(c.conv)
}

// toEnd scrolls to the end of the conversation, its last messages built
// and measured first, so the end is where they end.
func (c *View) toEnd() {
	c.sync(anchor{end: true})
}

// onScrolled follows the person's scrolling: up, away from the end, stops
// following; back at the end follows again. The view's own scrolls to the
// end land there, so they never turn following off.
func (c *View) onScrolled(p fyne.Position) {
	if c.syncing {
		return
	}
	up := p.Y < c.lastY
	c.lastY = p.Y
	switch {
	case c.atBottom():
		c.setFollow(true)
	case up:
		c.setFollow(false)
	}
	// The messages coming into sight get their widgets.
	c.sync(c.here())
}

// setFollow turns following on or off; the jump button shows while it is
// off and there is more below.
func (c *View) setFollow(on bool) {
	c.follow = on
	if on || c.atBottom() {
		c.jumpAt.Hide()
	} else {
		c.jumpAt.Show()
	}
}

// onJump scrolls to the end and follows the answer again.
func (c *View) onJump() {
	c.toEnd()
	c.setFollow(true)
}

// dropViews forgets the messages shown, their widgets kept for the next
// (shells.go).
func (c *View) dropViews() {
	for _, v := range c.views {
		if v.built() {
			v.release()
		}
	}
	c.views = nil
}

func (c *View) addView(m session.Message) *messageView {
	v := newMessageView(c, m)
	c.views = append(c.views, v)
	c.byID[m.ID] = v
	return v
}

// rebuild lays the column out again after messages were added or
// removed, keeping the end in sight when following.
func (c *View) rebuild() {
	c.reflow()
	c.RefreshEmpty()
	c.refreshActions()
}

// RefreshEmpty says what to do in an empty chat, which depends on the
// model; it hides once there are messages.
func (c *View) RefreshEmpty() {
	if len(c.views) > 0 || c.loading {
		c.empty.Hide()
		return
	}
	m := c.w.Model
	switch {
	case m != nil && session.IsDemo(m.Path):
		c.emptyTx.SetText(lang.X("chat.empty.demo", "The built-in demo writes short English stories: start one (“Once upon a time”). Real answers need a real model."))
	case m != nil:
		c.emptyTx.SetText(lang.X("chat.empty.ready", "Ask {{.Model}} anything. Enter sends, Shift+Enter starts a new line.",
			map[string]any{"Model": core.ModelLabel(m.Path)}))
	case c.w.LoadingPath != "":
		c.emptyTx.SetText(lang.X("chat.empty.loading", "The model is loading. You can type already: your message waits for it."))
	default:
		c.emptyTx.SetText(lang.X("chat.empty.nomodel", "Open a model to start: use the model button at the top left."))
	}
	c.empty.Show()
}

// refreshActions enables Edit and Regenerate only while the conversation
// is not generating.
func (c *View) refreshActions() {
	busy := c.w.Generating[c.conv]
	for _, v := range c.views {
		v.setBusy(busy)
	}
}

// atBottom reports whether the view shows the end of the conversation, so
// that new text should keep it there.
func (c *View) atBottom() bool {
	return c.scroll.Offset.Y+c.scroll.Size().Height >= c.box.MinSize().Height-theme.Padding()*8
}

// OnMessageAdded shows a message stored in the conversation shown.
func (c *View) OnMessageAdded(m session.Message) {
	if c.deferred(func() { c.OnMessageAdded(m) }) {
		return
	}
	if _, ok := c.byID[m.ID]; ok {
		return
	}
	if m.Role == "user" {
		c.follow = true // the person sent it: show it, and follow its answer
	}
	v := c.addView(m)
	if m.Role == "assistant" {
		v.streaming = true
		v.refreshBody()
		c.Started(m.ConversationID)
	}
	c.rebuild()
	if c.follow {
		c.onJump()
	}
}

// OnToken adds streamed text to its answer.
func (c *View) OnToken(t session.Token) {
	if t.Conv != c.conv {
		return
	}
	if c.deferred(func() { c.OnToken(t) }) {
		return
	}
	c.stream(t, func(m *session.Message) *string { return &m.Content })
}

// OnReasoning adds streamed reasoning to its answer: its offsets count
// into Message.Reasoning, apart from the content's.
func (c *View) OnReasoning(t session.Token) {
	if t.Conv != c.conv {
		return
	}
	if c.deferred(func() { c.OnReasoning(t) }) {
		return
	}
	if v := c.stream(t, func(m *session.Message) *string { return &m.Reasoning }); v != nil {
		v.reasonTokens, v.reasonTime = t.Tokens, t.Elapsed
	}
}

// stream puts t's text at its offset in the text of its message that
// field names (content or reasoning, each with offsets of its own) and
// marks the answer for the next frame, which it returns. Text the
// messages read already held changes nothing; an offset past what the
// view holds (opened mid-answer) shows the chat again, whose Messages
// has the text so far. Both return nil.
func (c *View) stream(t session.Token, field func(*session.Message) *string) *messageView {
	v := c.byID[t.Msg]
	if v == nil {
		c.Show(c.conv)
		return nil
	}
	text := field(&v.msg)
	if t.Offset+len(t.Text) <= len(*text) && strings.HasPrefix((*text)[t.Offset:], t.Text) {
		return nil
	}
	if t.Offset > len(*text) {
		c.Show(c.conv)
		return nil
	}
	v.streaming = true
	*text = (*text)[:t.Offset] + t.Text
	v.tokens, v.elapsed = t.Tokens, t.Elapsed
	c.Started(t.Conv)
	c.dirty[v] = true
	c.scheduleFrame()
	return v
}

// scheduleFrame asks for one render of the answers that got text, at the
// next frame. The render paces itself too (core.Throttle): a long answer
// costs more to lay out, and never takes more than a share of the time.
func (c *View) scheduleFrame() {
	if c.frame {
		return
	}
	c.frame = true
	time.AfterFunc(frameEvery, func() { c.w.Do(c.renderFrame) })
}

// renderFrame renders what streamed since the last frame, then keeps the
// end in sight when following: after the render, when the column has
// its new height (scrolling before it would leave the new text below).
func (c *View) renderFrame() {
	c.frame = false
	dirty := c.dirty
	c.dirty = map[*messageView]bool{}
	for v := range dirty {
		if c.byID[v.msg.ID] != v {
			continue // the conversation was left, or shown again
		}
		v.render.Schedule(c.w.Do, func() {
			if onRender != nil {
				onRender()
			}
			v.renderNow()
			if c.byID[v.msg.ID] != v {
				return
			}
			c.reflow()
		})
	}
}

// OnStats shows an answer's figures in its footer.
func (c *View) OnStats(st session.Stats) {
	if c.deferred(func() { c.OnStats(st) }) {
		return
	}
	if v := c.byID[st.Msg]; v != nil && st.Conv == c.conv {
		s := st
		v.stats = &s
		v.changed()
		v.refreshThinking()
		v.refreshFooter()
		c.relayout()
	}
}

// OnDone ends an answer's streaming.
func (c *View) OnDone(d session.Done) {
	c.Started(d.Conv) // or ended before it started: it waits no more
	if d.Conv != c.conv || c.deferred(func() { c.OnDone(d) }) {
		return
	}
	if v := c.byID[d.Msg]; v != nil {
		v.streaming = false
		v.msg.FinishReason = string(d.Reason)
		if d.Reason == session.ReasonError && d.Err != nil && session.IsRemote(v.msg.Model) {
			// As the session stored it: the footer says why (RemoteError).
			v.msg.Sampler = session.WithRemoteError(v.msg.Sampler, d.Err.Error())
		}
		delete(c.dirty, v)
		v.renderNow()
		c.reflow()
	}
	c.refreshActions()
}

// OnQueued says the answer waits for the model.
// The shell tells it of every conversation, and again of one opened while
// it waits, so that its count goes on from when it began to wait.
func (c *View) OnQueued(q session.Queued) {
	if _, ok := c.waitedSince[q.Conv]; !ok {
		c.waitedSince[q.Conv] = c.now()
	}
	if q.Conv != c.conv || c.deferred(func() { c.OnQueued(q) }) {
		return
	}
	if q.Position > 0 {
		c.queuedText = lang.X("chat.queued", "another chat answers first ({{.Ahead}} ahead)", map[string]any{"Ahead": q.Position})
	} else {
		c.queuedText = lang.X("chat.waiting", "for the model to load")
	}
	c.showWaiting()
	c.waiting.Show()
	c.rebuild()
}

// showWaiting writes what the answer waits for and how long it has, and
// updates the count each second until the answer starts.
func (c *View) showWaiting() {
	since, ok := c.waitedSince[c.conv]
	if !ok {
		return
	}
	secs := int(c.now().Sub(since) / time.Second)
	core.SetMuted(c.waiting, lang.X("chat.waited", "waiting · {{.S}} s", map[string]any{"S": secs})+" · "+c.queuedText)
	if c.queuedTick {
		return
	}
	c.queuedTick = true
	time.AfterFunc(time.Second, func() {
		c.w.Do(func() {
			c.queuedTick = false
			// For whichever chat is shown now, which may be another that
			// waits too (its own tick was not scheduled while this one
			// was); it stops once the chat shown no longer waits.
			c.showWaiting()
		})
	})
}

// Started says conv's answer no longer waits: it started, or ended.
func (c *View) Started(conv int64) {
	delete(c.waitedSince, conv)
	if conv == c.conv {
		c.waiting.Hide()
	}
}

// Editing reports whether a message is being edited.
func (c *View) Editing() bool {
	for _, v := range c.views {
		if v.editor != nil {
			return true
		}
	}
	return false
}

// CancelEdit closes the message editors without sending.
func (c *View) CancelEdit() {
	for _, v := range c.views {
		if v.editor != nil {
			v.onCancelEdit()
		}
	}
}

// busy marks conv as answering at once and runs cmd (which asks the
// session for an answer) on the command worker; a refusal clears the mark
// and says why.
func (c *View) busy(conv int64, cmd func() error) {
	w := c.w
	w.Generating[conv] = true
	w.Refresh()
	c.refreshActions()
	w.Commands.Run(cmd, func(err error) {
		delete(w.Generating, conv)
		w.Refresh()
		c.refreshActions()
		w.ShowError(err)
	})
}
