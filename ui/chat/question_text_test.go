package chat

import (
	"image"
	"strconv"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// questionTexts are texts a question shows: short, wrapped over lines,
// Hangul, lines of their own.
var questionTexts = []string{
	"Hi",
	"Why does the quick brown fox jump over the lazy dog, and what does the dog think of it afterwards?",
	"김치찌개를 맛있게 끓이는 방법을 단계별로 알려 주세요. 돼지고기와 두부는 언제 넣나요?",
	"first line\nsecond line, which is long enough to wrap at the width of the bubble\n\nafter a blank one",
}

// selectableLabel is the widget questionText stands in for: the
// question's text as build made it before.
func selectableLabel(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.Wrapping = fyne.TextWrapWord
	l.Selectable = true
	return l
}

// textWidget is what the twins share.
type textWidget interface {
	fyne.Widget
	SetText(string)
	SelectedText() string
}

// shown lays w out at a bubble's width in a window of its own.
func shown(t testing.TB, w fyne.CanvasObject) fyne.Window {
	t.Helper()
	win := test.NewTempWindow(t, container.NewVBox(w))
	win.Resize(fyne.NewSize(320, 400))
	return win
}

// samePixels reports whether a and b are the same image.
func samePixels(a, b image.Image) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				return false
			}
		}
	}
	return true
}

// doubleTap double-taps w's selection (label.go: the first of a
// selectable label's objects) at p, which selects the word there.
func doubleTap(t *testing.T, w fyne.Widget, p fyne.Position) {
	t.Helper()
	objs := test.WidgetRenderer(w).Objects()
	sel, ok := objs[0].(fyne.DoubleTappable)
	if len(objs) != 2 || !ok {
		t.Fatalf("the label's first object is %T, not its selection", objs[0])
	}
	sel.DoubleTapped(&fyne.PointEvent{Position: p})
}

// TestQuestionTextIsTheLabel pins questionText to widget.Label: made
// with a text, or given one after another (as a reused shell is), with a
// word selected and then a new text, it paints the same pixels and
// selects the same text.
func TestQuestionTextIsTheLabel(t *testing.T) {
	test.NewTempApp(t)
	for _, text := range questionTexts {
		for _, c := range []struct {
			name string
			run  func(t *testing.T, w textWidget)
		}{
			{"made", func(*testing.T, textWidget) {}},
			{"set", func(_ *testing.T, w textWidget) { w.SetText(text) }},
			{"selected", func(t *testing.T, w textWidget) {
				doubleTap(t, w, fyne.NewPos(12, 12))
			}},
			{"selected then set", func(t *testing.T, w textWidget) {
				doubleTap(t, w, fyne.NewPos(12, 12))
				w.SetText(questionTexts[1])
			}},
		} {
			t.Run(c.name, func(t *testing.T) {
				first := text
				if c.name == "set" {
					first = "an earlier question, of another length than this one"
				}
				label, ours := selectableLabel(first), newQuestionText(first)
				// One after the other: a selection shows only while its
				// label has the focus, which the next double tap takes.
				lw := shown(t, label)
				c.run(t, label)
				want := lw.Canvas().Capture()
				ow := shown(t, ours)
				c.run(t, ours)
				if !samePixels(want, ow.Canvas().Capture()) {
					t.Errorf("%q: questionText paints other pixels than widget.Label", text)
				}
				if got, want := ours.SelectedText(), label.SelectedText(); got != want {
					t.Errorf("%q: selected %q, widget.Label %q", text, got, want)
				}
				if got, want := ours.MinSize(), label.MinSize(); got != want {
					t.Errorf("%q: min size %v, widget.Label %v", text, got, want)
				}
			})
		}
	}
}

// BenchmarkQuestionSetText: what a reused question's SetText costs, in
// a window at a bubble's width, widget.Label's against questionText's
// (-benchmem: the bytes are Fyne's wrapping).
func BenchmarkQuestionSetText(b *testing.B) {
	test.NewTempApp(b)
	for _, c := range []struct {
		name string
		make func(string) textWidget
	}{
		{"label", func(s string) textWidget { return selectableLabel(s) }},
		{"questionText", func(s string) textWidget { return newQuestionText(s) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			w := c.make(questionTexts[0])
			win := test.NewTempWindow(b, container.NewVBox(w))
			win.Resize(fyne.NewSize(320, 400))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				// A new text each time, as scrolling brings: Fyne caches
				// the measures of texts it has seen.
				w.SetText(questionTexts[1+i%3] + " " + c.name + strconv.Itoa(i))
			}
		})
	}
}
