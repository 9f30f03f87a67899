package ui

import (
	"image"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/internal/uitest"
	"github.com/churon/churon/ui/core"
	"github.com/churon/churon/ui/fontcheck"
)

// TestThemeAtStart: the theme chosen in an earlier run is the one the
// window opens in, whatever variant the system asks for.
func TestThemeAtStart(t *testing.T) {
	for _, c := range []struct {
		choice  string
		variant fyne.ThemeVariant
	}{{core.ThemeDark, theme.VariantDark}, {core.ThemeLight, theme.VariantLight}} {
		t.Run(c.choice, func(t *testing.T) {
			h := newHarness(t, harnessOptions{before: func(b *uitest.Harness) {
				if err := b.M.SetSetting(core.SettingTheme, c.choice); err != nil {
					t.Fatal(err)
				}
			}})
			want := theme.DefaultTheme().Color(theme.ColorNameBackground, c.variant)
			for _, asked := range []fyne.ThemeVariant{theme.VariantLight, theme.VariantDark} {
				if got := h.A.Settings().Theme().Color(theme.ColorNameBackground, asked); got != want {
					t.Errorf("asked for variant %d, the background is %v; want %v", asked, got, want)
				}
			}
		})
	}
}

// TestBoldHangul: with a bold font that has Hangul on the machine (Noto
// Sans CJK Bold), bold Korean text is drawn bold; Fyne alone draws it in
// the regular face, its bold font having no Hangul.
func TestBoldHangul(t *testing.T) {
	res, err := fontcheck.Hangul()
	if err != nil || res.Bold == "" {
		t.Skip("no bold font with Hangul on this machine (install fonts-noto-cjk)")
	}
	bold := boldFace(res)
	if bold == nil {
		t.Fatalf("could not read %s (%d)", res.Bold, res.BoldIndex)
	}
	a := test.NewTempApp(t)
	a.Settings().SetTheme(core.NewTheme())
	ink := func(style fyne.TextStyle) int {
		l := widget.NewLabelWithStyle("한국어 대화 새 모델", fyne.TextAlignLeading, style)
		w := test.NewWindow(l)
		defer w.Close()
		w.Resize(fyne.NewSize(400, 60))
		return inked(w.Canvas().Capture())
	}
	regular := ink(fyne.TextStyle{})
	if regular == 0 {
		t.Fatal("the Korean text drew nothing")
	}
	t.Logf("inked pixels: regular %d, bold in Fyne's own bold font %d", regular, ink(fyne.TextStyle{Bold: true}))
	core.SetBoldFont(a, bold)
	if got := ink(fyne.TextStyle{}); got != regular {
		t.Errorf("regular text changed with the bold face: %d inked pixels, was %d", got, regular)
	}
	got := ink(fyne.TextStyle{Bold: true})
	t.Logf("bold in %s: %d", res.Bold, got)
	if got < regular*115/100 {
		t.Errorf("bold Korean has %d inked pixels, regular %d: not drawn bold", got, regular)
	}
}

// inked counts the pixels that differ from the picture's corner, the
// background.
func inked(img image.Image) int {
	b := img.Bounds()
	br, bg, bb, _ := img.At(b.Min.X, b.Min.Y).RGBA()
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if diff(r, br)+diff(g, bg)+diff(bl, bb) > 3*0x4000 {
				n++
			}
		}
	}
	return n
}

func diff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}
