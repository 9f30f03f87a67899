package ui

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/internal/testdata"
	"github.com/churon/churon/models/discover"
	"github.com/churon/churon/ui/fontcheck"
	"github.com/churon/churon/ui/locale"
)

// waitLimit bounds every wait; generous for -race and slow machines.
const waitLimit = 2 * time.Minute

// harness is the real window content over a real session manager and
// database, in Fyne's headless test app. Updates from the session are
// queued and run on the test's goroutine by wait, so the test and the
// widgets never race.
type harness struct {
	t  *testing.T
	a  fyne.App
	w  fyne.Window
	m  *session.Manager
	st *store.Store
	u  *UI

	mu    sync.Mutex
	queue []func()
}

type harnessOptions struct {
	settings  *session.Settings
	discover  func(context.Context) ([]discover.Model, error)
	fontCheck func() (fontcheck.Result, error)
	models    ModelsOptions
	disk      session.DiskCache // KV snapshots; nil: none
}

func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	if _, err := locale.Set("en"); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t}
	h.a = test.NewTempApp(t)
	h.a.Settings().SetTheme(NewTheme())
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "churon.db"))
	if err != nil {
		t.Fatal(err)
	}
	h.st = st
	set := quick(24)
	if o.settings != nil {
		set = *o.settings
	}
	h.m = session.New(st, session.Options{Threads: 2, Defaults: &set, Disk: o.disk})
	if o.discover == nil {
		o.discover = func(context.Context) ([]discover.Model, error) { return nil, nil }
	}
	if o.fontCheck == nil {
		o.fontCheck = func() (fontcheck.Result, error) { return fontcheck.Result{Covered: true}, nil }
	}
	h.w = test.NewWindow(nil)
	h.w.Resize(fyne.NewSize(1100, 760))
	h.u = New(h.a, h.w, Options{Session: h.m, Do: h.post, Discover: o.discover, FontCheck: o.fontCheck, Models: o.models})
	t.Cleanup(func() {
		h.u.Close()
		// Close waits for the bridge to take the last events; keep
		// running what it posts meanwhile.
		done := make(chan struct{})
		go func() { h.m.Close(); close(done) }()
		for {
			select {
			case <-done:
				h.drain()
				st.Close()
				return
			case <-time.After(5 * time.Millisecond):
				h.drain()
			}
		}
	})
	return h
}

// quick is greedy sampling with a short answer: fast and repeatable.
func quick(maxTokens int) session.Settings {
	s := session.DefaultSettings()
	s.Temperature, s.TopK, s.TopP, s.MinP, s.RepeatPenalty = 0, 0, 1, 0, 1
	s.Seed, s.MaxTokens, s.Context = 1, maxTokens, 512
	return s
}

func (h *harness) post(f func()) {
	h.mu.Lock()
	h.queue = append(h.queue, f)
	h.mu.Unlock()
}

// drain runs what the bridge and timers posted, in order.
func (h *harness) drain() {
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

// wait runs posted updates until cond holds.
func (h *harness) wait(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		h.drain()
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func storiesPath(t *testing.T) string {
	return filepath.Join(testdata.Dir(t), "models", "stories260K.gguf")
}

// load loads a model through the picker, as the menu does.
func (h *harness) load(path string) {
	h.t.Helper()
	h.u.picker.load(path)
	h.wait("the model to load", func() bool { return h.u.model != nil && h.u.model.Path == path })
}

// typeAndSend types text into the message box and presses Enter.
func (h *harness) typeAndSend(text string) {
	h.t.Helper()
	e := h.u.composer.entry
	h.w.Canvas().Focus(e)
	test.Type(e, text)
	conv := h.u.conv
	before := h.stored(conv)
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	// Enter sends after IMESettle. A short answer can start and finish
	// within one drain, so "generating" alone may never be seen: the
	// stored message says it was sent.
	h.wait("the message to be sent", func() bool {
		return e.Text == "" && h.u.conv != 0 && (conv == 0 || h.u.generating[h.u.conv] || h.stored(conv) > before)
	})
}

// stored counts the messages the store holds for conv (0 for none).
func (h *harness) stored(conv int64) int {
	if conv == 0 {
		return 0
	}
	ms, err := h.m.Messages(conv)
	if err != nil {
		h.t.Fatal(err)
	}
	return len(ms)
}

// last returns the last message view of the chat shown.
func (h *harness) last() *messageView {
	v := h.u.chat.views
	if len(v) == 0 {
		return nil
	}
	return v[len(v)-1]
}

func (h *harness) idle() bool { return !h.u.generating[h.u.conv] }

// sidebarTitles lists the rows of the sidebar.
func (h *harness) sidebarTitles() []string {
	var out []string
	for _, r := range h.u.side.rows {
		out = append(out, r.conv.Title)
	}
	return out
}

// text collects the text of every label and rich text under o.
func text(o fyne.CanvasObject) string {
	var b strings.Builder
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch o := o.(type) {
		case *widget.Label:
			b.WriteString(o.Text + "\n")
		case *widget.RichText:
			b.WriteString(o.String() + "\n")
		case *widget.Button:
			b.WriteString("[" + o.Text + "]\n")
		case *fyne.Container:
			for _, c := range o.Objects {
				walk(c)
			}
		case fyne.Widget:
			r := test.WidgetRenderer(o)
			for _, c := range r.Objects() {
				walk(c)
			}
		}
	}
	walk(o)
	return b.String()
}
