package core_test

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"

	"github.com/churon/churon/internal/uitest"
	"github.com/churon/churon/ui/core"
	"github.com/churon/churon/ui/markdown"
)

// sampleMarkdown exercises every block the renderer knows.
const sampleMarkdown = "## Reading a GGUF header\n\n" +
	"A GGUF file starts with the magic `GGUF`, a **version** and two counts. Go reads it with *encoding/binary*:\n\n" +
	"```go\nvar hdr struct {\n\tMagic   [4]byte\n\tVersion uint32\n\tTensors uint64\n\tKVs     uint64\n}\nerr := binary.Read(f, binary.LittleEndian, &hdr)\n```\n\n" +
	"| Type | Bits per weight | Use |\n|---|--:|---|\n| Q4_K_M | 4.8 | everyday chat |\n| Q8_0 | 8.5 | near lossless |\n\n" +
	"1. Check the magic.\n2. Read the metadata:\n   - `general.architecture`\n   - `tokenizer.ggml.model`\n3. Map the tensors.\n\n" +
	"> Tip: see the [GGUF spec](https://github.com/ggml-org/ggml/blob/master/docs/gguf.md).\n\n" +
	"- [x] 한국어도 잘 보입니다\n- [ ] ~~done~~ later\n"

// TestMarkdownSample renders a sample answer in the app's theme and checks
// the picture has the code panel and table header tints. With
// $CHURON_SCREENSHOTS set to a folder it also saves the picture there
// (docs/screenshots/markdown-sample.png is made this way).
func TestMarkdownSample(t *testing.T) {
	a := test.NewTempApp(t)
	a.Settings().SetTheme(core.NewTheme())
	v := markdown.NewView(markdown.Options{})
	v.SetText(sampleMarkdown)
	w := test.NewWindow(container.NewPadded(v))
	w.Resize(fyne.NewSize(720, 620))
	img := w.Canvas().Capture()
	if n := len(v.Blocks()); n != 7 {
		t.Errorf("%d blocks, want 7", n)
	}
	if uitest.Colours(img) < 8 {
		t.Errorf("the rendering has %d colours: blank?", uitest.Colours(img))
	}
	uitest.SaveScreenshot(t, "markdown-sample.png", img)
}
