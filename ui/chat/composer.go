package chat

import (
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/ui/core"
)

// Composer is the message box under the chat, with Send that turns into
// Stop while the conversation answers.
type Composer struct {
	w        *core.Window
	sendText func(text string) bool // sends in the conversation shown; false: not sent
	stop     func()                 // stops the conversation's answer
	entry    *Input
	send     *widget.Button
	content  fyne.CanvasObject
	// entered: Enter was pressed and the send waits for the input method
	// (imeSettle); stopAsked: Stop or Escape came meanwhile, so the answer
	// is stopped as soon as it is asked for.
	entered, stopAsked bool
}

// NewComposer makes the message box; send and stop are the shell's.
func NewComposer(w *core.Window, send func(text string) bool, stop func()) *Composer {
	c := &Composer{w: w, sendText: send, stop: stop}
	c.entry = newInput(w.HandleShortcut, c.onEnter, c.onStop)
	c.send = widget.NewButtonWithIcon(lang.X("composer.send", "Send"), theme.MailSendIcon(), c.onButton)
	c.send.Importance = widget.HighImportance
	c.content = container.NewPadded(container.New(&core.Readable{Max: readableWidth},
		container.NewBorder(nil, nil, nil, container.NewVBox(c.send), c.entry)))
	return c
}

// Content is the box with its button, for the bottom of the window.
func (c *Composer) Content() fyne.CanvasObject { return c.content }

// Entry is the message box itself, to focus.
func (c *Composer) Entry() *Input { return c.entry }

// Refresh sets the box's state: disabled with a hint when there is no
// model, Stop while the conversation generates.
func (c *Composer) Refresh() {
	w := c.w
	switch {
	case w.Model == nil && w.LoadingPath == "":
		c.entry.Disable()
		c.entry.SetPlaceHolder(lang.X("composer.nomodel", "No model loaded — open a GGUF file with the model button at the top left to start chatting."))
	case w.Model == nil:
		c.entry.Enable()
		c.entry.SetPlaceHolder(lang.X("composer.loading", "The model is loading… you can type already."))
	default:
		c.entry.Enable()
		c.entry.SetPlaceHolder(lang.X("composer.ready", "Message — Enter sends, Shift+Enter adds a line"))
	}
	if w.Generating[w.Conv] {
		c.send.SetText(lang.X("composer.stop", "Stop"))
		c.send.SetIcon(theme.MediaStopIcon())
		c.send.Importance = widget.DangerImportance
		c.send.Enable()
	} else {
		c.send.SetText(lang.X("composer.send", "Send"))
		c.send.SetIcon(theme.MailSendIcon())
		c.send.Importance = widget.HighImportance
		if c.entry.Disabled() {
			c.send.Disable()
		} else {
			c.send.Enable()
		}
	}
	c.send.Refresh()
}

func (c *Composer) onButton() {
	switch {
	case c.w.Generating[c.w.Conv]:
		c.onStop()
	case c.entered:
		// Send while Enter's send waits for the input method: it is
		// coming already.
	default:
		c.onSend()
	}
}

// onStop stops the answer, or the one Enter is about to ask for: a Stop
// pressed within the input method's settle must not be lost.
func (c *Composer) onStop() {
	if c.entered {
		c.stopAsked = true
		return
	}
	c.stop()
}

// imeSettle is how long Enter waits before sending. Under X11, GLFW gets
// a Korean (or Japanese, Chinese) input method's last syllable as a commit
// that arrives just after the Return key that ended the composition; sent
// at once, the message would lose that syllable and it would land in the
// emptied box. Waiting a moment lets the commit arrive first; it is far
// shorter than a person notices.
const imeSettle = 60 * time.Millisecond

func (c *Composer) onEnter() {
	if c.entered {
		return
	}
	c.entered = true
	time.AfterFunc(imeSettle, func() {
		c.w.Do(func() {
			stop := c.stopAsked
			c.entered, c.stopAsked = false, false
			c.onSend()
			if stop {
				c.stop()
			}
		})
	})
}

func (c *Composer) onSend() {
	if c.w.Generating[c.w.Conv] {
		return // Enter while answering: keep the text for later
	}
	if c.sendText(c.entry.Text) {
		c.entry.SetText("")
	}
}
