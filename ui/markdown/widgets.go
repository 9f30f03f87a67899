package markdown

import (
	"image/color"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Rect is a rectangle whose colours are theme names, so it follows a
// switch between light and dark like the widgets around it (code panels,
// table cells; the window's tinted panels).
type Rect struct {
	widget.BaseWidget
	fill, stroke fyne.ThemeColorName
	radius       float32
	min          fyne.Size
}

// NewRect makes a rectangle filled with the theme's colour fill and
// outlined with stroke ("": none), its corners rounded by radius.
func NewRect(fill, stroke fyne.ThemeColorName, radius float32) *Rect {
	r := &Rect{fill: fill, stroke: stroke, radius: radius}
	r.ExtendBaseWidget(r)
	return r
}

// SetMinSize sets the smallest size the rectangle asks for.
func (r *Rect) SetMinSize(s fyne.Size) { r.min = s }

func (r *Rect) MinSize() fyne.Size { return r.min }

func (r *Rect) CreateRenderer() fyne.WidgetRenderer {
	cr := canvas.NewRectangle(color.Transparent)
	rr := &rectRenderer{r: r, cr: cr}
	rr.Refresh()
	return rr
}

type rectRenderer struct {
	r  *Rect
	cr *canvas.Rectangle
}

func (rr *rectRenderer) Layout(s fyne.Size)           { rr.cr.Resize(s) }
func (rr *rectRenderer) MinSize() fyne.Size           { return rr.r.min }
func (rr *rectRenderer) Objects() []fyne.CanvasObject { return []fyne.CanvasObject{rr.cr} }
func (rr *rectRenderer) Destroy()                     {}
func (rr *rectRenderer) Refresh() {
	th := rr.r.Theme()
	v := fyne.CurrentApp().Settings().ThemeVariant()
	rr.cr.FillColor = color.Transparent
	if rr.r.fill != "" {
		rr.cr.FillColor = th.Color(rr.r.fill, v)
	}
	rr.cr.StrokeWidth = 0
	if rr.r.stroke != "" {
		rr.cr.StrokeColor = th.Color(rr.r.stroke, v)
		rr.cr.StrokeWidth = 1
	}
	rr.cr.CornerRadius = rr.r.radius
	rr.cr.Refresh()
}

// newBullet places a list marker that is not text (a task check box) so
// that it lines up with the first line of the item's text.
func newBullet(o fyne.CanvasObject) fyne.CanvasObject {
	pad := theme.InnerPadding() / 2
	return container.New(layout.NewCustomPaddedLayout(pad, 0, 0, 0), o)
}

// CodeBlock shows code in a monospace face on a tinted panel, with its
// language and a button that copies it.
type CodeBlock struct {
	widget.BaseWidget
	lang   string
	code   string
	onCopy func(string)

	text *widget.RichText
	copy *widget.Button
}

func newCodeBlock(lang, code string, onCopy func(string)) *CodeBlock {
	c := &CodeBlock{lang: lang, onCopy: onCopy}
	c.text = widget.NewRichText(&widget.TextSegment{Style: widget.RichTextStyleCodeBlock})
	// Long lines break rather than scroll: a horizontal scroller inside
	// the chat's vertical one would steal the mouse wheel.
	c.text.Wrapping = fyne.TextWrapBreak
	c.copy = widget.NewButtonWithIcon("", theme.ContentCopyIcon(), c.onCopyTapped)
	c.copy.Importance = widget.LowImportance
	c.ExtendBaseWidget(c)
	c.setCode(code)
	return c
}

// Code is the block's text as copied.
func (c *CodeBlock) Code() string { return c.code }

// Language is the fence's info string ("go", "python"), or "".
func (c *CodeBlock) Language() string { return c.lang }

// CopyButton is the button that copies the code (for tests).
func (c *CodeBlock) CopyButton() *widget.Button { return c.copy }

func (c *CodeBlock) setCode(code string) {
	// The fence's last newline is not part of what a person copies.
	if len(code) > 0 && code[len(code)-1] == '\n' {
		code = code[:len(code)-1]
	}
	if code == c.code && c.text.Segments[0].(*widget.TextSegment).Text == code {
		return
	}
	c.code = code
	shown := code
	if shown == "" {
		shown = " "
	}
	c.text.Segments[0].(*widget.TextSegment).Text = shown
	c.text.Refresh()
}

func (c *CodeBlock) onCopyTapped() {
	if c.onCopy != nil {
		c.onCopy(c.code)
	}
	c.copy.SetIcon(theme.ConfirmIcon())
	time.AfterFunc(1500*time.Millisecond, func() {
		fyne.Do(func() { c.copy.SetIcon(theme.ContentCopyIcon()) })
	})
}

func (c *CodeBlock) CreateRenderer() fyne.WidgetRenderer {
	bg := NewRect(theme.ColorNameInputBackground, theme.ColorNameSeparator, theme.InputRadiusSize())
	lang := widget.NewRichText(&widget.TextSegment{
		Style: widget.RichTextStyle{ColorName: theme.ColorNamePlaceHolder, SizeName: theme.SizeNameCaptionText, Inline: true},
		Text:  c.lang,
	})
	var body fyne.CanvasObject = c.text
	if c.lang != "" {
		// The language sits close above the code; RichText's own padding
		// is enough between them.
		body = container.New(&column{gap: -theme.InnerPadding()}, lang, c.text)
	}
	// The copy button floats at the top right, over the first line's end,
	// instead of taking a row of its own.
	corner := container.NewVBox(container.NewHBox(layout.NewSpacer(), c.copy))
	return widget.NewSimpleRenderer(container.NewStack(bg, body, corner))
}
