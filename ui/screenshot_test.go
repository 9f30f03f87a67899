package ui

import (
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"

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
	a.Settings().SetTheme(NewTheme())
	v := markdown.NewView(markdown.Options{})
	v.SetText(sampleMarkdown)
	w := test.NewWindow(container.NewPadded(v))
	w.Resize(fyne.NewSize(720, 620))
	img := w.Canvas().Capture()
	if n := len(v.Blocks()); n != 7 {
		t.Errorf("%d blocks, want 7", n)
	}
	if colours(img) < 8 {
		t.Errorf("the rendering has %d colours: blank?", colours(img))
	}
	saveScreenshot(t, "markdown-sample.png", img)
}

// saveScreenshot writes img as name into $CHURON_SCREENSHOTS when that is
// set (docs/screenshots is made this way); otherwise it does nothing.
func saveScreenshot(t *testing.T, name string, img image.Image) {
	t.Helper()
	dir := os.Getenv("CHURON_SCREENSHOTS")
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
}

func colours(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r >> 8, g >> 8, bl >> 8, a >> 8}] = true
		}
	}
	return len(seen)
}
