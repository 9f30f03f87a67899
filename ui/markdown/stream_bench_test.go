package markdown

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// BenchmarkStreamingRender is one streamed frame of a long answer: the
// View already shows several paragraphs (about 4 KB) and the last one
// grows by a few words, as the chat renders it once a frame.
//
//	CGO_ENABLED=0 go test -tags ci -run '^$' -bench StreamingRender ./ui/markdown/
func BenchmarkStreamingRender(b *testing.B) {
	test.NewTempApp(b)
	v := NewView(Options{})
	v.Resize(fyne.NewSize(820, 600))
	para := strings.Repeat("The model answers a question about rivers and bridges, word by word, as people read. ", 12)
	text := strings.Repeat(para+"\n\n", 4) + para
	v.SetText(text)
	v.Resize(fyne.NewSize(820, v.MinSize().Height))
	b.ResetTimer()
	for i := range b.N {
		text += "more words "
		if i%200 == 199 {
			text += "\n\n" // a new paragraph now and then, as an answer goes on
		}
		v.SetText(text)
		v.Resize(fyne.NewSize(820, v.MinSize().Height))
	}
}
