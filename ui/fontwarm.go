package ui

import (
	"sync"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// Fyne's own fonts have no Han or kana (Hangul is the theme's own, see
// core.Theme): the first time it measures such a rune it looks the
// system's fonts up and parses the one that has it — a CJK font of tens of
// megabytes, about 0.3 s — on its goroutine, in the middle of the first
// frame. warmFonts does that work on another goroutine as soon as the
// sidebar's first page is read, so that by the time the rows are measured
// the face is in Fyne's font map.
//
// It measures through a font resource of its own, so that it touches no
// face list the window's text uses (those are not safe for concurrent
// use) and reads no theme; Fyne's font map itself is behind a lock, and
// it looks the rune up for the same family (sans-serif) as the window's
// text does, so the face it loads is the one the window then finds.

var (
	warmOnce sync.Once
	// warmSource is Fyne's regular face under the family name Fyne gives
	// its fallback lookups for regular text.
	warmSource = fyne.NewStaticResource("sans-serif", theme.DefaultTextFont().Content())
)

// warmFonts loads, once per run and off Fyne's goroutine, the system
// fonts that draw the runes of texts Fyne's fonts lack.
func warmFonts(texts []string) {
	sample := fallbackSample(texts)
	if sample == "" {
		return
	}
	warmOnce.Do(func() {
		go func() {
			if a := fyne.CurrentApp(); a != nil && a.Driver() != nil {
				a.Driver().RenderedTextSize(sample, theme.TextSize(), fyne.TextStyle{}, warmSource)
			}
		}()
	})
}

// fallbackSample is one rune of each script in texts that neither Fyne's
// fonts nor the theme's Hangul faces have (those beyond Latin, Greek,
// Cyrillic, Hangul and the common signs), a few at most; "" when there
// are none.
func fallbackSample(texts []string) string {
	var out []rune
	seen := map[*unicode.RangeTable]bool{}
	for _, t := range texts {
		for _, r := range t {
			if r < 0x0370 || unicode.In(r, unicode.Latin, unicode.Greek, unicode.Cyrillic, unicode.Hangul, unicode.Common, unicode.Inherited) {
				continue
			}
			s := scriptOf(r)
			if seen[s] {
				continue
			}
			seen[s] = true
			out = append(out, r)
			if len(out) == 4 {
				return string(out)
			}
		}
	}
	return string(out)
}

// scripts are those fallbackSample tells apart; others count as one.
var scripts = []*unicode.RangeTable{unicode.Han, unicode.Hiragana, unicode.Katakana,
	unicode.Arabic, unicode.Hebrew, unicode.Thai, unicode.Devanagari}

func scriptOf(r rune) *unicode.RangeTable {
	for _, s := range scripts {
		if unicode.Is(s, r) {
			return s
		}
	}
	return nil
}
