package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/ui/core"
)

// sidebar lists the conversations, pinned first then newest, and searches
// their messages.
type sidebar struct {
	ui      *UI
	search  *core.Entry
	newChat *widget.Button
	list    *widget.List
	hint    *widget.RichText
	rows    []sideRow
	undo    *fyne.Container
	undoMsg *widget.Label
	content fyne.CanvasObject

	undoConv  int64
	undoTimer *time.Timer
	searchGen int
	listGen   int // the list reading the sidebar waits for
	query     string
	marks     string // the busy marks the rows show (see refreshMarks)

	// The rows are read a page at a time (pages.go): rows holds the pages
	// read so far, of the query shownQuery, and next where the following
	// page starts (nil: no more).
	shownQuery string
	next       *sidePage
	reading    bool // a reading is on its way
	again      bool // the list changed meanwhile: read it again after
}

// busy says whether conv answers now (rowGenerating), waits its turn
// (rowQueued) or neither, from the session's events.
func (s *sidebar) busy(conv int64) rowState {
	u := s.ui
	switch _, queued := u.queued[conv]; {
	case !u.w.Generating[conv]:
		return rowIdle
	case queued:
		return rowQueued
	}
	return rowGenerating
}

type rowState int

const (
	rowIdle rowState = iota
	rowGenerating
	rowQueued
)

// refreshMarks redraws the rows when which conversations are busy
// changed: the window's refresh runs often (load progress) and a list
// refresh binds every row again. It looks at the busy conversations, not
// at the rows: there may be thousands of those.
func (s *sidebar) refreshMarks() {
	ids := make([]int64, 0, len(s.ui.w.Generating))
	for id := range s.ui.w.Generating {
		if s.busy(id) != rowIdle {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "%d:%d ", id, s.busy(id))
	}
	if b.String() != s.marks {
		s.marks = b.String()
		s.list.Refresh()
	}
}

// sideRow is one line of the list: a conversation, or a search hit in one.
type sideRow struct {
	conv    session.Conversation
	snippet string
	msg     int64 // the message the snippet is from
}

// UndoAfter is how long "Undo" stays offered after a delete.
const UndoAfter = 10 * time.Second

func newSidebar(u *UI) *sidebar {
	s := &sidebar{ui: u}
	s.search = core.NewEntry(u.handleShortcut)
	s.search.SetPlaceHolder(lang.X("sidebar.search", "Search chats"))
	s.search.ActionItem = widget.NewIcon(theme.SearchIcon())
	s.search.OnChanged = s.onSearchChanged
	s.search.OnEscape = func() { s.search.SetText("") }
	s.newChat = widget.NewButtonWithIcon(lang.X("sidebar.new", "New chat"), theme.ContentAddIcon(), u.onNewChat)
	s.newChat.Importance = widget.HighImportance
	s.newChat.Alignment = widget.ButtonAlignLeading

	// The list makes only the rows on screen (and binds them again as it
	// scrolls); a row near the end of what was read asks for the next
	// page. Search results are two lines tall, title and snippet, the
	// conversations one: each list has one height, so that placing a row
	// costs the same at row 10 and at row 10,000.
	s.list = widget.NewList(
		func() int { return len(s.rows) },
		func() fyne.CanvasObject {
			it := newConvItem(s)
			if s.shownQuery != "" {
				core.SetMuted(it.snippet, " ")
				it.snippet.Show()
			}
			return it
		},
		func(id widget.ListItemID, o fyne.CanvasObject) {
			if id < len(s.rows) {
				o.(*convItem).set(s.rows[id], id)
			}
			if id >= len(s.rows)-pagePrefetch {
				s.readMore()
			}
		})
	s.list.OnSelected = s.onSelected

	s.undoMsg = widget.NewLabel("")
	s.undoMsg.Truncation = fyne.TextTruncateEllipsis
	undoBtn := widget.NewButton(lang.X("sidebar.undo", "Undo"), s.onUndo)
	s.undo = container.NewBorder(nil, nil, nil, undoBtn, s.undoMsg)
	s.undo.Hide()

	s.hint = core.NewMuted(theme.SizeNameText, fyne.TextWrapWord)
	top := container.NewVBox(s.newChat, container.NewBorder(nil, nil, nil, newLibraryMenu(u), s.search))
	s.content = container.NewBorder(container.NewPadded(top), s.undo, nil, nil,
		container.NewStack(s.list, container.NewVBox(s.hint)))
	return s
}

// reload reads the conversation list again (or re-runs the search), off
// Fyne's goroutine, as far as it was read (at least a page). Readings do
// not pile up: while one is on its way, the next waits for it and reads
// what changed meanwhile once (an import of thousands of chats changes
// thousands of them); a reading of another query than the one typed now
// is dropped.
func (s *sidebar) reload() {
	s.listGen++
	if s.reading {
		s.again = true
		return
	}
	s.reading = true
	gen, q, sess := s.listGen, s.query, s.ui.w.Session
	n := pageSize
	if q == s.shownQuery {
		n = max(n, len(s.rows)) // keep what was scrolled to
	}
	core.Then(s.ui.w.Reads, func() (sidePage, error) {
		p, err := readPage(sess, q, nil, n)
		titles := make([]string, 0, len(p.rows))
		for _, r := range p.rows {
			titles = append(titles, r.conv.Title)
		}
		warmFonts(titles) // before the rows are measured (fontwarm.go)
		return p, err
	}, func(p sidePage, err error) {
		s.reading = false
		if q == s.query {
			if err != nil {
				s.ui.w.ShowError(err)
			} else {
				if q != s.shownQuery {
					s.shownQuery = q
					s.list.ScrollToTop() // other rows: from their first
				}
				s.showRows(p.rows, p.more())
			}
		}
		if s.again || gen != s.listGen {
			s.again = false
			s.reload()
		}
	})
}

// readMore reads the page after the rows, when there is one.
func (s *sidebar) readMore() {
	if s.reading || s.next == nil {
		return
	}
	s.reading = true
	gen, q, from, sess := s.listGen, s.shownQuery, s.next, s.ui.w.Session
	core.Then(s.ui.w.Reads, func() (sidePage, error) { return readPage(sess, q, from, pageSize) }, func(p sidePage, err error) {
		s.reading = false
		switch {
		case s.again || gen != s.listGen:
			s.again = false
			s.reload() // the list changed under the page: read it again
		case err != nil:
			s.ui.w.ShowError(err)
		default:
			s.showRows(append(s.rows, p.rows...), p.more())
		}
	})
}

// selectConv highlights the conversation shown without re-opening it.
func (s *sidebar) selectConv(id int64) {
	for i, r := range s.rows {
		if r.conv.ID == id {
			if s.list.OnSelected != nil {
				f := s.list.OnSelected
				s.list.OnSelected = nil
				s.list.Select(i)
				s.list.OnSelected = f
			}
			return
		}
	}
	s.list.UnselectAll()
}

func (s *sidebar) onSelected(id widget.ListItemID) {
	if id < len(s.rows) {
		s.findHit(s.rows[id])
		s.ui.openConversation(s.rows[id].conv.ID)
	}
}

// findHit has the chat scroll to a search hit's message, with the match
// marked, when it shows the row's conversation.
func (s *sidebar) findHit(r sideRow) {
	if r.msg != 0 {
		s.ui.chat.Find(r.conv.ID, r.msg, s.query)
	}
}

func (s *sidebar) focusSearch() {
	s.ui.w.Win.Canvas().Focus(s.search)
}

// onSearchChanged waits for a pause in typing, then searches.
func (s *sidebar) onSearchChanged(q string) {
	s.searchGen++
	gen := s.searchGen
	q = strings.TrimSpace(q)
	if q == "" {
		s.query = ""
		s.reload()
		return
	}
	time.AfterFunc(SearchDelay, func() {
		s.ui.w.Do(func() {
			if gen == s.searchGen {
				s.query = q
				s.runSearch(q)
			}
		})
	})
}

// SearchDelay is the pause in typing after which the sidebar searches.
const SearchDelay = 200 * time.Millisecond

// runSearch shows the conversations whose title or messages match q.
func (s *sidebar) runSearch(q string) {
	s.query = q
	s.reload()
}

// showRows puts rows in the list; next is where the page after them
// starts (nil: they are all).
func (s *sidebar) showRows(rows []sideRow, next *sidePage) {
	s.rows, s.next = rows, next
	s.list.Refresh()
	s.marks = ""
	s.refreshMarks()
	s.selectConv(s.ui.w.Conv)
	s.refreshHint()
	if next != nil && len(rows) < screenRows {
		s.readMore() // a short page (a search reads a bounded amount): fill the screen
	}
}

// refreshHint says why the list is empty, when it is.
func (s *sidebar) refreshHint() {
	switch {
	case len(s.rows) > 0:
		s.hint.Hide()
		return
	case s.query != "":
		core.SetMuted(s.hint, lang.X("sidebar.nomatch", "No chat matches."))
	default:
		core.SetMuted(s.hint, lang.X("sidebar.empty", "Your chats will appear here."))
	}
	s.hint.Show()
}

func (s *sidebar) onRename(c session.Conversation) {
	e := widget.NewEntry()
	e.SetText(c.Title)
	items := []*widget.FormItem{widget.NewFormItem(lang.X("sidebar.title", "Title"), e)}
	d := dialog.NewForm(lang.X("sidebar.rename", "Rename"), lang.X("dialog.save", "Save"), lang.X("dialog.cancel", "Cancel"), items, func(ok bool) {
		if ok && strings.TrimSpace(e.Text) != "" {
			sess, title := s.ui.w.Session, strings.TrimSpace(e.Text)
			s.ui.w.Commands.Run(func() error { return sess.Rename(c.ID, title) }, s.ui.w.ShowError)
		}
	}, s.ui.w.Win)
	d.Resize(fyne.NewSize(420, d.MinSize().Height))
	d.Show()
	s.ui.w.Win.Canvas().Focus(e)
}

func (s *sidebar) onPin(c session.Conversation) {
	sess := s.ui.w.Session
	s.ui.w.Commands.Run(func() error { return sess.SetPinned(c.ID, !c.Pinned) }, s.ui.w.ShowError)
}

// onDelete moves the conversation to the trash at once and offers Undo
// for a while: no confirmation dialog to click through.
func (s *sidebar) onDelete(c session.Conversation) {
	sess := s.ui.w.Session
	// The list follows the manager's ConversationChanged; Undo is offered
	// at once (a failure says so, and Undo of a chat not deleted does
	// nothing).
	s.ui.w.Commands.Run(func() error { return sess.Delete(c.ID) }, s.ui.w.ShowError)
	s.undoConv = c.ID
	title := c.Title
	if title == "" {
		title = lang.X("sidebar.untitled", "New chat")
	}
	s.undoMsg.SetText(lang.X("sidebar.deleted", "Deleted “{{.Title}}”", map[string]any{"Title": title}))
	s.undo.Show()
	if s.undoTimer != nil {
		s.undoTimer.Stop()
	}
	id := c.ID
	s.undoTimer = time.AfterFunc(UndoAfter, func() {
		s.ui.w.Do(func() {
			if s.undoConv == id {
				s.undoConv = 0
				s.undo.Hide()
			}
		})
	})
}

func (s *sidebar) onUndo() {
	if s.undoConv == 0 {
		return
	}
	id := s.undoConv
	s.undoConv = 0
	s.undo.Hide()
	sess := s.ui.w.Session
	core.Then(s.ui.w.Commands, func() (struct{}, error) { return struct{}{}, sess.Undo(id) }, func(_ struct{}, err error) {
		if err != nil {
			s.ui.w.ShowError(err)
			return
		}
		s.ui.openConversation(id)
	})
}

// convItem is one row of the list: pin mark, title (and a search snippet),
// and a menu button.
type convItem struct {
	widget.BaseWidget
	s       *sidebar
	row     sideRow
	pin     *widget.Icon
	title   *rowTitle
	snippet *widget.RichText
	state   *widget.RichText // answering, or waiting its turn
	menu    *widget.Button
	box     *fyne.Container // the row's layout, once drawn
	id      widget.ListItemID
}

func newConvItem(s *sidebar) *convItem {
	it := &convItem{s: s}
	it.pin = widget.NewIcon(theme.NewThemedResource(iconPin))
	it.pin.Hide() // shown by set for a pinned row: most are not, and the title is laid out once
	it.title = newRowTitle()
	it.snippet = core.NewMuted(theme.SizeNameCaptionText, fyne.TextWrapOff)
	it.snippet.Truncation = fyne.TextTruncateEllipsis
	it.snippet.Hide() // the template is one line; search rows get taller
	it.state = core.NewMuted(theme.SizeNameCaptionText, fyne.TextWrapOff)
	it.state.Hide()
	it.menu = widget.NewButtonWithIcon("", theme.MoreVerticalIcon(), it.onMenu)
	it.menu.Importance = widget.LowImportance
	it.ExtendBaseWidget(it)
	return it
}

func (it *convItem) set(r sideRow, id widget.ListItemID) {
	it.row, it.id = r, id
	title := r.conv.Title
	if title == "" {
		title = lang.X("sidebar.untitled", "New chat")
	}
	it.title.SetText(title)
	if r.conv.Pinned {
		it.pin.Show()
	} else {
		it.pin.Hide()
	}
	switch it.s.busy(r.conv.ID) {
	case rowGenerating:
		core.SetMuted(it.state, lang.X("sidebar.generating", "answering…"))
		it.state.Show()
	case rowQueued:
		core.SetMuted(it.state, lang.X("sidebar.queued", "waiting"))
		it.state.Show()
	default:
		it.state.Hide()
	}
	switch {
	case r.snippet != "":
		core.SetMuted(it.snippet, strings.Join(strings.Fields(r.snippet), " "))
		it.snippet.Show()
	case it.s.shownQuery != "":
		core.SetMuted(it.snippet, " ") // a title match: the row keeps the results' height
		it.snippet.Show()
	default:
		it.snippet.Hide()
	}
	if it.box != nil {
		// The mark shown or hidden moves the title's end: a list row is
		// not laid out again when its content changes. Laid out, not
		// refreshed: each part refreshed itself if it changed, and a
		// Refresh of the row would refresh every part again — a title
		// measured three times over, which for Hangul means shaping with
		// a CJK font each time (a tenth of the start-up, 17 rows).
		it.box.Layout.Layout(it.box.Objects, it.box.Size())
		for _, o := range it.box.Objects {
			if c, ok := o.(*fyne.Container); ok {
				c.Layout.Layout(c.Objects, c.Size())
			}
		}
	}
	canvas.Refresh(it)
}

func (it *convItem) onMenu() {
	c := it.row.conv
	pin := lang.X("sidebar.pin", "Pin")
	if c.Pinned {
		pin = lang.X("sidebar.unpin", "Unpin")
	}
	m := fyne.NewMenu("",
		fyne.NewMenuItem(lang.X("sidebar.rename", "Rename"), func() { it.s.onRename(c) }),
		fyne.NewMenuItem(pin, func() { it.s.onPin(c) }),
		fyne.NewMenuItem(lang.X("sidebar.export", "Export…"), func() { it.s.ui.onExport([]int64{c.ID}, false) }),
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem(lang.X("sidebar.delete", "Delete"), func() { it.s.onDelete(c) }),
	)
	widget.ShowPopUpMenuAtRelativePosition(m, it.s.ui.w.Win.Canvas(), fyne.NewPos(0, it.menu.Size().Height), it.menu)
}

// Tapped opens the conversation. The row must take taps itself: it is
// SecondaryTappable (for the menu), so the driver delivers clicks to it
// and never to the list item underneath.
func (it *convItem) Tapped(*fyne.PointEvent) {
	if it.s.ui.w.Conv == it.row.conv.ID {
		if it.row.msg != 0 { // a hit in the chat shown: go to it
			it.s.findHit(it.row)
			it.s.ui.chat.Show(it.row.conv.ID)
		}
		return
	}
	it.s.list.Select(it.id)
	if it.s.ui.w.Conv != it.row.conv.ID { // Select is a no-op on the selected row
		it.s.onSelected(it.id)
	}
}

// TappedSecondary opens the same menu on a right click.
func (it *convItem) TappedSecondary(*fyne.PointEvent) { it.onMenu() }

func (it *convItem) CreateRenderer() fyne.WidgetRenderer {
	text := container.NewVBox(it.title, it.snippet)
	// Tighter than a default VBox: title and snippet belong together.
	it.box = container.NewBorder(nil, nil, it.pin, container.NewHBox(it.state, it.menu), text)
	return widget.NewSimpleRenderer(it.box)
}
