package core

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/ui/markdown"
)

// Theme is Fyne's default theme, which follows the system's light or dark
// preference, with the few colours Churon adds: inline code, the tint
// behind the person's own messages.
type Theme struct{ fyne.Theme }

// NewTheme wraps Fyne's default theme.
func NewTheme() fyne.Theme { return &Theme{theme.DefaultTheme()} }

// colorNameUserBubble tints the person's messages.
const colorNameUserBubble fyne.ThemeColorName = "churon-user-bubble"

func (t *Theme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	dark := v == theme.VariantDark
	switch n {
	case markdown.ColorNameCode:
		if dark {
			return color.NRGBA{R: 0xf0, G: 0xa8, B: 0x7c, A: 0xff}
		}
		return color.NRGBA{R: 0xb3, G: 0x3c, B: 0x1f, A: 0xff}
	case colorNameUserBubble:
		if dark {
			return color.NRGBA{R: 0x2c, G: 0x33, B: 0x40, A: 0xff}
		}
		return color.NRGBA{R: 0xe8, G: 0xee, B: 0xf8, A: 0xff}
	}
	return t.Theme.Color(n, v)
}

// NewMuted makes a line of secondary text (footers, notes, snippets) in
// the theme's placeholder colour: quieter than the text around it but,
// unlike a low-importance label, still easy to read.
func NewMuted(size fyne.ThemeSizeName, wrap fyne.TextWrap) *widget.RichText {
	rt := widget.NewRichText(&widget.TextSegment{Style: widget.RichTextStyle{
		ColorName: theme.ColorNamePlaceHolder, SizeName: size, Inline: true}})
	rt.Wrapping = wrap
	return rt
}

// SetMuted changes the text of a NewMuted line.
func SetMuted(rt *widget.RichText, s string) {
	seg := rt.Segments[0].(*widget.TextSegment)
	if seg.Text != s {
		seg.Text = s
		rt.Refresh()
	}
}

// MutedText is the text of a NewMuted line.
func MutedText(rt *widget.RichText) string { return rt.Segments[0].(*widget.TextSegment).Text }

// NewBubble makes the tinted panel behind the person's messages (and a
// Compare column), to stack under its content; its colour is a theme
// name, so it follows light and dark.
func NewBubble() fyne.CanvasObject {
	return markdown.NewRect(colorNameUserBubble, "", theme.InputRadiusSize()*2)
}
