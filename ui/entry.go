package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// appEntry is an Entry that passes the app's shortcuts (new chat, search)
// on instead of swallowing them, and reports Escape.
type appEntry struct {
	widget.Entry
	onShortcut func(fyne.Shortcut) bool
	onEscape   func()
}

func newAppEntry(onShortcut func(fyne.Shortcut) bool) *appEntry {
	e := &appEntry{onShortcut: onShortcut}
	e.ExtendBaseWidget(e)
	return e
}

func (e *appEntry) TypedShortcut(s fyne.Shortcut) {
	if e.onShortcut != nil && e.onShortcut(s) {
		return
	}
	e.Entry.TypedShortcut(s)
}

func (e *appEntry) TypedKey(k *fyne.KeyEvent) {
	if k.Name == fyne.KeyEscape && e.onEscape != nil {
		e.onEscape()
		return
	}
	e.Entry.TypedKey(k)
}

// chatInput is the message box: Enter sends, Shift+Enter starts a new
// line, Escape stops the answer.
type chatInput struct {
	appEntry
	shift  bool
	onSend func()
}

func newChatInput(onShortcut func(fyne.Shortcut) bool, onSend, onEscape func()) *chatInput {
	e := &chatInput{onSend: onSend}
	e.onShortcut = onShortcut
	e.onEscape = onEscape
	e.MultiLine = true
	e.Wrapping = fyne.TextWrapWord
	e.SetMinRowsVisible(3)
	e.ExtendBaseWidget(e)
	return e
}

// KeyDown tracks Shift; Entry keeps its own copy for selections.
func (e *chatInput) KeyDown(k *fyne.KeyEvent) {
	if k.Name == desktop.KeyShiftLeft || k.Name == desktop.KeyShiftRight {
		e.shift = true
	}
	e.Entry.KeyDown(k)
}

func (e *chatInput) KeyUp(k *fyne.KeyEvent) {
	if k.Name == desktop.KeyShiftLeft || k.Name == desktop.KeyShiftRight {
		e.shift = false
	}
	e.Entry.KeyUp(k)
}

func (e *chatInput) TypedKey(k *fyne.KeyEvent) {
	if (k.Name == fyne.KeyReturn || k.Name == fyne.KeyEnter) && !e.shift {
		if e.onSend != nil && !e.Disabled() {
			e.onSend()
		}
		return
	}
	e.appEntry.TypedKey(k)
}

// FocusLost forgets Shift: its key-up may go to another window.
func (e *chatInput) FocusLost() {
	e.shift = false
	e.Entry.FocusLost()
}

// Icons, named for what they do here.
func iconSettings() fyne.Resource { return theme.SettingsIcon() }
func iconClose() fyne.Resource    { return theme.CancelIcon() }
