package core

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/assets"
	"github.com/churon/churon/ui/markdown"
)

// Theme is Fyne's default theme, which follows the system's light or dark
// preference unless the person chose one, with what Churon adds: inline
// code, the tint behind the person's own messages, and Hangul.
//
// Fyne's fonts have no Hangul. Its font for a style is the theme's font
// first and its own second, a rune drawn from the first that has it, so a
// theme font of Hangul alone (assets.HangulSans…) gives Korean text its
// face and leaves every other letter in Fyne's. Without it Korean is drawn
// from whatever font the system has, or as boxes when it has none; and
// Fyne 2.7, finding no face for a rune, looks the system's fonts up again
// for every rune it draws (tools/scale/README.md), so a long Korean chat
// slowed the window down the longer it was open.
type Theme struct {
	fyne.Theme
	// Variant, when set, is drawn whatever the system prefers.
	Variant *fyne.ThemeVariant
}

// The Hangul faces, one per style Fyne asks for; italic text takes the
// upright faces (Hangul has no italic).
var (
	hangulRegular = fyne.NewStaticResource("ChuronHangulSans-Regular.ttf", assets.HangulSansRegular)
	hangulBold    = fyne.NewStaticResource("ChuronHangulSans-Bold.ttf", assets.HangulSansBold)
	hangulMono    = fyne.NewStaticResource("ChuronHangulMono-Regular.ttf", assets.HangulMonoRegular)
)

// NewTheme wraps Fyne's default theme.
func NewTheme() fyne.Theme { return &Theme{Theme: theme.DefaultTheme()} }

// The theme choices (SettingTheme); ThemeSystem follows the system.
const (
	ThemeSystem = ""
	ThemeLight  = "light"
	ThemeDark   = "dark"
)

// SetTheme makes the app draw in the theme chosen (ThemeLight, ThemeDark,
// else the system's), at once, keeping the rest of the theme it has.
func SetTheme(a fyne.App, choice string) {
	t := current(a)
	switch choice {
	case ThemeLight:
		v := theme.VariantLight
		t.Variant = &v
	case ThemeDark:
		v := theme.VariantDark
		t.Variant = &v
	default:
		t.Variant = nil
	}
	a.Settings().SetTheme(t)
}

// current is a copy of the app's theme to change, or a new one when the
// app has another.
func current(a fyne.App) *Theme {
	if cur, ok := a.Settings().Theme().(*Theme); ok {
		t := *cur
		return &t
	}
	return &Theme{Theme: theme.DefaultTheme()}
}

func (t *Theme) Font(s fyne.TextStyle) fyne.Resource {
	switch {
	case s.Symbol:
		return t.Theme.Font(s)
	case s.Monospace:
		return hangulMono
	case s.Bold:
		return hangulBold
	}
	return hangulRegular
}

// colorNameUserBubble tints the person's messages.
const colorNameUserBubble fyne.ThemeColorName = "churon-user-bubble"

func (t *Theme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	if t.Variant != nil {
		v = *t.Variant
	}
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
