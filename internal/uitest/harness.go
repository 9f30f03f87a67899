package uitest

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/models"
	"github.com/churon/churon/app/remote"
	"github.com/churon/churon/app/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/internal/testdata"
	"github.com/churon/churon/models/discover"
	"github.com/churon/churon/models/header"
	"github.com/churon/churon/ui/core"
	"github.com/churon/churon/ui/locale"
)

// WaitLimit bounds every wait; generous for -race and slow machines.
const WaitLimit = 2 * time.Minute

// Harness is the window over a real session manager and database, in
// Fyne's headless test app. Updates from the session are queued and run
// on the test's goroutine by Wait, so the test and the widgets never race.
type Harness struct {
	T  *testing.T
	A  fyne.App
	W  fyne.Window
	M  *session.Manager
	St *store.Store
	// Models is the model service the window is given.
	Models *models.Service
	// Core is what the window's screens share, once it is open.
	Core *core.Window

	mu    sync.Mutex
	queue []func()
}

// Options change the harness's session.
type Options struct {
	// Settings are the new chats' settings; nil: Quick(24).
	Settings *api.Settings
	// Disk keeps KV snapshots; nil: none.
	Disk session.DiskCache
	// Models configures the model service (nil: the app's own folders
	// and hub).
	Models *Library
	// Remotes are the connections to remote engines the session and the
	// window use (nil: none).
	Remotes *remote.Connections
	// OnStep sees every step of the session's batch, on the batch's
	// goroutine (session.Options.OnStep): a test may hold the answers
	// there while it checks what the window did meanwhile.
	OnStep func(session.StepInfo)
}

// Connections is a connections file in the test's temporary folder
// holding cs, each with the API key key ("" for none): the remote engines
// for Options.Remotes.
func Connections(t *testing.T, key string, cs ...remote.Connection) *remote.Connections {
	t.Helper()
	conns := remote.Open(filepath.Join(t.TempDir(), remote.FileName), nil)
	for _, c := range cs {
		if _, err := conns.Add(c, key, false); err != nil {
			t.Fatal(err)
		}
	}
	return conns
}

// New makes the app, the database, the session manager and the window;
// open builds the window's content on them, with Post as its way onto
// Fyne's goroutine, and returns what closes it.
func New(t *testing.T, o Options, open func(h *Harness) (closeWindow func())) *Harness {
	t.Helper()
	if _, err := locale.Set("en"); err != nil {
		t.Fatal(err)
	}
	h := &Harness{T: t}
	h.A = test.NewTempApp(t)
	h.A.Settings().SetTheme(core.NewTheme())
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "churon.db"))
	if err != nil {
		t.Fatal(err)
	}
	h.St = st
	set := Quick(24)
	if o.Settings != nil {
		set = *o.Settings
	}
	sopt := session.Options{Threads: 2, Defaults: &set, Disk: o.Disk, OnStep: o.OnStep}
	if o.Remotes != nil {
		sopt.Remote = o.Remotes
	}
	h.M = session.New(st, sopt)
	var mo models.Options
	if o.Models != nil {
		mo = *o.Models
	}
	mo.Headers, mo.Settings = header.Reader{}, h.M
	h.Models = models.New(mo)
	h.W = test.NewWindow(nil)
	h.W.Resize(fyne.NewSize(1100, 760))
	closeWindow := open(h)
	t.Cleanup(func() {
		closeWindow()
		h.Models.Close()
		// Close waits for the bridge to take the last events; keep
		// running what it posts meanwhile.
		done := make(chan struct{})
		go func() { h.M.Close(); close(done) }()
		for {
			select {
			case <-done:
				h.Drain()
				st.Close()
				return
			case <-time.After(5 * time.Millisecond):
				h.Drain()
			}
		}
	})
	return h
}

// Screens are the window's parts as package ui hands them out (see
// ui.UI.Screens): the shared core, and the screens as they are now, for
// a screen's tests to assert to their own types (*chat.View…).
type Screens struct {
	Core                            *core.Window
	Chat, Composer, Models, Compare any
	// Entry is the message box, and EntryText what it holds.
	Entry     fyne.Focusable
	EntryText func() string
	// ChatContent is the chat's view, ComposerContent the message box
	// with its button.
	ChatContent, ComposerContent fyne.CanvasObject
}

// Open builds the whole window (package ui) on h and returns its screens
// and what closes it. Package uitest/uiwin sets it.
var Open func(h *Harness, o Options) (screens func() Screens, closeWindow func())

// Window is a Harness with the whole window open, for a screen's own
// tests: the screen package imports uitest/uiwin from an external test
// file.
type Window struct {
	*Harness
	// Screens are the window's screens as they are now.
	Screens func() Screens
}

// NewWindow opens the whole window in a new Harness.
func NewWindow(t *testing.T, o Options) *Window {
	t.Helper()
	if Open == nil {
		t.Fatal("uitest.Open is not set: import github.com/churon/churon/internal/uitest/uiwin from a test file of package x_test")
	}
	w := &Window{}
	w.Harness = New(t, o, func(h *Harness) func() {
		screens, closeWindow := Open(h, o)
		w.Screens = screens
		h.Core = screens().Core
		return closeWindow
	})
	return w
}

// Send types text into the message box and presses Enter.
func (w *Window) Send(text string) {
	w.T.Helper()
	s := w.Screens()
	w.TypeAndSend(s.Entry, s.EntryText, text)
}

// NoModels is a search for model files that finds none.
func NoModels(context.Context) ([]discover.Model, error) { return nil, nil }

// Quick is greedy sampling with a short answer: fast and repeatable.
func Quick(maxTokens int) api.Settings {
	s := session.DefaultSettings()
	s.Temperature, s.TopK, s.TopP, s.MinP, s.RepeatPenalty = 0, 0, 1, 0, 1
	s.Seed, s.MaxTokens, s.Context = 1, maxTokens, 512
	return s
}

// Post queues f for the test's goroutine: the window's Do.
func (h *Harness) Post(f func()) {
	h.mu.Lock()
	h.queue = append(h.queue, f)
	h.mu.Unlock()
}

// Drain runs what the bridge and timers posted, in order.
func (h *Harness) Drain() {
	for {
		h.mu.Lock()
		q := h.queue
		h.queue = nil
		h.mu.Unlock()
		if len(q) == 0 {
			return
		}
		for _, f := range q {
			f()
		}
	}
}

// Wait runs posted updates, and the window's queued commands, until cond
// holds.
func (h *Harness) Wait(what string, cond func() bool) {
	h.T.Helper()
	deadline := time.Now().Add(WaitLimit)
	for {
		h.Settle()
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			h.T.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// StoriesPath is stories260K.gguf in the shared test data.
func StoriesPath(t *testing.T) string { return testdata.Stories260K(t) }

// Load loads a model as the model menu does.
func (h *Harness) Load(path string) {
	h.T.Helper()
	h.Core.LoadModel(path)
	h.Wait("the model to load", func() bool { return h.Core.Model != nil && h.Core.Model.Path == path })
}

// TypeAndSend types text into the message box e (whose text is text())
// and presses Enter.
func (h *Harness) TypeAndSend(e fyne.Focusable, text func() string, s string) {
	h.T.Helper()
	c := h.Core
	h.W.Canvas().Focus(e)
	test.Type(e, s)
	conv := c.Conv
	before := h.Stored(conv)
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	// Enter sends after a short wait for the input method. A short answer
	// can start and finish within one drain, so "generating" alone may
	// never be seen: the stored message says it was sent.
	h.Wait("the message to be sent", func() bool {
		return text() == "" && c.Conv != 0 && (conv == 0 || c.Generating[c.Conv] || h.Stored(conv) > before)
	})
}

// Stored counts the messages the store holds for conv (0 for none).
func (h *Harness) Stored(conv int64) int {
	if conv == 0 {
		return 0
	}
	ms, err := h.M.Messages(conv)
	if err != nil {
		h.T.Fatal(err)
	}
	return len(ms)
}

// StoredChat makes a conversation titled title through the session, as
// New chat does, and writes msgs into it in order straight into the store
// (no model needed). It returns the conversation's id and the messages as
// stored.
func (h *Harness) StoredChat(title string, msgs ...store.Message) (int64, []store.Message) {
	h.T.Helper()
	c, err := h.M.NewConversation(title)
	if err != nil {
		h.T.Fatal(err)
	}
	stored := make([]store.Message, len(msgs))
	for i, m := range msgs {
		stored[i] = h.AddMessage(c.ID, m)
	}
	return c.ID, stored
}

// AddMessage writes m into conversation conv straight into the store and
// returns it as stored.
func (h *Harness) AddMessage(conv int64, m store.Message) store.Message {
	h.T.Helper()
	m.ConversationID = conv
	got, err := h.St.AddMessage(context.Background(), m)
	if err != nil {
		h.T.Fatal(err)
	}
	return got
}

// Idle reports whether the chat shown is not answering.
func (h *Harness) Idle() bool { return !h.Core.Generating[h.Core.Conv] }

// OpenRow taps the row of the sidebar's list that shows title, as a
// person opens a chat there, once the list shows it.
func (h *Harness) OpenRow(title string) {
	h.T.Helper()
	var row fyne.Tappable
	h.Wait("the row "+title, func() bool { row = listRow(h.W, title); return row != nil })
	test.Tap(row)
	h.Settle()
}

// Settle runs the window's queued commands (ui/core.Commands) and applies
// what they report, until nothing more is queued: the window as a person
// sees it once the disk has answered.
func (h *Harness) Settle() {
	for range 8 {
		if h.Core != nil && h.Core.Commands != nil {
			h.Core.Commands.Sync()
			h.Core.Reads.Sync()
		}
		h.mu.Lock()
		n := len(h.queue)
		h.mu.Unlock()
		if n == 0 {
			return
		}
		h.Drain()
	}
}

// saysTitle reports whether o is a label saying title, or a text that
// shows it (a sidebar row's title: it tells its whole text, the one it
// draws may be cut).
func saysTitle(o fyne.CanvasObject, title string) bool {
	switch o := o.(type) {
	case *widget.Label:
		return o.Text == title
	case interface{ Text() string }:
		return o.Text() == title
	}
	return false
}

// listRow is the innermost thing to tap (not a button) in the window's
// list that holds a label or text saying title (saysTitle).
func listRow(w fyne.Window, title string) fyne.Tappable {
	list, ok := Find[*widget.List](w.Content(), nil)
	if !ok {
		return nil
	}
	var row fyne.Tappable
	Walk(list, func(o fyne.CanvasObject) bool {
		_, button := o.(*widget.Button)
		if t, ok := o.(fyne.Tappable); ok && !button {
			if _, ok := Find(o, func(l fyne.CanvasObject) bool { return saysTitle(l, title) }); ok {
				row = t // a row within a row is the one that opens it
			}
		}
		return true
	})
	return row
}
