package chat

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"

	"github.com/churon/churon/ui/core"
)

// Input is the message box: Enter sends, Shift+Enter starts a new line,
// Escape stops the answer.
type Input struct {
	core.Entry
	shift  bool
	onSend func()
}

func newInput(onShortcut func(fyne.Shortcut) bool, onSend, onEscape func()) *Input {
	e := &Input{onSend: onSend}
	e.OnShortcut = onShortcut
	e.OnEscape = onEscape
	e.MultiLine = true
	e.Wrapping = fyne.TextWrapWord
	e.SetMinRowsVisible(3)
	e.ExtendBaseWidget(e)
	return e
}

// KeyDown tracks Shift; Entry keeps its own copy for selections.
func (e *Input) KeyDown(k *fyne.KeyEvent) {
	if k.Name == desktop.KeyShiftLeft || k.Name == desktop.KeyShiftRight {
		e.shift = true
	}
	e.Entry.KeyDown(k)
}

func (e *Input) KeyUp(k *fyne.KeyEvent) {
	if k.Name == desktop.KeyShiftLeft || k.Name == desktop.KeyShiftRight {
		e.shift = false
	}
	e.Entry.KeyUp(k)
}

func (e *Input) TypedKey(k *fyne.KeyEvent) {
	if (k.Name == fyne.KeyReturn || k.Name == fyne.KeyEnter) && !e.shift {
		if e.onSend != nil && !e.Disabled() {
			e.onSend()
		}
		return
	}
	e.Entry.TypedKey(k)
}

// FocusLost forgets Shift: its key-up may go to another window.
func (e *Input) FocusLost() {
	e.shift = false
	e.Entry.FocusLost()
}
