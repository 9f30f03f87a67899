package core_test

import (
	"bytes"
	"image"
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"github.com/go-text/typesetting/font"

	"github.com/churon/churon/ui/core"
)

// styles are those Fyne asks a theme's font for when it draws text.
var styles = []struct {
	name  string
	style fyne.TextStyle
}{
	{"regular", fyne.TextStyle{}},
	{"bold", fyne.TextStyle{Bold: true}},
	{"italic", fyne.TextStyle{Italic: true}},
	{"bold italic", fyne.TextStyle{Bold: true, Italic: true}},
	{"monospace", fyne.TextStyle{Monospace: true}},
}

// TestHangulFaces: for every style the theme's font has every Hangul
// syllable, the jamo and the Korean punctuation, so Korean is drawn
// whatever fonts the system has — and no Latin letter or digit, so that
// those stay in Fyne's own font.
func TestHangulFaces(t *testing.T) {
	th := core.NewTheme()
	for _, s := range styles {
		t.Run(s.name, func(t *testing.T) {
			res := th.Font(s.style)
			face, err := font.ParseTTF(bytes.NewReader(res.Content()))
			if err != nil {
				t.Fatalf("%s: %v", res.Name(), err)
			}
			var missing []rune
			for r := rune(0xAC00); r <= 0xD7A3; r++ {
				if _, ok := face.NominalGlyph(r); !ok {
					missing = append(missing, r)
				}
			}
			need := "ㄱㅏㅎㆍ「」〈〉《》・。、（）＃①㉠㈜ "
			if !s.style.Monospace {
				// Conjoining jamo (ᄀ ᅡ ᆨ), which the coding font lacks:
				// Old Hangul, rarely typed.
				need += "\u1100\u1161\u11a8"
			}
			for _, r := range need {
				if _, ok := face.NominalGlyph(r); !ok {
					missing = append(missing, r)
				}
			}
			if len(missing) > 0 {
				t.Errorf("%s lacks %d runes, first %q", res.Name(), len(missing), missing[0])
			}
			for _, r := range "aZ09.,!?-_é" {
				if _, ok := face.NominalGlyph(r); ok {
					t.Errorf("%s has %q: Fyne would draw it from there rather than its own font", res.Name(), r)
				}
			}
		})
	}
	if th.Font(fyne.TextStyle{Symbol: true}) != theme.DefaultTheme().Font(fyne.TextStyle{Symbol: true}) {
		t.Error("the symbol font is not Fyne's")
	}
}

// TestLatinUnchanged: text without Hangul measures as in Fyne's own theme,
// width and height, in every style; Korean text is as tall as Latin text
// (the faces carry the Latin fonts' vertical metrics, and a text's height
// comes from the face that draws its space); a monospaced tab is as wide
// as before, and a monospaced syllable two columns.
func TestLatinUnchanged(t *testing.T) {
	a := test.NewTempApp(t)
	size := theme.TextSize()
	for _, s := range styles {
		t.Run(s.name, func(t *testing.T) {
			measure := func(th fyne.Theme, text string) fyne.Size {
				a.Settings().SetTheme(th)
				return fyne.MeasureText(text, size, s.style)
			}
			for _, text := range []string{"Churon 42.5 tok/s", "x", " ", "a\tb", "—“quotes”… ½ ✓"} {
				want := measure(theme.DefaultTheme(), text)
				if got := measure(core.NewTheme(), text); got != want {
					t.Errorf("%q measures %v, %v in Fyne's theme", text, got, want)
				}
			}
			latin := measure(core.NewTheme(), "Churon")
			korean := measure(core.NewTheme(), "추론 한국어 똠 뷁")
			if korean.Height != latin.Height {
				t.Errorf("Korean text is %v tall, Latin %v", korean.Height, latin.Height)
			}
			if korean.Width < 4*size {
				t.Errorf("Korean text measures %v wide at %v points: not drawn from a Hangul face?", korean.Width, size)
			}
			if s.style.Monospace {
				// Korean in code keeps to the grid: a syllable is two
				// columns (to the shaper's rounding of each advance to
				// 1/64 point).
				if k, l := measure(core.NewTheme(), "한글 code"), measure(core.NewTheme(), "abcd code"); math.Abs(float64(k.Width-l.Width)) > 0.1 {
					t.Errorf("monospaced %q is %v wide, %q %v", "한글 code", k.Width, "abcd code", l.Width)
				}
			}
		})
	}
}

// TestBoldHangul: bold Korean is drawn bold (Fyne's bold font has no
// Hangul, and its fallback would draw it regular).
func TestBoldHangul(t *testing.T) {
	a := test.NewTempApp(t)
	a.Settings().SetTheme(core.NewTheme())
	ink := func(style fyne.TextStyle) int {
		l := widget.NewLabelWithStyle("한국어 대화 새 모델", fyne.TextAlignLeading, style)
		w := test.NewWindow(l)
		defer w.Close()
		w.Resize(fyne.NewSize(400, 60))
		return inked(w.Canvas().Capture())
	}
	regular, bold := ink(fyne.TextStyle{}), ink(fyne.TextStyle{Bold: true})
	t.Logf("inked pixels: regular %d, bold %d", regular, bold)
	if regular < 200 {
		t.Fatalf("the Korean text inked %d pixels", regular)
	}
	if bold < regular*115/100 {
		t.Errorf("bold Korean has %d inked pixels, regular %d: not drawn bold", bold, regular)
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
