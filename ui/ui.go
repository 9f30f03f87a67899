package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	comparesvc "github.com/churon/churon/app/api/compare"
	apiserve "github.com/churon/churon/app/api/serve"
	"github.com/churon/churon/app/api/session"
	appmodels "github.com/churon/churon/app/models"
	"github.com/churon/churon/app/remote"
	"github.com/churon/churon/models/discover"
	"github.com/churon/churon/ui/chat"
	"github.com/churon/churon/ui/compare"
	"github.com/churon/churon/ui/core"
	"github.com/churon/churon/ui/locale"
	"github.com/churon/churon/ui/models"
	"github.com/churon/churon/ui/settings"
)

// Options are what the window needs from the rest of the program.
type Options struct {
	// Session runs the conversations, Compare the comparisons, Models the
	// model library and downloads: the services the window sends its
	// commands to (app/session's Manager, app/compare's Runner and
	// app/models for the app). Required; the caller closes them.
	Session session.Service
	Compare comparesvc.Service
	Models  *appmodels.Service
	// Server is the API server the settings turn on (nil: none).
	Server apiserve.Controller
	// Remotes are the connections to remote engines, which Settings adds
	// and the model menu lists (nil: none in this window).
	Remotes *remote.Connections
	// Do runs f on Fyne's goroutine; nil means fyne.Do. Tests pass their
	// own to run updates on the test's goroutine.
	Do func(f func())
	// Discover finds GGUF files other apps keep; nil means the usual
	// places (discover.DefaultLocations).
	Discover func(context.Context) ([]discover.Model, error)
}

// UI is the window's content and state. Everything in it is used from
// Fyne's goroutine only; other goroutines reach it through w.Do.
type UI struct {
	// w is what the screens share: the app, the window, the session, the
	// state of the window, and the hooks into this shell.
	w   *core.Window
	opt Options

	cancel context.CancelFunc
	closed atomic.Bool

	queued map[int64]int
	// sending holds, for each conversation whose Send is on its way to
	// the session (0: a new chat not made yet), whether Stop was pressed
	// meanwhile: the answer is stopped once the session has it.
	sending map[int64]*atomic.Bool
	// menuModels are the library's models for the model menu (model.go),
	// listed in the background.
	menuModels []string
	// menuRemotes are the connections and their models, for the model
	// menu, read in the background.
	menuRemotes []remote.Connection

	side     *sidebar
	chat     *chat.View
	composer *chat.Composer
	picker   *modelPicker
	status   *statusLine
	welcome  *welcomeView
	center   *fyne.Container // chat or welcome

	mdl     *models.State   // catalog, hub, library and downloads, and the Models page
	compare *compare.Screen // the Compare page
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
	u := &UI{opt: opt, queued: map[int64]int{}, sending: map[int64]*atomic.Bool{}}
	u.w = &core.Window{App: a, Win: w, Session: opt.Session, Compare: opt.Compare, Models: opt.Models, Server: opt.Server, Remotes: opt.Remotes, Generating: map[int64]bool{},
		Refresh: u.refresh, HandleShortcut: u.handleShortcut, SetLanguage: u.setLanguage}
	// After Close (the window is gone, the session still winds down and
	// sends events) updates are dropped: Fyne would run them on the
	// caller's goroutine once its loop has ended.
	u.w.Do = func(f func()) {
		opt.Do(func() {
			if !u.closed.Load() {
				f()
			}
		})
	}
	u.w.Ctx, u.cancel = context.WithCancel(context.Background())
	u.w.Commands, u.w.Reads = core.NewCommands(u.w.Do), core.NewCommands(u.w.Do)
	if code, ok := u.w.Setting(core.SettingLanguage); ok {
		_, _ = locale.Set(code)
	} else {
		_, _ = locale.Set("")
	}
	choice, _ := u.w.Setting(core.SettingTheme)
	core.SetTheme(a, choice)
	u.mdl = models.NewState(u.w, opt.Models)
	u.compare = compare.New(u.w, u.mdl)
	u.mdl.OnLibrary(func() { u.picker.refreshLibrary() }) // a new download appears in the model menu
	u.build()
	u.picker.refreshLibrary()   // the model menu lists the library from its first opening
	w.SetOnDropped(u.onDropped) // a JSON export dropped on the window is imported (export.go)
	if st, err := u.w.Session.Status(); err == nil {
		u.applyStatus(st)
	}
	u.picker.reloadLast()
	b := &bridge{events: u.w.Session.Events(), do: u.w.Do, apply: u.apply}
	go b.run()
	return u
}

// Close stops background work started by the window (not the session)
// and stops applying the session's events. Safe from any goroutine.
func (u *UI) Close() {
	u.closed.Store(true)
	u.cancel()
	u.w.Commands.Close()
	u.w.Reads.Close()
}

// build makes every screen and lays the window out. It runs again when
// the language changes, since widgets keep the text they were made with.
func (u *UI) build() {
	u.side = newSidebar(u)
	u.chat = chat.NewView(u.w, u.convShown)
	u.composer = chat.NewComposer(u.w, u.send, u.onStop)
	u.picker = newModelPicker(u)
	u.w.RemotesChanged = u.picker.refreshRemotes
	u.picker.refreshRemotes()
	u.status = newStatusLine(u)
	u.welcome = newWelcomeView(u)
	u.mdl.DropPage()
	u.compare.Rebuild() // keeps the comparison it showed
	u.w.Notice = container.NewVBox()
	u.center = container.NewStack()

	settingsBtn := widget.NewButtonWithIcon("", iconSettings(), u.onSettings)
	settingsBtn.Importance = widget.LowImportance
	top := container.NewBorder(nil, nil, u.picker.content, container.NewHBox(newCompareButton(u), settingsBtn))
	// Not a Border: it would ask the banners their height before giving
	// them their width, and a banner that wraps would cover the page.
	main := container.New(&core.Column{Fill: 3, Gap: theme.Padding()}, top, widget.NewSeparator(), u.w.Notice, u.center, u.composer.Content())
	split := container.NewHSplit(u.side.content, main)
	split.Offset = 0.24
	root := container.NewBorder(nil, container.NewVBox(widget.NewSeparator(), u.status.content), nil, nil, split)
	u.w.Win.SetContent(root)
	u.installShortcuts()
	u.side.reload()
	u.chat.Show(u.w.Conv)
	u.refresh()
}

// refresh brings every screen in line with the state.
func (u *UI) refresh() {
	u.picker.refresh()
	u.composer.Refresh()
	u.status.refresh()
	u.chat.RefreshEmpty()
	u.side.refreshMarks()
	u.showCenter()
}

// convShown is told by the chat which conversation it shows: the status
// line says where its cache is.
func (u *UI) convShown(conv int64) {
	if u.status != nil {
		u.status.showCache(conv)
	}
}

// showCenter shows the welcome view while there is nothing else to show:
// no model and an empty new chat.
func (u *UI) showCenter() {
	var want fyne.CanvasObject = u.chat.Content()
	if page, ok := u.modelsCenter(); ok {
		want = page
	} else if page, ok := u.compareCenter(); ok {
		want = page
	} else if u.w.Model == nil && u.w.LoadingPath == "" && u.w.Conv == 0 {
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

// modelsCenter is the Models page when it is open, made on first use
// (and again after the window is rebuilt). The message box is hidden
// while it shows.
func (u *UI) modelsCenter() (fyne.CanvasObject, bool) {
	if !u.w.ModelsShown {
		u.composer.Content().Show()
		return nil, false
	}
	page := u.mdl.Page()
	u.composer.Content().Hide()
	return page, true
}

// compareCenter is the Compare page while it is open, made on first use
// (and again after the window is rebuilt, keeping what it showed).
func (u *UI) compareCenter() (fyne.CanvasObject, bool) {
	if !u.w.CompareShown {
		return nil, false
	}
	page := u.compare.Page()
	u.composer.Content().Hide()
	return page, true
}

// newCompareButton is the top bar's way to the Compare page.
func newCompareButton(u *UI) *widget.Button {
	b := widget.NewButtonWithIcon(lang.X("compare.open", "Compare"), theme.GridIcon(), func() {
		if u.w.CompareShown {
			u.compare.Hide()
		} else {
			u.compare.Show()
		}
	})
	b.Importance = widget.LowImportance
	return b
}

// apply changes the widgets after one session event. Runs on Fyne's
// goroutine.
func (u *UI) apply(ev session.Event) {
	switch ev := ev.(type) {
	case session.Token:
		// The answer and its reasoning (offsets into Message.Reasoning)
		// go to their own places in the message.
		if ev.Reasoning {
			u.chat.OnReasoning(ev)
		} else {
			u.chat.OnToken(ev)
		}
		u.status.onToken(ev)
	case session.Stats:
		u.chat.OnStats(ev)
	case session.CacheState:
		u.status.onCache(ev)
	case session.Done:
		delete(u.w.Generating, ev.Conv)
		delete(u.queued, ev.Conv)
		u.chat.OnDone(ev)
		if ev.Reason == session.ReasonError && ev.Err != nil {
			u.w.ShowError(ev.Err)
		}
		u.status.onDone()
		u.refresh()
	case session.Queued:
		u.queued[ev.Conv] = ev.Position
		u.chat.OnQueued(ev)
		u.side.refreshMarks()
	case session.Error:
		u.w.ShowError(fmt.Errorf("%s: %w", ev.Op, ev.Err))
	case session.DeviceFallback:
		u.w.BannerDetails(lang.X("error.gpu_fallback", "The GPU stopped working during an answer. Churon finished the answer on the CPU and runs this model on the CPU from now on; load the model again to try the GPU again."), ev.Err.Error())
	case session.ModelLoading:
		u.w.LoadingPath, u.w.LoadProgress = ev.Path, ev.Progress
		u.refresh()
	case session.ModelLoaded:
		in := ev.Info
		u.w.Model = &core.ModelInfo{Path: in.Path, Name: in.Name, Arch: in.Architecture, Quant: in.FileType,
			Backend: in.Backend, Threads: in.Threads, Context: in.ContextLength,
			Params: in.Parameters, FileBytes: in.FileBytes, WeightBytes: in.WeightBytes, DeviceNotes: in.DeviceNotes,
			Accelerator: in.Accelerator, Layers: in.Layers, OffloadedLayers: in.OffloadedLayers, OffloadedOutput: in.OffloadedOutput,
			Thinks: in.Thinks, ThinkingSwitch: in.ThinkingSwitch}
		if u.w.LoadingPath == in.Path {
			u.w.LoadingPath = ""
		}
		if !session.IsDemo(in.Path) && !session.IsRemote(in.Path) { // the menu always offers the demo and the connections' models
			u.picker.remember(in.Path)
		}
		u.refresh()
	case session.ModelUnloaded:
		if u.w.Model != nil && u.w.Model.Path == ev.Path {
			u.w.Model = nil
		}
		if u.w.LoadingPath == ev.Path {
			u.w.LoadingPath = ""
		}
		u.refresh()
	case session.MessageAdded:
		if c := ev.Message.ConversationID; ev.Message.Role == session.RoleUser && !u.w.Generating[c] {
			// Send stored the person's message: an answer is coming, until
			// its Done (events arrive in order, so a Done cannot overtake
			// this).
			u.w.Generating[c] = true
			u.refresh()
		}
		if c := ev.Message.ConversationID; ev.Message.Role == session.RoleAssistant {
			delete(u.queued, c) // its turn came: the answer starts
			u.chat.Started(c)
			u.side.refreshMarks()
		}
		if ev.Message.ConversationID == u.w.Conv {
			u.chat.OnMessageAdded(ev.Message)
		}
	case session.MessagesChanged:
		if ev.Conv == u.w.Conv {
			u.chat.Show(u.w.Conv)
		}
	case session.ConversationChanged:
		if ev.Deleted && ev.Conv == u.w.Conv {
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
	u.w.LoadingPath = st.Loading
	for _, c := range st.Answering { // answers run together
		u.w.Generating[c] = true
	}
	for i, c := range st.Queued {
		u.w.Generating[c] = true
		u.queued[c] = i + 1
	}
	u.refresh()
}

// openConversation shows a conversation (0: a new, empty chat).
func (u *UI) openConversation(id int64) {
	if u.chat.Editing() && id != u.w.Conv {
		u.chat.CancelEdit()
	}
	u.w.Conv = id
	u.w.CompareShown = false // a chat was asked for: show it
	if id != 0 {
		u.w.PendingSettings = nil
	}
	u.chat.Show(id)
	if pos, ok := u.queued[id]; ok {
		u.chat.OnQueued(session.Queued{Conv: id, Position: pos}) // it waits: say so again
	}
	u.side.selectConv(id)
	u.refresh()
}

// showNewConversation shows a conversation just made for the message
// being sent (it has no messages to read yet).
func (u *UI) showNewConversation(id int64) {
	u.w.Conv = id
	u.w.CompareShown = false
	u.chat.ShowNew(id)
	u.side.selectConv(id)
	u.refresh()
}

func (u *UI) onNewChat() {
	u.openConversation(0)
	u.w.Win.Canvas().Focus(u.composer.Entry())
}

func (u *UI) onSearch() { u.side.focusSearch() }

func (u *UI) onStop() {
	conv := u.w.Conv
	if !u.w.Generating[conv] {
		return
	}
	if stop := u.sending[conv]; stop != nil {
		stop.Store(true) // a new chat has no id to stop yet; its send stops it
	}
	if conv != 0 {
		// After the Send on the same worker: never before it.
		u.stopConv(conv)
	}
}

func (u *UI) stopConv(conv int64) {
	sess := u.w.Session
	u.w.Commands.Run(func() error { return sess.Stop(conv) }, u.w.ShowError)
}

// send sends text in the conversation shown, creating it first when it is
// a new chat. The commands run on the command worker; the chat shows the
// message as the session stores it (MessageAdded), and a failure puts the
// text back in the message box.
func (u *UI) send(text string) bool {
	conv := u.w.Conv
	if strings.TrimSpace(text) == "" || u.w.Generating[conv] {
		return false
	}
	pending := u.w.PendingSettings
	u.w.PendingSettings = nil
	// Busy at once: a second Enter before the session answers is not a
	// second message (a new chat is "conversation 0" until it is made).
	u.w.Generating[conv] = true
	stop := new(atomic.Bool)
	u.sending[conv] = stop
	u.refresh()
	sess := u.w.Session
	core.Then(u.w.Commands, func() (int64, error) {
		id := conv
		if id == 0 {
			c, err := sess.NewConversation("")
			if err != nil {
				return 0, err
			}
			id = c.ID
			if pending != nil {
				if err := sess.SetSettings(id, *pending); err != nil {
					return id, err
				}
			}
			// Show the new chat before sending: its events follow this on
			// Fyne's goroutine, so none of them is missed.
			u.w.Do(func() {
				if u.w.Conv == 0 {
					u.showNewConversation(id)
					// The chat shown is now id: it is busy, and a Stop
					// pressed in it must find this send.
					u.w.Generating[id] = true
					u.sending[id] = stop
				}
			})
		}
		_, err := sess.Send(id, text)
		if err == nil && conv == 0 && stop.Load() {
			// Stop came while the chat was being made: at once, not after
			// a trip through Fyne's goroutine.
			err = sess.Stop(id)
		}
		return id, err
	}, func(id int64, err error) {
		for _, c := range []int64{conv, id} {
			if u.sending[c] == stop {
				delete(u.sending, c)
			}
		}
		if stop.Load() && err == nil && conv == 0 {
			u.stopConv(id) // it came after the worker looked (twice stops nothing)
		}
		if conv == 0 || err != nil {
			// The mark of "conversation 0" was only for the wait; a
			// refused Send has no Done to clear its own.
			delete(u.w.Generating, conv)
		}
		if err != nil && id != conv {
			delete(u.w.Generating, id)
		}
		if err != nil {
			u.w.ShowError(err)
			// Nothing the person wrote is lost: the text goes back in the
			// box of the chat it was meant for, and so do a new chat's
			// settings.
			if e := u.composer.Entry(); e.Text == "" && (u.w.Conv == id || u.w.Conv == conv) {
				e.SetText(text)
			}
			if conv == 0 && pending != nil && u.w.PendingSettings == nil && u.w.Conv == 0 {
				u.w.PendingSettings = pending
			}
		}
		u.side.selectConv(u.w.Conv)
		u.refresh()
	})
	return true
}

// settingRecent is the settings key of the recent model files.
const settingRecent = "ui.recent_models"

func (u *UI) recentModels() []string {
	v, ok := u.w.Setting(settingRecent)
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
		u.w.ShowError(err)
		return
	}
	_ = got
	u.w.SetSetting(core.SettingLanguage, code)
	u.build()
}

// Shortcuts: Ctrl+N (⌘N) new chat, Ctrl+F search, Esc stop.
var (
	shortcutNew    = &desktop.CustomShortcut{KeyName: fyne.KeyN, Modifier: fyne.KeyModifierShortcutDefault}
	shortcutSearch = &desktop.CustomShortcut{KeyName: fyne.KeyF, Modifier: fyne.KeyModifierShortcutDefault}
)

func (u *UI) installShortcuts() {
	c := u.w.Win.Canvas()
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

func (u *UI) onSettings() { settings.Show(u.w) }

// onDemo loads the built-in demo model and opens a chat with it that
// says what it is.
func (u *UI) onDemo() {
	sess := u.w.Session
	core.Then(u.w.Commands, sess.StartDemo, func(c session.Conversation, err error) {
		if err != nil {
			u.w.ShowError(err)
			return
		}
		if u.w.Model == nil || !session.IsDemo(u.w.Model.Path) {
			u.w.LoadingPath, u.w.LoadProgress = session.DemoPath, 0
		}
		u.openConversation(c.ID)
		u.w.Win.Canvas().Focus(u.composer.Entry())
	})
}

// confirm asks a yes/no question.
func (u *UI) confirm(title, msg string, f func()) {
	dialog.ShowConfirm(title, msg, func(ok bool) {
		if ok {
			f()
		}
	}, u.w.Win)
}
