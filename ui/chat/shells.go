package chat

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/ui/core"
	"github.com/churon/churon/ui/markdown"
)

// A message's widgets are handed on when it leaves sight, to the next
// message of its kind that comes into it, as a list recycles its rows:
// scrolling through a chat of thousands then makes widgets for a
// screenful or two, not for every message passed. Fyne keeps each
// widget's renderer, with its texts and their measures, for a minute
// after its last use, so widgets made anew at every wheel step held
// every message scrolled past in memory (hundreds of megabytes over a
// 2,000-message chat); and a Markdown view given another text updates
// its paragraphs in place instead of making new ones.

// shell is the widgets of a message gone out of sight, kept to be used
// again: a question's (text) or an answer's (md, typing, think).
type shell struct {
	obj     fyne.CanvasObject
	who     *widget.Label
	body    *fyne.Container
	footer  *widget.RichText
	copyBtn *widget.Button
	// A question's.
	text    *questionText
	editBtn *widget.Button
	// An answer's.
	md     *markdown.View
	typing *widget.Label
	regen  *widget.Button
	think  *thinking
}

// maxShells is how many shells of each kind are kept: more than a view
// and its margins hold.
const maxShells = 48

// reusable reports whether a message's widgets can serve another: they
// show nothing of its own beyond what building sets again (no editor,
// no search marks, no version switcher), and it is a question or an
// answer.
func (v *messageView) reusable() bool {
	if v.obj == nil || v.editor != nil || v.marked != nil || v.prevVer != nil || v.body == nil {
		return false
	}
	return (v.text != nil && v.editBtn != nil) || (v.md != nil && v.regen != nil && v.think != nil)
}

// keepShell keeps v's widgets for another message, when they can serve.
func (c *View) keepShell(v *messageView) {
	if !v.reusable() {
		return
	}
	s := &shell{obj: v.obj, who: v.who, body: v.body, footer: v.footer, copyBtn: v.copyBtn,
		text: v.text, editBtn: v.editBtn, md: v.md, typing: v.typing, regen: v.regen, think: v.think}
	pool := &c.answers
	if s.text != nil {
		pool = &c.questions
	}
	if len(*pool) < maxShells {
		*pool = append(*pool, s)
	}
}

// takeShell is a kept shell for message v, nil when none is kept or v
// needs widgets of its own (a notice, several versions).
func (c *View) takeShell(v *messageView) *shell {
	pool := &c.answers
	switch {
	case v.msg.Versions > 1 || v.msg.Role == "notice":
		return nil
	case v.msg.Role == "user":
		pool = &c.questions
	}
	n := len(*pool)
	if n == 0 {
		return nil
	}
	s := (*pool)[n-1]
	(*pool)[n-1] = nil
	*pool = (*pool)[:n-1]
	return s
}

// useShell builds v with s's widgets: all that build sets, set again,
// and every action bound to v.
func (v *messageView) useShell(s *shell) {
	v.obj, v.who, v.body, v.footer, v.copyBtn = s.obj, s.who, s.body, s.footer, s.copyBtn
	v.copyBtn.OnTapped = v.onCopy
	if s.text != nil {
		v.text, v.editBtn = s.text, s.editBtn
		v.editBtn.OnTapped = v.onEdit
		v.who.SetText(lang.X("message.you", "You"))
		v.text.SetText(v.msg.Content)
		if len(v.body.Objects) != 1 || v.body.Objects[0] != v.text {
			v.body.Objects = []fyne.CanvasObject{v.text}
			v.body.Refresh()
		}
		return
	}
	v.md, v.typing, v.regen, v.think = s.md, s.typing, s.regen, s.think
	v.regen.OnTapped = v.onRegenerate
	v.think.toggle.onTap = v.onThinkingToggle
	who := core.ModelLabel(v.msg.Model)
	if v.msg.Model == "" {
		who = lang.X("message.assistant", "Assistant")
	}
	v.who.SetText(who)
	v.refreshThinking()
	v.refreshBody()
	v.refreshFooter()
}
