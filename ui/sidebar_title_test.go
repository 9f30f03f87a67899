package ui

import (
	"strings"
	"testing"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// TestCutTitle: a title that fits is shown whole; one that does not is
// its longest beginning that fits with an ellipsis, measured as Fyne
// draws it, with no space before the ellipsis and no mark parted from its
// letter; and it takes a few measures, not one a rune.
func TestCutTitle(t *testing.T) {
	const maxMeasures = 6
	test.NewTempApp(t)
	size := theme.TextSize()
	width := func(s string) float32 { return fyne.MeasureText(s, size, fyne.TextStyle{}).Width }
	for _, tc := range []struct {
		title string
		avail float32
	}{
		{"Chat 12: hello", 1000},
		{"Chat 9997: other these were even year only", 200},
		{"Chat 9997: other these were even year only", 120},
		{"AVAVAVAVAVAVAVAVAVAVAVAVAVAVAV To Ty", 150}, // kerned pairs: narrower than their runes
		{"Chat 9998: 공부 하지만 부분 회사 여행 가능합니다", 200},
		{"cafe\u0301 cafe\u0301 cafe\u0301 cafe\u0301 cafe\u0301 cafe\u0301", 120},
		{"word           spaces", width("word    ") + width(ellipsis)},
		{"Wide", 1},
		{"", 50},
	} {
		measures := 0
		got := cutTitle(tc.title, tc.avail, func(s string) float32 { measures++; return width(s) })
		if measures > maxMeasures {
			t.Errorf("cut(%q, %v) measured %d texts, more than %d", tc.title, tc.avail, measures, maxMeasures)
		}
		t.Logf("cut(%q, %v) = %q in %d measures", tc.title, tc.avail, got, measures)
		if width(tc.title) <= tc.avail {
			if got != tc.title {
				t.Errorf("cut(%q, %v) = %q, want it whole: it fits", tc.title, tc.avail, got)
			}
			continue
		}
		head, ok := strings.CutSuffix(got, ellipsis)
		switch {
		case !ok:
			t.Errorf("cut(%q, %v) = %q: no ellipsis", tc.title, tc.avail, got)
			continue
		case width(got) > tc.avail && head != "":
			t.Errorf("cut(%q, %v) = %q, %v wide", tc.title, tc.avail, got, width(got))
		case !strings.HasPrefix(tc.title, head):
			t.Errorf("cut(%q, %v) = %q: not its beginning", tc.title, tc.avail, got)
		case strings.TrimRightFunc(head, unicode.IsSpace) != head:
			t.Errorf("cut(%q, %v) = %q: a space before the ellipsis", tc.title, tc.avail, got)
		}
		rest := []rune(tc.title[len(head):])
		if len(rest) > 0 && unicode.Is(unicode.Mn, rest[0]) {
			t.Errorf("cut(%q, %v) = %q: a mark parted from its letter", tc.title, tc.avail, got)
		}
		// The longest: a rune more (and the spaces before it) no longer fits.
		if i := strings.IndexFunc(tc.title[len(head):], func(r rune) bool { return !unicode.IsSpace(r) }); i >= 0 {
			more := []rune(tc.title[len(head)+i:])
			n := 1
			for n < len(more) && unicode.Is(unicode.Mn, more[n]) {
				n++
			}
			longer := tc.title[:len(head)+i] + string(more[:n])
			if width(longer+ellipsis) <= tc.avail {
				t.Errorf("cut(%q, %v) = %q, but %q fits", tc.title, tc.avail, got, longer+ellipsis)
			}
		}
	}
}

// TestRowTitleAsALabel: a row's title is as tall as a Label, shows the
// title cut to the width it is given, cut again when it is given
// another, and keeps the whole title.
func TestRowTitleAsALabel(t *testing.T) {
	test.NewTempApp(t)
	const title = "Chat 9997: other these were even year only, and more words"
	label := widget.NewLabel(title)
	label.Truncation = fyne.TextTruncateEllipsis
	rt := newRowTitle()
	rt.SetText(title)
	if got, want := rt.MinSize().Height, label.MinSize().Height; got != want {
		t.Errorf("a row title is %v tall, a label %v", got, want)
	}
	shown := func(w float32) string {
		rt.Resize(fyne.NewSize(w, rt.MinSize().Height))
		return rt.text.Text
	}
	wide, narrow := shown(2000), shown(150)
	if wide != title {
		t.Errorf("given room, the title shows %q", wide)
	}
	if !strings.HasSuffix(narrow, ellipsis) || len(narrow) >= len(title) {
		t.Errorf("in 150 the title shows %q", narrow)
	}
	pad := 2 * theme.InnerPadding()
	if w := fyne.MeasureText(narrow, theme.TextSize(), fyne.TextStyle{}).Width; w > 150-pad {
		t.Errorf("%q is %v wide in %v", narrow, w, 150-pad)
	}
	if got := shown(2000); got != title || rt.Text() != title {
		t.Errorf("widened again, the title shows %q (whole: %q)", got, rt.Text())
	}
	rt.SetText("Short")
	if got := rt.text.Text; got != "Short" {
		t.Errorf("after SetText the title shows %q", got)
	}
}
