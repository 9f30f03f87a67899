package ui

import (
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
)

// TestFallbackSample: one rune of each script Fyne's fonts lack, across
// the texts; none for Latin, Greek, Cyrillic, signs and Hangul (the
// theme's own).
func TestFallbackSample(t *testing.T) {
	for _, tc := range []struct {
		texts []string
		want  string
	}{
		{[]string{"Chat 12: hello", "café — “quotes” 1/2 ½ ✓"}, ""},
		{[]string{"Привет, мир", "Γειά σου"}, ""},
		{[]string{"김치찌개 recipe"}, ""},
		{[]string{"hello", "서울 날씨", "東京 tokyo"}, "東"},
		{[]string{"日本語とカタカナ", "한글"}, "日とカ"},
		{[]string{"مرحبا", "שלום", "สวัสดี", "नमस्ते", "서울"}, "مשสन"},
		{nil, ""},
	} {
		if got := fallbackSample(tc.texts); got != tc.want {
			t.Errorf("fallbackSample(%q) = %q, want %q", tc.texts, got, tc.want)
		}
	}
}

// TestWarmFontsAlongsideTheWindow: the fonts are loaded on another
// goroutine while the window's goroutine measures the same runes (the
// race detector watches), and the window's measures come out as without
// the warming.
func TestWarmFontsAlongsideTheWindow(t *testing.T) {
	test.NewTempApp(t)
	const text = "서울의 날씨 東京"
	before := fyne.MeasureText(text, theme.TextSize(), fyne.TextStyle{Bold: true})
	warmOnce = sync.Once{}
	warmFonts([]string{"plain", text})
	var sizes []fyne.Size
	for range 20 {
		sizes = append(sizes, fyne.MeasureText(text, theme.TextSize(), fyne.TextStyle{}))
	}
	for _, s := range sizes[1:] {
		if s != sizes[0] {
			t.Fatalf("measures differ while the fonts warm: %v", sizes)
		}
	}
	if after := fyne.MeasureText(text, theme.TextSize(), fyne.TextStyle{Bold: true}); after != before {
		t.Errorf("bold text measures %v, %v before", after, before)
	}
}
