package core

import (
	"context"
	"github.com/churon/churon/app/remote"

	"fyne.io/fyne/v2"

	"github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/app/api/serve"
	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/models"
)

// Window is what a screen reaches the window by: the app and its Fyne
// window, the session manager, the window's lifetime, the way onto Fyne's
// goroutine, the banners (banner.go), the settings, the state the screens
// share, and the shell's hooks. The shell (package ui) makes one per
// window and sets the hooks to its own code. It is used on Fyne's
// goroutine only, but for what the comments say otherwise of.
type Window struct {
	App fyne.App
	Win fyne.Window
	// Session, Compare and Models are the services the screens send
	// commands to. Commands runs those that may wait on the disk off
	// Fyne's goroutine, in order; Reads runs the readings (a chat's
	// messages, the list of chats) apart from them, so that a write stuck
	// on a slow disk never holds up what the person opens.
	Session session.Service
	Compare compare.Service
	Models  *models.Service
	// Server is the OpenAI-compatible API server (nil: none in this
	// window): Settings turns it on and off, the status line shows it.
	Server serve.Controller
	// Remotes are the connections to remote engines (nil: none in this
	// window): Settings adds them, the model menu lists their models.
	Remotes  *remote.Connections
	Commands *Commands
	Reads    *Commands
	// Ctx ends when the window closes: background work started for it
	// stops then. Safe from any goroutine.
	Ctx context.Context
	// Do runs f on Fyne's goroutine; once the window closed, it drops f.
	// Safe from any goroutine.
	Do func(f func())

	// Notice holds the banners at the top of the chat (fonts, errors).
	Notice *fyne.Container

	// Conv is the conversation shown; 0 = a new chat not yet stored.
	Conv int64
	// Model is the loaded model (nil: none); LoadingPath is the one
	// loading ("": none), LoadProgress how far it got.
	Model        *ModelInfo
	LoadingPath  string
	LoadProgress float64
	// Generating marks the conversations that answer or wait to.
	Generating map[int64]bool
	// PendingSettings are the settings chosen for the new chat before its
	// first message.
	PendingSettings *session.Settings
	// ModelsShown and CompareShown: the Models or the Compare page is
	// open in the window's centre (the Models page, when both are).
	ModelsShown, CompareShown bool

	// The shell's hooks.

	// Refresh brings every screen in line with the state.
	Refresh func()
	// HandleShortcut runs an app shortcut typed while an entry has the
	// focus and reports whether it was one (see Entry).
	HandleShortcut func(fyne.Shortcut) bool
	// SetLanguage switches the UI language and builds the window again.
	SetLanguage func(code string)
	// RemotesChanged: a connection was added or removed (the model menu
	// reads them again).
	RemotesChanged func()
}

// ModelInfo is what the window shows of a loaded model (copied from the
// session's ModelLoaded event).
type ModelInfo struct {
	Path, Name, Arch, Quant, Backend string
	Threads, Context                 int
	Params, FileBytes, WeightBytes   int64
	DeviceNotes                      []string // why an accelerator is not used, a line each
	// Accelerator is the device layers run on besides the CPU ("" for
	// none): OffloadedLayers of Layers, and the output head when
	// OffloadedOutput.
	Accelerator             string
	Layers, OffloadedLayers int
	OffloadedOutput         bool
	// Thinks is how the model reasons ("think", "harmony", ""), and
	// ThinkingSwitch whether a chat can turn its thinking off.
	Thinks         string
	ThinkingSwitch bool
}

// SettingLanguage is the settings key of the app's language ("" or
// missing: the system's).
const SettingLanguage = "ui.language"

// SettingReloadLast is the settings key that says whether the last model
// is loaded again at start: "false" turns it off, anything else (or
// missing) leaves it on.
const SettingReloadLast = "ui.reload_last_model"

// SettingTheme is the settings key of the theme: ThemeLight, ThemeDark,
// or "" (missing) for the system's.
const SettingTheme = "ui.theme"

// ReloadLast reports whether the last model is to be loaded at start.
func (w *Window) ReloadLast() bool {
	v, _ := w.Setting(SettingReloadLast)
	return v != "false"
}

// Setting reads an app setting (the session keeps them in memory).
func (w *Window) Setting(key string) (string, bool) {
	v, ok := w.Session.Setting(key)
	if !ok {
		return "", false
	}
	return v, true
}

// SetSetting sets an app setting; the session writes it in the
// background (a failure arrives as an Error event).
func (w *Window) SetSetting(key, value string) {
	if err := w.Session.SetSetting(key, value); err != nil {
		w.ShowError(err)
	}
}

// LoadModel asks the session to load path; progress arrives as events.
func (w *Window) LoadModel(path string) { w.LoadModelThen(path, nil) }

// LoadModelThen is LoadModel, running then (on the command worker) once
// the session has taken the file — when the engine's checks refused it
// (incomplete, not a model, an architecture Churon lacks), then never runs.
func (w *Window) LoadModelThen(path string, then func() error) {
	w.LoadingPath, w.LoadProgress = path, 0
	w.Refresh()
	sess := w.Session
	w.Commands.Run(func() error {
		if err := sess.LoadModel(path); err != nil {
			return err
		}
		if then != nil {
			return then()
		}
		return nil
	}, func(err error) {
		if w.LoadingPath == path {
			w.LoadingPath = ""
			w.Refresh()
		}
		w.ShowError(err)
	})
}
