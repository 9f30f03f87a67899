package ui

import (
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// composer is the message box under the chat, with Send that turns into
// Stop while the conversation answers.
type composer struct {
	ui      *UI
	entry   *chatInput
	send    *widget.Button
	content fyne.CanvasObject
}

func newComposer(u *UI) *composer {
	c := &composer{ui: u}
	c.entry = newChatInput(u.handleShortcut, c.onEnter, u.onStop)
	c.entry.OnChanged = func(s string) { u.noteText(s) }
	c.send = widget.NewButtonWithIcon(lang.X("composer.send", "Send"), theme.MailSendIcon(), c.onButton)
	c.send.Importance = widget.HighImportance
	c.content = container.NewPadded(container.New(&readable{max: ReadableWidth},
		container.NewBorder(nil, nil, nil, container.NewVBox(c.send), c.entry)))
	return c
}

// refresh sets the box's state: disabled with a hint when there is no
// model, Stop while the conversation generates.
func (c *composer) refresh() {
	u := c.ui
	switch {
	case u.model == nil && u.loadingPath == "":
		c.entry.Disable()
		c.entry.SetPlaceHolder(lang.X("composer.nomodel", "No model loaded — open a GGUF file with the model button at the top left to start chatting."))
	case u.model == nil:
		c.entry.Enable()
		c.entry.SetPlaceHolder(lang.X("composer.loading", "The model is loading… you can type already."))
	default:
		c.entry.Enable()
		c.entry.SetPlaceHolder(lang.X("composer.ready", "Message — Enter sends, Shift+Enter adds a line"))
	}
	if u.generating[u.conv] {
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

func (c *composer) onButton() {
	if c.ui.generating[c.ui.conv] {
		c.ui.onStop()
		return
	}
	c.onSend()
}

// IMESettle is how long Enter waits before sending. Under X11, GLFW gets
// a Korean (or Japanese, Chinese) input method's last syllable as a commit
// that arrives just after the Return key that ended the composition; sent
// at once, the message would lose that syllable and it would land in the
// emptied box. Waiting a moment lets the commit arrive first; it is far
// shorter than a person notices.
const IMESettle = 60 * time.Millisecond

func (c *composer) onEnter() {
	time.AfterFunc(IMESettle, func() { c.ui.do(c.onSend) })
}

func (c *composer) onSend() {
	if c.ui.generating[c.ui.conv] {
		return // Enter while answering: keep the text for later
	}
	if c.ui.send(c.entry.Text) {
		c.entry.SetText("")
	}
}
