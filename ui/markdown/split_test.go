package markdown

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// TestSplitLongWrapsAsWhole: a long paragraph cut into pieces (splitLong)
// wraps into as many lines as the whole text at every width, in English
// and in Korean, and its pieces put together are the text.
func TestSplitLongWrapsAsWhole(t *testing.T) {
	test.NewTempApp(t)
	texts := map[string]string{
		"English":    strings.Repeat("The model answers a question about rivers and bridges, word by word, as people read it. ", 14),
		"Korean":     strings.Repeat("모델이 질문에 답합니다 날씨와 강과 다리에 대해서, 사람들이 읽는 동안 한 단어씩. ", 14),
		"long words": strings.Repeat("supercalifragilisticexpialidocious antidisestablishmentarianism ", 12),
	}
	for name, text := range texts {
		pieces := splitLong([]widget.RichTextSegment{&widget.TextSegment{Style: widget.RichTextStyleInline, Text: text}})
		if len(pieces) < 3 {
			t.Fatalf("%s: %d bytes cut into %d pieces", name, len(text), len(pieces))
		}
		var joined strings.Builder
		for _, p := range pieces {
			ts := p.(*widget.TextSegment)
			if len(ts.Text) > 2*wrapChunk+len(zeroWidthSpace) {
				t.Errorf("%s: a piece of %d bytes", name, len(ts.Text))
			}
			joined.WriteString(strings.ReplaceAll(ts.Text, zeroWidthSpace, ""))
		}
		if joined.String() != text {
			t.Fatalf("%s: the pieces are not the text", name)
		}
		for w := float32(120); w < 1000; w += 13 {
			whole := widget.NewRichText(&widget.TextSegment{Style: widget.RichTextStyleInline, Text: text})
			cut := widget.NewRichText(pieces...)
			for _, rt := range []*widget.RichText{whole, cut} {
				rt.Wrapping = fyne.TextWrapWord
				rt.Resize(fyne.NewSize(w, 100))
			}
			if a, b := whole.MinSize(), cut.MinSize(); a.Height != b.Height {
				t.Errorf("%s at %v wide: whole %v high, in pieces %v", name, w, a.Height, b.Height)
			}
		}
	}
}
