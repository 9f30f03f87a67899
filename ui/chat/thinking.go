package chat

import (
	"fmt"
	"image/color"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/ui/core"
	"github.com/churon/churon/ui/markdown"
)

// An answer's reasoning (a <think> block, gpt-oss's analysis channel) is
// shown apart from the answer: a folded "Thinking…" row above it that
// says how long the model thought and with how many tokens, and opens on
// the reasoning itself. The session hands the reasoning over apart from
// the content, markers already gone, so no tag ever reaches the window.

// thinking is the widgets of a message's reasoning section.
type thinking struct {
	toggle *foldRow
	text   *widget.RichText
	body   *fyne.Container // text, behind a bar like a quotation's
	box    *fyne.Container
}

// foldRow is the section's row: an arrow and a muted line that open or
// fold the reasoning when clicked — quieter than a button, since it is
// about the answer, not an action on it. Tab reaches it like a button
// (it shows the theme's focus tint then), and Space or Return opens or
// folds it.
type foldRow struct {
	widget.BaseWidget
	icon    *widget.Icon
	label   *widget.RichText
	focus   *canvas.Rectangle // the focus tint, clear while unfocused
	focused bool
	onTap   func()
}

func newFoldRow(onTap func()) *foldRow {
	r := &foldRow{icon: widget.NewIcon(theme.MenuExpandIcon()), label: core.NewMuted(theme.SizeNameText, fyne.TextWrapOff),
		focus: canvas.NewRectangle(color.Transparent), onTap: onTap}
	r.focus.CornerRadius = theme.InputRadiusSize()
	r.ExtendBaseWidget(r)
	return r
}

// FocusGained and FocusLost show the focus tint (fyne.Focusable).
func (r *foldRow) FocusGained() { r.setFocused(true) }
func (r *foldRow) FocusLost()   { r.setFocused(false) }

func (r *foldRow) setFocused(f bool) {
	r.focused = f
	r.Refresh()
}

// TypedKey opens or folds the reasoning on Space or Return, as a button
// is pressed.
func (r *foldRow) TypedKey(e *fyne.KeyEvent) {
	switch e.Name {
	case fyne.KeySpace, fyne.KeyReturn, fyne.KeyEnter:
		r.onTap()
	}
}

// TypedRune takes nothing: Space comes as a key (TypedKey).
func (r *foldRow) TypedRune(rune) {}

func (r *foldRow) Refresh() {
	var c color.Color = color.Transparent
	if r.focused {
		c = theme.Color(theme.ColorNameFocus)
	}
	if r.focus.FillColor != c {
		r.focus.FillColor = c
		r.focus.Refresh()
	}
	r.BaseWidget.Refresh()
}

// Text is what the row says.
func (r *foldRow) Text() string { return r.label.String() }

func (r *foldRow) set(text string, open bool) {
	core.SetMuted(r.label, text)
	icon := theme.MenuExpandIcon()
	if open {
		icon = theme.MenuDropDownIcon()
	}
	if r.icon.Resource != icon {
		r.icon.SetResource(icon)
	}
}

func (r *foldRow) Tapped(*fyne.PointEvent) { r.onTap() }

// Cursor says the row can be clicked.
func (r *foldRow) Cursor() desktop.Cursor { return desktop.PointerCursor }

func (r *foldRow) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(container.NewStack(r.focus, container.NewHBox(r.icon, r.label)))
}

// buildThinking makes the reasoning section of an answer (hidden while
// the answer has no reasoning).
func (v *messageView) buildThinking() *fyne.Container {
	t := &thinking{}
	t.toggle = newFoldRow(v.onThinkingToggle)
	// Muted, behind a bar: the model's thoughts, not its answer.
	t.text = core.NewMuted(theme.SizeNameText, fyne.TextWrapWord)
	bar := markdown.NewRect(theme.ColorNameSeparator, "", 0) // follows the theme
	bar.SetMinSize(fyne.NewSize(3, 0))
	t.body = container.NewBorder(nil, nil, container.NewPadded(bar), nil, t.text)
	t.box = container.NewVBox(container.NewHBox(t.toggle), t.body)
	v.think = t
	v.refreshThinking()
	return t.box
}

// onThinkingToggle opens or folds the reasoning; the message is measured
// again, since its height changed.
func (v *messageView) onThinkingToggle() {
	v.thinkOpen = !v.thinkOpen
	v.refreshThinking()
	v.changed()
	v.c.relayout()
}

// refreshThinking shows the reasoning section as the message stands.
func (v *messageView) refreshThinking() {
	t := v.think
	if t == nil {
		return
	}
	if v.msg.Reasoning == "" {
		t.box.Hide()
		return
	}
	found := v.reasoningMatches()
	title := v.thinkingTitle()
	if found > 0 {
		// Folded, the marks are out of sight: the row says they are there.
		title = lang.X("thinking.found", "{{.Title}} · {{.N}} found", map[string]any{"Title": title, "N": found})
	}
	t.toggle.set(title, v.thinkOpen)
	if v.thinkOpen {
		setReasoning(t.text, v.msg.Reasoning, v.searchTerms())
		t.body.Show()
	} else {
		t.body.Hide()
	}
	t.box.Show()
}

// searchTerms are the terms a search marks in the message (nil: none).
func (v *messageView) searchTerms() []string {
	if v.marked == nil {
		return nil
	}
	return v.terms
}

// reasoningMatches counts the search's terms in the reasoning.
func (v *messageView) reasoningMatches() int {
	terms := v.searchTerms()
	if len(terms) == 0 {
		return 0
	}
	n := 0
	for _, p := range splitMatches(v.msg.Reasoning, terms) {
		if p.match {
			n++
		}
	}
	return n
}

// setReasoning shows text in the section's muted rich text, the terms
// of a search marked in it as they are in the answer.
func setReasoning(rt *widget.RichText, text string, terms []string) {
	if len(terms) == 0 && len(rt.Segments) == 1 {
		core.SetMuted(rt, text)
		return
	}
	// One muted segment again (a search's marks split it), as
	// core.NewMuted makes it.
	rt.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: text, Style: widget.RichTextStyle{
		ColorName: theme.ColorNamePlaceHolder, SizeName: theme.SizeNameText, Inline: true}}}
	if len(terms) == 0 || len(markRich(rt, terms)) == 0 {
		rt.Refresh()
	}
}

// thinking reports whether the model is thinking now: the answer streams
// and has reasoning but no content yet.
func (v *messageView) thinkingNow() bool {
	return v.streaming && v.stats == nil && v.msg.Reasoning != "" && v.msg.Content == ""
}

// thinkingTitle is the folded section's row: "Thinking… · 45 tokens"
// while the model thinks, then "Thought for 3.2 s · 145 tokens".
func (v *messageView) thinkingTitle() string {
	toks, d := v.reasoningFigures()
	if v.thinkingNow() {
		if toks == 0 {
			return lang.X("thinking.now", "Thinking…")
		}
		return lang.X("thinking.now.tokens", "Thinking… · {{.N}} tokens", map[string]any{"N": toks})
	}
	if toks == 0 || d <= 0 {
		return lang.X("thinking.done.plain", "Thought")
	}
	return lang.X("thinking.done", "Thought for {{.T}} · {{.N}} tokens",
		map[string]any{"T": formatThought(d), "N": toks})
}

// reasoningFigures are the reasoning's tokens and time: the answer's
// stats once they came, the stored message's, or while it streams what
// its reasoning tokens said.
func (v *messageView) reasoningFigures() (int, time.Duration) {
	switch {
	case v.stats != nil:
		return v.stats.ReasoningTokens, v.stats.ReasoningTime
	case v.streaming && v.reasonTokens > 0:
		return v.reasonTokens, v.reasonTime
	}
	return v.msg.ReasoningTokens, v.msg.ReasoningTime
}

// formatThought writes a thinking time the way people say it: tenths of
// a second, whole seconds past a minute's worth.
func formatThought(d time.Duration) string {
	switch {
	case d < 100*time.Millisecond:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%dm %02ds", int(d.Minutes()), int(d.Seconds())%60)
}
