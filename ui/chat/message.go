package chat

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/ui/core"
	"github.com/churon/churon/ui/markdown"
)

// messageView is one message: who wrote it, its text (Markdown for
// answers, plain selectable text for the person's own), actions, and for
// answers a footer with the model and its speed.
//
// Every message of the chat shown has one, but only those in and near
// sight have widgets (build, release): a long chat costs what is seen.
// Its height is measured once its widgets are laid out at the column's
// width and kept, so that the column knows its length without them.
type messageView struct {
	c         *View
	msg       session.Message
	streaming bool
	tokens    int
	elapsed   time.Duration
	stats     *session.Stats
	// reasonTokens and reasonTime are the answer's tokens and time at its
	// last reasoning token while it streams (the stats say them after).
	reasonTokens int
	reasonTime   time.Duration
	// thinkOpen: the person opened the reasoning section (kept while the
	// widgets come and go).
	thinkOpen bool

	render core.Throttle // paces re-rendering while the answer streams

	// h is the message's height at width hw (0: not measured there, or
	// its text changed since); est and estW are its guess, kept for the
	// width it was made at, until it is measured.
	h, hw     float32
	est, estW float32

	// The widgets, nil until built (and again once released).
	who     *widget.Label
	md      *markdown.View
	text    *questionText
	typing  *widget.Label
	footer  *widget.RichText
	copyBtn *widget.Button
	editBtn *widget.Button
	regen   *widget.Button
	// The version switcher, "‹ 2/3 ›", on an edited message or a
	// regenerated answer (nil when there is one version).
	prevVer, nextVer *widget.Button
	verLabel         *widget.Label
	think            *thinking // the reasoning section (thinking.go)
	// marked: the texts a search marked in the message (nil: not found
	// by one); terms are what it marks.
	marked []string
	terms  []string
	body   *fyne.Container
	editor *core.Entry
	obj    fyne.CanvasObject
}

func newMessageView(c *View, m session.Message) *messageView {
	return &messageView{c: c, msg: m}
}

// built reports whether the message has its widgets.
func (v *messageView) built() bool { return v.obj != nil }

// kept reports whether the message must keep its widgets out of sight:
// they hold what the person is doing (an edit) or what a search marked.
func (v *messageView) kept() bool { return v.editor != nil || v.marked != nil }

// release drops the message's widgets, kept for another message when
// they can serve one (shells.go); its height stays measured.
func (v *messageView) release() {
	v.c.keepShell(v)
	v.who, v.md, v.text, v.typing, v.footer = nil, nil, nil, nil, nil
	v.copyBtn, v.editBtn, v.regen, v.prevVer, v.nextVer, v.verLabel = nil, nil, nil, nil, nil, nil
	v.think = nil
	v.body, v.obj = nil, nil
}

// changed forgets the measured height: the text or footer changed.
func (v *messageView) changed() { v.hw, v.estW = 0, 0 }

// build makes the message's widgets, Markdown rendered, footer written.
func (v *messageView) build() {
	c, m := v.c, v.msg
	if s := c.takeShell(v); s != nil {
		v.useShell(s)
		v.afterBuild()
		return
	}
	v.who = widget.NewLabel("")
	v.who.TextStyle.Bold = true
	v.who.SizeName = theme.SizeNameCaptionText
	v.copyBtn = smallButton(theme.ContentCopyIcon(), v.onCopy)
	v.footer = core.NewMuted(theme.SizeNameCaptionText, fyne.TextWrapWord)
	v.body = container.NewStack()
	actions := container.NewHBox(v.copyBtn)
	var obj fyne.CanvasObject
	if m.Role == "notice" {
		// A note from the program, not a turn: no author, no actions.
		note := core.NewMuted(theme.SizeNameCaptionText, fyne.TextWrapWord)
		core.SetMuted(note, noticeText(m))
		v.body = nil
		// A notice has versions when a regenerated answer left out more
		// than the first: the switcher reaches the answers after each.
		var vers fyne.CanvasObject
		if m.Versions > 1 {
			box := container.NewHBox()
			v.addVersions(box)
			vers = box
		}
		v.obj = container.NewBorder(nil, nil, widget.NewIcon(theme.InfoIcon()), vers, note)
		v.afterBuild()
		return
	}
	v.addVersions(actions)
	if m.Role == "user" {
		v.who.SetText(lang.X("message.you", "You"))
		v.text = newQuestionText(m.Content)
		v.editBtn = smallButton(theme.DocumentCreateIcon(), v.onEdit)
		actions.Add(v.editBtn)
		v.body.Objects = []fyne.CanvasObject{v.text}
		header := container.NewBorder(nil, nil, v.who, actions)
		bubble := core.NewBubble()
		obj = container.NewStack(bubble, container.NewBorder(header, nil, nil, nil, v.body))
	} else {
		v.who.SetText(core.ModelLabel(m.Model))
		if m.Model == "" {
			v.who.SetText(lang.X("message.assistant", "Assistant"))
		}
		v.md = markdown.NewView(markdown.Options{
			OnCopy: func(s string) { c.w.App.Clipboard().SetContent(s) },
			OnLink: func(u *url.URL) { _ = c.w.App.OpenURL(u) },
		})
		v.typing = widget.NewLabel("…")
		v.regen = smallButton(theme.ViewRefreshIcon(), v.onRegenerate)
		actions.Add(v.regen)
		header := container.NewBorder(nil, nil, v.who, actions)
		// The reasoning, folded, between the author and the answer.
		obj = container.NewBorder(container.NewVBox(header, v.buildThinking()), v.footer, nil, nil, v.body)
		v.obj = obj
		v.refreshBody()
		v.refreshFooter()
	}
	v.obj = obj
	v.afterBuild()
}

// afterBuild brings a message just built up to the chat's state: its
// actions enabled or not, a search's marks.
func (v *messageView) afterBuild() {
	v.setBusy(v.c.w.Generating[v.c.conv])
	if v.marked != nil {
		v.applyMark()
	}
}

// addVersions puts the version switcher first in the message's actions
// when it has other versions.
func (v *messageView) addVersions(actions *fyne.Container) {
	m := v.msg
	if m.Versions < 2 {
		return
	}
	v.prevVer = smallButton(theme.NavigateBackIcon(), func() { v.onVersion(m.Version - 1) })
	v.nextVer = smallButton(theme.NavigateNextIcon(), func() { v.onVersion(m.Version + 1) })
	v.verLabel = widget.NewLabel(fmt.Sprintf("%d/%d", m.Version, m.Versions))
	v.verLabel.SizeName = theme.SizeNameCaptionText
	actions.Objects = append([]fyne.CanvasObject{v.prevVer, v.verLabel, v.nextVer}, actions.Objects...)
}

// onVersion shows another version; MessagesChanged then shows its branch.
func (v *messageView) onVersion(n int) {
	if n < 1 || n > v.msg.Versions {
		return
	}
	w, conv, msg := v.c.w, v.msg.ConversationID, v.msg.ID
	w.Commands.Run(func() error { return w.Session.SwitchVersion(conv, msg, n) }, w.ShowError)
}

// noticeText words a notice in the person's language.
func noticeText(m session.Message) string {
	n, ok := session.ParseNotice(m)
	switch {
	case ok && n.Kind == session.NoticeDropped:
		return lang.X("chat.notice.dropped", "Older messages are no longer seen by the model: the first {{.N}} messages of this chat do not fit in its context. The chat goes on with the newer ones.",
			map[string]any{"N": n.Dropped})
	case ok && n.Kind == session.NoticeDemo:
		return lang.X("chat.notice.demo", "This chat uses Churon's built-in demo model, stories260K: 260 thousand parameters trained on children's stories. It writes short English stories and nothing else — start a story (“Once upon a time”) and watch it stream. Real answers, and Korean, need a real model: download one or open a GGUF file.")
	}
	return m.Content
}

// smallButton is an icon button for a message's actions (Fyne 2.7
// buttons have no tooltips, so the icons are the common ones).
func smallButton(icon fyne.Resource, f func()) *widget.Button {
	b := widget.NewButtonWithIcon("", icon, f)
	b.Importance = widget.LowImportance
	return b
}

func (v *messageView) renderNow() {
	v.changed()
	v.refreshThinking()
	v.refreshBody()
	v.refreshFooter()
}

// refreshBody shows the message's current text. For a streaming answer
// the markdown view rebuilds only its last blocks (see ui/markdown).
func (v *messageView) refreshBody() {
	if v.editor != nil || v.body == nil { // editing, a notice, or not built
		return
	}
	if v.text != nil {
		v.text.SetText(v.msg.Content)
		return
	}
	want := []fyne.CanvasObject{v.md}
	switch {
	case v.msg.Content == "" && v.msg.Reasoning != "":
		want = nil // the reasoning section says the model is at work
	case v.msg.Content == "" && v.streaming:
		want = []fyne.CanvasObject{v.typing}
	}
	v.md.SetText(v.msg.Content)
	if len(v.body.Objects) != len(want) || (len(want) == 1 && v.body.Objects[0] != want[0]) {
		v.body.Objects = want
		v.body.Refresh()
	}
}

// refreshFooter writes the answer's model, size and speed.
func (v *messageView) refreshFooter() {
	if v.md == nil || v.footer == nil {
		return
	}
	var parts []string
	if v.msg.Quant != "" {
		parts = append(parts, v.msg.Quant)
	}
	toks, ttft, tps := v.msg.GenTokens, v.msg.TTFT, v.msg.GenTPS
	prompt, reused := v.msg.PromptTokens, v.msg.PromptReused
	if v.stats != nil {
		toks, ttft, tps = v.stats.GenTokens, v.stats.TTFT, v.stats.GenTPS
		prompt, reused = v.stats.PromptTokens, v.stats.Reused
	} else if v.streaming {
		toks = v.tokens
		if v.elapsed > 0 {
			tps = float64(v.tokens) / v.elapsed.Seconds()
		}
	}
	if toks > 0 {
		parts = append(parts, lang.X("footer.tokens", "{{.N}} tokens", map[string]any{"N": toks}))
	}
	if ttft > 0 {
		parts = append(parts, lang.X("footer.ttft", "first token {{.T}}", map[string]any{"T": core.FormatDuration(ttft)}))
	}
	if tps > 0 {
		parts = append(parts, fmt.Sprintf("%.1f tok/s", tps))
	}
	if prompt > 0 {
		// How much of the conversation the KV cache spared the model.
		parts = append(parts, lang.X("footer.prompt", "{{.Reused}} reused · {{.Processed}} processed",
			map[string]any{"Reused": reused, "Processed": prompt - reused}))
	}
	switch session.Reason(v.msg.FinishReason) {
	case session.ReasonCancelled:
		parts = append(parts, lang.X("footer.stopped", "stopped"))
	case session.ReasonLength, session.ReasonContext:
		parts = append(parts, lang.X("footer.length", "cut off at the length limit"))
	case session.ReasonError:
		if line := session.RemoteError(v.msg); line != "" {
			// A remote server failed part-way: why, and that Regenerate
			// tries again; what arrived above is kept.
			parts = append(parts, lang.X("footer.remote_error", "failed: {{.Err}} — Regenerate to retry", map[string]any{"Err": line}))
		} else {
			parts = append(parts, lang.X("footer.error", "failed"))
		}
	}
	if v.streaming {
		parts = append(parts, lang.X("footer.generating", "generating…"))
	}
	core.SetMuted(v.footer, strings.Join(parts, " · "))
}

// setBusy disables the actions that would start an answer.
func (v *messageView) setBusy(busy bool) {
	for _, b := range []*widget.Button{v.editBtn, v.regen, v.prevVer, v.nextVer} {
		if b == nil {
			continue
		}
		switch {
		case b == v.prevVer && v.msg.Version <= 1, b == v.nextVer && v.msg.Version >= v.msg.Versions:
			b.Disable() // no version that way
		case busy:
			b.Disable()
		default:
			b.Enable()
		}
	}
}

func (v *messageView) onCopy() {
	v.c.w.App.Clipboard().SetContent(v.msg.Content)
}

func (v *messageView) onRegenerate() {
	w := v.c.w
	conv, msg := v.msg.ConversationID, v.msg.ID
	v.c.busy(conv, func() error { return w.Session.Regenerate(conv, msg) })
}

// onEdit swaps the text for an editor with Send and Cancel.
func (v *messageView) onEdit() {
	w := v.c.w
	e := core.NewEntry(w.HandleShortcut)
	e.MultiLine = true
	e.Wrapping = fyne.TextWrapWord
	e.SetText(v.msg.Content)
	e.OnEscape = v.onCancelEdit
	v.editor = e
	send := widget.NewButtonWithIcon(lang.X("message.resend", "Send"), theme.MailSendIcon(), v.onResend)
	send.Importance = widget.HighImportance
	cancel := widget.NewButton(lang.X("dialog.cancel", "Cancel"), v.onCancelEdit)
	buttons := container.NewHBox(layout.NewSpacer(), cancel, send)
	v.body.Objects = []fyne.CanvasObject{container.NewBorder(nil, buttons, nil, nil, e)}
	v.body.Refresh()
	v.changed()
	v.c.relayout()
	w.Win.Canvas().Focus(e)
}

func (v *messageView) onCancelEdit() {
	v.editor = nil
	if v.body != nil {
		v.body.Objects = []fyne.CanvasObject{v.text}
		v.body.Refresh()
	}
	v.changed()
	v.c.relayout()
}

func (v *messageView) onResend() {
	w := v.c.w
	text := v.editor.Text
	if strings.TrimSpace(text) == "" {
		return
	}
	v.editor = nil
	conv, msg := v.msg.ConversationID, v.msg.ID
	v.c.busy(conv, func() error { return w.Session.Edit(conv, msg, text) })
	// MessagesChanged reloads the conversation with the new text.
}
