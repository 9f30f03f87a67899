package core

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// Entry is an Entry that passes the app's shortcuts (new chat, search)
// on instead of swallowing them, and reports Escape.
type Entry struct {
	widget.Entry
	// OnShortcut is offered every shortcut first (Window.HandleShortcut);
	// it reports whether it took it.
	OnShortcut func(fyne.Shortcut) bool
	// OnEscape, when set, runs on Escape instead of the entry's own
	// handling.
	OnEscape func()
}

// NewEntry makes an Entry that offers its shortcuts to onShortcut.
func NewEntry(onShortcut func(fyne.Shortcut) bool) *Entry {
	e := &Entry{OnShortcut: onShortcut}
	e.ExtendBaseWidget(e)
	return e
}

func (e *Entry) TypedShortcut(s fyne.Shortcut) {
	if e.OnShortcut != nil && e.OnShortcut(s) {
		return
	}
	e.Entry.TypedShortcut(s)
}

func (e *Entry) TypedKey(k *fyne.KeyEvent) {
	if k.Name == fyne.KeyEscape && e.OnEscape != nil {
		e.OnEscape()
		return
	}
	e.Entry.TypedKey(k)
}
