package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/session"
	"github.com/churon/churon/models/discover"
	"github.com/churon/churon/ui/fontcheck"
	"github.com/churon/churon/ui/locale"
)

// Options are what the window needs from the rest of the program.
type Options struct {
	// Session runs the conversations. Required.
	Session *session.Manager
	// Do runs f on Fyne's goroutine; nil means fyne.Do. Tests pass their
	// own to run updates on the test's goroutine.
	Do func(f func())
	// Discover finds GGUF files other apps keep; nil means the usual
	// places (discover.DefaultLocations).
	Discover func(context.Context) ([]discover.Model, error)
	// FontCheck says whether a font can show Hangul; nil means
	// fontcheck.Hangul.
	FontCheck func() (fontcheck.Result, error)
	// Models configures the Models page (models.go); the zero value is
	// the app's own folders and huggingface.co.
	Models ModelsOptions
}

// modelInfo is what the window shows of a loaded model (copied from the
// session's ModelLoaded event).
type modelInfo struct {
	Path, Name, Arch, Quant, Backend string
	Threads, Context                 int
	Params, FileBytes, WeightBytes   int64
	DeviceNotes                      []string // why an accelerator is not used, a line each
}

// UI is the window's content and state. Everything in it is used from
// Fyne's goroutine only; other goroutines reach it through do.
type UI struct {
	app fyne.App
	win fyne.Window
	s   *session.Manager
	do  func(func())
	opt Options

	ctx    context.Context
	cancel context.CancelFunc
	closed atomic.Bool

	conv         int64 // conversation shown; 0 = a new chat not yet stored
	model        *modelInfo
	loadingPath  string
	loadProgress float64
	generating   map[int64]bool
	queued       map[int64]int
	// Settings chosen for the new chat before its first message.
	pendingSettings *session.Settings
	hangul          *fontcheck.Result
	hangulDismissed bool

	side     *sidebar
	chat     *chatView
	composer *composer
	picker   *modelPicker
	status   *statusLine
	welcome  *welcomeView
	notice   *fyne.Container // banners at the top (fonts, errors)
	center   *fyne.Container // chat or welcome

	mdl         *modelsState // catalog, hub, library and downloads (models.go)
	modelsPage  *modelsPage  // made when first shown, dropped on rebuild
	modelsShown bool

	comparePage  *comparePage // the Compare page (compare_page.go), made when first shown
	compareShown bool
}

// New builds the window's content into w and starts applying the
// session's events. Call Close when the window closes.
func New(a fyne.App, w fyne.Window, opt Options) *UI {
	if opt.Do == nil {
		opt.Do = fyne.Do
	}
	if opt.Discover == nil {
		opt.Discover = func(ctx context.Context) ([]discover.Model, error) {
			return discover.Find(ctx, discover.DefaultLocations())
		}
	}
	if opt.FontCheck == nil {
		opt.FontCheck = fontcheck.Hangul
	}
	u := &UI{app: a, win: w, s: opt.Session, opt: opt,
		generating: map[int64]bool{}, queued: map[int64]int{}}
	// After Close (the window is gone, the session still winds down and
	// sends events) updates are dropped: Fyne would run them on the
	// caller's goroutine once its loop has ended.
	u.do = func(f func()) {
		opt.Do(func() {
			if !u.closed.Load() {
				f()
			}
		})
	}
	u.ctx, u.cancel = context.WithCancel(context.Background())
	if code, ok := u.setting(settingLanguage); ok {
		_, _ = locale.Set(code)
	} else {
		_, _ = locale.Set("")
	}
	u.mdl = newModelsState(u, opt.Models)
	u.build()
	u.picker.refreshLibrary()   // the model menu lists the library from its first opening
	w.SetOnDropped(u.onDropped) // a JSON export dropped on the window is imported (export.go)
	if st, err := u.s.Status(); err == nil {
		u.applyStatus(st)
	}
	b := &bridge{events: u.s.Events(), do: u.do, apply: u.apply}
	go b.run()
	go u.checkFonts()
	return u
}

// Close stops background work started by the window (not the session)
// and stops applying the session's events. Safe from any goroutine.
func (u *UI) Close() {
	u.closed.Store(true)
	u.cancel()
	u.mdl.close() // downloads stop; they resume on the next run
}

// build makes every screen and lays the window out. It runs again when
// the language changes, since widgets keep the text they were made with.
func (u *UI) build() {
	u.side = newSidebar(u)
	u.chat = newChatView(u)
	u.composer = newComposer(u)
	u.picker = newModelPicker(u)
	u.status = newStatusLine(u)
	u.welcome = newWelcomeView(u)
	u.modelsPage = nil
	u.comparePage = u.comparePage.rebuilt() // keeps the comparison it showed
	u.notice = container.NewVBox()
	u.center = container.NewStack()

	settingsBtn := widget.NewButtonWithIcon("", iconSettings(), u.onSettings)
	settingsBtn.Importance = widget.LowImportance
	top := container.NewBorder(nil, nil, u.picker.content, container.NewHBox(newCompareButton(u), settingsBtn))
	main := container.NewBorder(
		container.NewVBox(top, widget.NewSeparator(), u.notice),
		u.composer.content, nil, nil, u.center)
	split := container.NewHSplit(u.side.content, main)
	split.Offset = 0.24
	root := container.NewBorder(nil, container.NewVBox(widget.NewSeparator(), u.status.content), nil, nil, split)
	u.win.SetContent(root)
	u.installShortcuts()
	u.side.reload()
	u.chat.show(u.conv)
	u.refresh()
	if u.hangul != nil {
		u.showHangulNotice()
	}
}

// refresh brings every screen in line with the state.
func (u *UI) refresh() {
	u.picker.refresh()
	u.composer.refresh()
	u.status.refresh()
	u.chat.refreshEmpty()
	u.showCenter()
}

// showCenter shows the welcome view while there is nothing else to show:
// no model and an empty new chat.
func (u *UI) showCenter() {
	var want fyne.CanvasObject = u.chat.content
	if page, ok := u.modelsCenter(); ok {
		want = page
	} else if page, ok := u.compareCenter(); ok {
		want = page
	} else if u.model == nil && u.loadingPath == "" && u.conv == 0 {
		want = u.welcome.content
		u.welcome.start()
	}
	if len(u.center.Objects) != 1 || u.center.Objects[0] != want {
		if want == u.welcome.content {
			u.welcome.showRecent()
		}
		u.center.Objects = []fyne.CanvasObject{want}
		u.center.Refresh()
	}
}

// apply changes the widgets after one session event. Runs on Fyne's
// goroutine.
func (u *UI) apply(ev session.Event) {
	switch ev := ev.(type) {
	case session.Token:
		u.chat.onToken(ev)
		u.status.onToken(ev)
	case session.Stats:
		u.chat.onStats(ev)
	case session.CacheState:
		u.status.onCache(ev)
	case session.Done:
		delete(u.generating, ev.Conv)
		delete(u.queued, ev.Conv)
		u.chat.onDone(ev)
		if ev.Reason == session.ReasonError && ev.Err != nil {
			u.showError(ev.Err)
		}
		u.status.onDone()
		u.refresh()
	case session.Queued:
		u.queued[ev.Conv] = ev.Position
		u.chat.onQueued(ev)
	case session.Error:
		u.showError(fmt.Errorf("%s: %w", ev.Op, ev.Err))
	case session.DeviceFallback:
		u.bannerDetails(lang.X("error.gpu_fallback", "The GPU stopped working during an answer. Churon finished the answer on the CPU and runs this model on the CPU from now on; load the model again to try the GPU again."), ev.Err.Error())
	case session.ModelLoading:
		u.loadingPath, u.loadProgress = ev.Path, ev.Progress
		u.refresh()
	case session.ModelLoaded:
		in := ev.Info
		u.model = &modelInfo{Path: in.Path, Name: in.Name, Arch: in.Architecture, Quant: in.FileType,
			Backend: in.Backend, Threads: in.Threads, Context: in.ContextLength,
			Params: in.Parameters, FileBytes: in.FileBytes, WeightBytes: in.WeightBytes, DeviceNotes: in.DeviceNotes}
		if u.loadingPath == in.Path {
			u.loadingPath = ""
		}
		if !session.IsDemo(in.Path) { // the menu always offers the demo
			u.picker.remember(in.Path)
		}
		u.refresh()
	case session.ModelUnloaded:
		if u.model != nil && u.model.Path == ev.Path {
			u.model = nil
		}
		if u.loadingPath == ev.Path {
			u.loadingPath = ""
		}
		u.refresh()
	case session.MessageAdded:
		if ev.Message.ConversationID == u.conv {
			u.chat.onMessageAdded(ev.Message)
		}
	case session.MessagesChanged:
		if ev.Conv == u.conv {
			u.chat.show(u.conv)
		}
	case session.ConversationChanged:
		if ev.Deleted && ev.Conv == u.conv {
			u.openConversation(0)
		}
		u.side.reload()
	}
}

// applyStatus takes the state of a manager that was busy before the
// window opened.
func (u *UI) applyStatus(st session.Status) {
	if st.Model != nil {
		u.apply(session.ModelLoaded{Info: *st.Model})
	}
	u.loadingPath = st.Loading
	if st.Generating != 0 {
		u.generating[st.Generating] = true
	}
	for i, c := range st.Queued {
		u.generating[c] = true
		u.queued[c] = i + 1
	}
	u.refresh()
}

// openConversation shows a conversation (0: a new, empty chat).
func (u *UI) openConversation(id int64) {
	if u.chat.editing() && id != u.conv {
		u.chat.cancelEdit()
	}
	u.conv = id
	u.compareShown = false // a chat was asked for: show it
	if id != 0 {
		u.pendingSettings = nil
	}
	u.chat.show(id)
	u.side.selectConv(id)
	u.refresh()
}

func (u *UI) onNewChat() {
	u.openConversation(0)
	u.win.Canvas().Focus(u.composer.entry)
}

func (u *UI) onSearch() { u.side.focusSearch() }

func (u *UI) onStop() {
	if u.conv != 0 && u.generating[u.conv] {
		if err := u.s.Stop(u.conv); err != nil {
			u.showError(err)
		}
	}
}

// send sends text in the conversation shown, creating it first when it is
// a new chat.
func (u *UI) send(text string) bool {
	if strings.TrimSpace(text) == "" || u.generating[u.conv] {
		return false
	}
	if u.conv == 0 {
		c, err := u.s.NewConversation("")
		if err != nil {
			u.showError(err)
			return false
		}
		if u.pendingSettings != nil {
			if err := u.s.SetSettings(c.ID, *u.pendingSettings); err != nil {
				u.showError(err)
			}
			u.pendingSettings = nil
		}
		u.conv = c.ID
		u.chat.show(c.ID)
	}
	if _, err := u.s.Send(u.conv, text); err != nil {
		u.showError(err)
		return false
	}
	u.generating[u.conv] = true
	u.side.selectConv(u.conv)
	u.noteText(text)
	u.refresh()
	return true
}

// showError tells the person what went wrong, in their language where the
// error is one the UI knows.
func (u *UI) showError(err error) {
	msg := err.Error()
	switch {
	case errors.Is(err, session.ErrNoModel):
		msg = lang.X("error.no_model", "No model is loaded. Open a GGUF file first.")
	case errors.Is(err, session.ErrTooLong):
		msg = lang.X("error.too_long", "This conversation no longer fits in the context. Raise the context length in the chat settings, or start a new chat.")
	case errors.Is(err, session.ErrBusy):
		msg = lang.X("error.busy", "This chat is still answering. Stop it first.")
	}
	u.banner(msg, true)
}

// bannerDetails shows a message for people, with the technical reason
// behind a Details button.
func (u *UI) bannerDetails(msg, details string) {
	more := widget.NewLabel(details)
	more.Wrapping = fyne.TextWrapWord
	more.Importance = widget.LowImportance
	more.Hide()
	toggle := widget.NewButton(lang.X("error.details", "Details"), func() {
		if more.Visible() {
			more.Hide()
		} else {
			more.Show()
		}
	})
	toggle.Importance = widget.LowImportance
	u.addBanner(container.NewVBox(bannerLabel(msg, true), container.NewHBox(toggle), more))
}

// banner shows a message at the top of the chat until dismissed.
func (u *UI) banner(msg string, isError bool) { u.addBanner(bannerLabel(msg, isError)) }

func bannerLabel(msg string, isError bool) *widget.Label {
	label := widget.NewLabel(msg)
	label.Wrapping = fyne.TextWrapWord
	if isError {
		label.Importance = widget.DangerImportance
	}
	return label
}

// addBanner shows content at the top of the chat with a button that
// dismisses it.
func (u *UI) addBanner(content fyne.CanvasObject) {
	var bar *fyne.Container
	closeBtn := widget.NewButtonWithIcon("", iconClose(), func() {
		u.notice.Remove(bar)
	})
	closeBtn.Importance = widget.LowImportance
	bar = container.NewBorder(nil, nil, nil, closeBtn, content)
	// Keep a few at most: the newest matter.
	if len(u.notice.Objects) >= 3 {
		u.notice.Remove(u.notice.Objects[0])
	}
	u.notice.Add(bar)
}

// checkFonts runs the Hangul font check off Fyne's goroutine (the first
// scan of the system's fonts can take a second).
func (u *UI) checkFonts() {
	res, err := u.opt.FontCheck()
	if err != nil {
		return // no answer is better than a false alarm
	}
	u.do(func() {
		u.hangul = &res
		if locale.Current() == "ko" && !res.Covered {
			// A Korean UI would be unreadable: show it in English until a
			// font is installed (the setting itself is kept).
			if _, err := locale.Set("en"); err == nil {
				u.build()
			}
			u.showHangulNotice()
		}
	})
}

// noteText is called with text the window shows or the person typed: if
// it holds Hangul and no font can draw it, say so.
func (u *UI) noteText(s string) {
	if u.hangul == nil || u.hangul.Covered || u.hangulDismissed {
		return
	}
	for _, r := range s {
		if unicode.Is(unicode.Hangul, r) {
			u.showHangulNotice()
			return
		}
	}
}

func (u *UI) showHangulNotice() {
	if u.hangul == nil || u.hangul.Covered || u.hangulDismissed {
		return
	}
	u.hangulDismissed = true // shown once per run
	// Not translated: without a Hangul font the Korean text could not be
	// read, which is the point of the notice.
	u.banner(hangulNotice, false)
}

// hangulNotice is shown when no font covers Hangul.
const hangulNotice = "No installed font can show Korean (Hangul): Korean text would appear as empty boxes, so the window is in English for now. " +
	"Install a Korean font — on Debian or Ubuntu: sudo apt install fonts-noto-cjk (or fonts-nanum) — then restart Churon."

// Settings keys in the store's settings table.
const (
	settingLanguage = "ui.language"
	settingRecent   = "ui.recent_models"
)

func (u *UI) setting(key string) (string, bool) {
	v, ok, err := u.s.Store().Setting(context.Background(), key)
	if err != nil || !ok {
		return "", false
	}
	return v, true
}

func (u *UI) setSetting(key, value string) {
	if err := u.s.Store().SetSetting(context.Background(), key, value); err != nil {
		u.showError(err)
	}
}

func (u *UI) recentModels() []string {
	v, ok := u.setting(settingRecent)
	if !ok {
		return nil
	}
	var paths []string
	if json.Unmarshal([]byte(v), &paths) != nil {
		return nil
	}
	return paths
}

// setLanguage switches the UI language and rebuilds the window.
func (u *UI) setLanguage(code string) {
	got, err := locale.Set(code)
	if err != nil {
		u.showError(err)
		return
	}
	_ = got
	u.setSetting(settingLanguage, code)
	u.build()
}

// Shortcuts: Ctrl+N (⌘N) new chat, Ctrl+F search, Esc stop.
var (
	shortcutNew    = &desktop.CustomShortcut{KeyName: fyne.KeyN, Modifier: fyne.KeyModifierShortcutDefault}
	shortcutSearch = &desktop.CustomShortcut{KeyName: fyne.KeyF, Modifier: fyne.KeyModifierShortcutDefault}
)

func (u *UI) installShortcuts() {
	c := u.win.Canvas()
	c.AddShortcut(shortcutNew, func(fyne.Shortcut) { u.onNewChat() })
	c.AddShortcut(shortcutSearch, func(fyne.Shortcut) { u.onSearch() })
	c.SetOnTypedKey(func(e *fyne.KeyEvent) {
		if e.Name == fyne.KeyEscape {
			u.onStop()
		}
	})
}

// handleShortcut runs an app shortcut typed while an entry has the focus
// (Fyne gives the focused widget every shortcut first). It reports whether
// the shortcut was the app's.
func (u *UI) handleShortcut(s fyne.Shortcut) bool {
	switch s.ShortcutName() {
	case shortcutNew.ShortcutName():
		u.onNewChat()
	case shortcutSearch.ShortcutName():
		u.onSearch()
	default:
		return false
	}
	return true
}

func (u *UI) onSettings() { showSettings(u) }

// modelLabel is a short name for a model file.
func modelLabel(path string) string {
	if session.IsDemo(path) {
		return lang.X("model.demo", "Demo: stories260K (built in)")
	}
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// onDemo loads the built-in demo model and opens a chat with it that
// says what it is.
func (u *UI) onDemo() {
	c, err := u.s.StartDemo()
	if err != nil {
		u.showError(err)
		return
	}
	if u.model == nil || !session.IsDemo(u.model.Path) {
		u.loadingPath, u.loadProgress = session.DemoPath, 0
	}
	u.openConversation(c.ID)
	u.win.Canvas().Focus(u.composer.entry)
}

// confirm asks a yes/no question.
func (u *UI) confirm(title, msg string, f func()) {
	dialog.ShowConfirm(title, msg, func(ok bool) {
		if ok {
			f()
		}
	}, u.win)
}
