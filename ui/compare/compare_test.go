package compare

import (
	"context"
	"image"
	"image/color"
	"image/draw"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/test"

	"github.com/churon/churon/app/api/compare"
	appcompare "github.com/churon/churon/app/compare"
	"github.com/churon/churon/internal/uitest"
	"github.com/churon/churon/models/header"
	"github.com/churon/churon/models/hub/hubtest"
	"github.com/churon/churon/models/library"
	"github.com/churon/churon/models/synth"
	"github.com/churon/churon/ui/core"
	"github.com/churon/churon/ui/locale"
)

// harness is the whole window over a real session (uitest.NewWindow),
// with the Compare page's place in it at hand.
type harness struct{ *uitest.Window }

func newHarness(t *testing.T, o uitest.Options) *harness { return &harness{uitest.NewWindow(t, o)} }

// screen is the Compare page's place in the window.
func (h *harness) screen() *Screen { return h.Screens().Compare.(*Screen) }

// compareHarness is the window over a library folder holding the given
// synthetic models: one model (same seed) in each file type, so they are
// quantizations of one model.
func compareHarness(t *testing.T, types ...string) (*harness, []string) {
	t.Helper()
	l, paths := uitest.LocalLibrary(t, types...)
	return newHarness(t, uitest.Options{Models: &l}), paths
}

// openCompare opens the page and waits for the library to be listed.
func (h *harness) openCompare(n int) *comparePage {
	h.T.Helper()
	test.Tap(uitest.FindButton(h.T, h.W.Content(), "Compare"))
	p := h.screen().page
	if p == nil || !uitest.Shown(h.W, p.content) {
		h.T.Fatal("the Compare button did not open the page")
	}
	p.threads = 2
	h.Wait("the library to be listed", func() bool { return len(p.pick.rows) == n })
	uitest.Settle(h.W)
	return p
}

// tickAll ticks every listed model, as a person clicks the boxes.
func (h *harness) tickAll(p *comparePage) {
	for _, r := range p.pick.rows {
		uitest.TapCheck(r.check)
	}
}

// runCompare types the prompt, sets the answer length and presses Run,
// then waits for the comparison to end.
func (h *harness) runCompare(p *comparePage, prompt string, maxTokens string) {
	h.T.Helper()
	h.W.Canvas().Focus(p.prompt)
	test.Type(p.prompt, prompt)
	p.maxTok.SetText(maxTokens)
	if p.runBtn.Disabled() {
		h.T.Fatal("Run is disabled with models ticked and a prompt typed")
	}
	test.Tap(p.runBtn)
	if !p.running() {
		h.T.Fatalf("Run did not start a comparison (error line: %q)", p.errLine.Text)
	}
	h.Wait("the comparison to end", func() bool { return !p.running() })
}

// startLong starts a long comparison of two models and waits for the
// first tokens.
func startLong(t *testing.T) (*harness, *comparePage) {
	t.Helper()
	h, _ := compareHarness(t, "F16", "Q8_0")
	p := h.openCompare(2)
	h.tickAll(p)
	test.Type(p.prompt, "Write a long essay.")
	p.maxTok.SetText("4000")
	test.Tap(p.runBtn)
	h.Wait("the first tokens", func() bool { return len(p.cols) == 2 && p.cols[0].text != "" })
	return h, p
}

// TestCompareThreeQuants runs one model in three quantizations through
// the page: the columns fill with the answers, the table has figures for
// every model, the chart is drawn, the tokens where a quantization parts
// from the reference are marked, and the comparison is saved and reopens.
func TestCompareThreeQuants(t *testing.T) {
	h, paths := compareHarness(t, "F16", "Q8_0", "Q4_0")
	p := h.openCompare(3)
	// Columns follow the order the boxes were ticked (the list's order).
	if !p.runBtn.Disabled() {
		t.Error("Run is enabled with no model ticked")
	}
	h.tickAll(p)
	chosen := p.pick.chosen()
	if len(chosen) != 3 {
		t.Fatalf("ticked %d models, want 3", len(chosen))
	}
	h.runCompare(p, "Tell me a short story about a lighthouse.", "24")
	if p.run.err != nil {
		t.Fatalf("the comparison failed: %v (shown: %q)", p.run.err, p.errLine.Text)
	}
	res := p.run.res
	if res == nil || len(res.Models) != 3 {
		t.Fatalf("result: %+v", res)
	}
	if res.Models[res.Reference].Type != "F16" {
		t.Errorf("reference is %s, want the highest precision (F16)", res.Models[res.Reference].Type)
	}
	// Columns: one per model, in the order ticked, each with its answer.
	if len(p.cols) != 3 {
		t.Fatalf("%d columns", len(p.cols))
	}
	for i, c := range p.cols {
		if c.title.Text != core.ModelLabel(chosen[i]) {
			t.Errorf("column %d is %q, want %q", i, c.title.Text, core.ModelLabel(chosen[i]))
		}
		if c.md.Text() == "" || c.md.Text() != res.Models[i].Output {
			t.Errorf("column %d shows %q, the model answered %q", i, c.md.Text(), res.Models[i].Output)
		}
		if !strings.Contains(uitest.Text(c.content), "tokens") {
			t.Errorf("column %d has no token count: %q", i, uitest.Text(c.content))
		}
	}
	// The table: a row per figure, a column per model, all filled in.
	if got := p.figures.Value(0, 1); !strings.Contains(got, "tiny-llama-F16") || !strings.Contains(got, "★") {
		t.Errorf("first model column heading %q: want its name and the reference star", got)
	}
	for f := figure(0); f < numFigures; f++ {
		for m := 1; m <= 3; m++ {
			if v := p.figures.Value(int(f)+1, m); v == "" || v == "—" {
				t.Errorf("%s of model %d is %q", f.name(), m, v)
			}
		}
	}
	if v := p.figures.Value(int(figTop1)+1, res.Reference+1); v != "100.0 %" {
		t.Errorf("the reference agrees with itself %s, want 100.0 %%", v)
	}
	// Marks: every position where a model's first choice differs is
	// tinted, and the smallest quantization differs somewhere.
	total := 0
	for i, c := range p.cols {
		if i == res.Reference {
			if c.diff.Differing() != 0 {
				t.Error("the reference marks its own answer")
			}
			continue
		}
		want := 0
		for _, a := range res.Models[i].Quality.Answer.Agree {
			if !a {
				want++
			}
		}
		if !c.diffBox.Visible() || c.diff.Differing() != want {
			t.Errorf("column %d marks %d tokens (shown %v), the comparison found %d disagreements", i, c.diff.Differing(), c.diffBox.Visible(), want)
		}
		if len(c.diff.toks) != len(res.Models[res.Reference].Pieces) {
			t.Errorf("column %d marks %d tokens of a %d-token answer", i, len(c.diff.toks), len(res.Models[res.Reference].Pieces))
		}
		total += want
	}
	q4 := slices.Index(chosen, paths[2])
	if q := res.Models[q4].Quality; q.KLDMean <= 0 || q.Top1Agreement >= 1 || total == 0 {
		t.Errorf("Q4_0 against F16: KLD %v, agreement %v, %d marked: want a visible difference", q.KLDMean, q.Top1Agreement, total)
	}
	// The chart.
	if !p.chart.content.Visible() || p.chart.img.Image == nil || p.chart.img.Image.Bounds().Dx() < 100 {
		t.Error("no chart")
	} else if uitest.Colours(p.chart.img.Image) < 4 {
		t.Error("the chart is blank")
	}
	if p.exportMD.Disabled() || p.exportHTML.Disabled() {
		t.Error("export is disabled after a finished comparison")
	}
	// Export both ways, the file dialog answered with a path.
	out := t.TempDir()
	saveAs := compareSaveDialog
	t.Cleanup(func() { compareSaveDialog = saveAs })
	compareSaveDialog = func(_ *comparePage, name, ext string, save func(string)) {
		if !strings.HasSuffix(name, ext) || !strings.HasPrefix(name, "F16-vs-") {
			t.Errorf("suggested file name %q (%s)", name, ext)
		}
		save(filepath.Join(out, "cmp"+ext))
	}
	test.Tap(p.exportMD)
	h.Wait("the Markdown export", func() bool { return strings.HasPrefix(p.status.Text, "Saved cmp.md") })
	test.Tap(p.exportHTML)
	h.Wait("the HTML export", func() bool { return strings.HasPrefix(p.status.Text, "Saved cmp.html") })
	md, _ := os.ReadFile(filepath.Join(out, "cmp.md"))
	html, _ := os.ReadFile(filepath.Join(out, "cmp.html"))
	chart, _ := os.ReadFile(filepath.Join(out, "cmp.png"))
	if !strings.Contains(string(md), "](cmp.png)") || !strings.Contains(string(md), "Tell me a short story") || len(chart) < 1000 {
		t.Errorf("Markdown export: %d bytes, chart %d bytes", len(md), len(chart))
	}
	if !strings.Contains(string(html), "data:image/png;base64,") {
		t.Errorf("HTML export has no chart (%d bytes)", len(html))
	}

	// Saved, listed and reopened.
	var listed int
	h.Wait("the comparison to be saved", func() bool {
		cs, err := h.St.ListComparisons(context.Background(), 10)
		listed = len(cs)
		return err == nil && listed == 1
	})
	p.prompt.SetText("")
	p.layoutColumns(1)
	test.Tap(p.history)
	h.Wait("the list of past comparisons", func() bool {
		top := h.W.Canvas().Overlays().Top()
		return top != nil && strings.Contains(uitest.Text(top), "F16 vs")
	})
	test.Tap(uitest.OverlayButton(t, h.W, "Open"))
	h.Wait("the comparison to reopen", func() bool { return len(p.cols) == 3 && p.run != nil && p.run.res != nil })
	if p.prompt.Text != "Tell me a short story about a lighthouse." {
		t.Errorf("reopened prompt %q", p.prompt.Text)
	}
	for i, c := range p.cols {
		if c.md.Text() != res.Models[i].Output {
			t.Errorf("reopened column %d: %q", i, c.md.Text())
		}
	}
	if p.figures.Value(int(figKLDMean)+1, 3) == "—" || p.chart.img.Image == nil {
		t.Error("the reopened comparison lacks its figures or chart")
	}
}

// TestCompareKorean types a Korean prompt: it reaches the models intact
// and the answers stream into the columns.
func TestCompareKorean(t *testing.T) {
	h, _ := compareHarness(t, "Q8_0", "Q4_0")
	p := h.openCompare(2)
	h.tickAll(p)
	const prompt = "양자화가 모델의 품질에 어떤 영향을 주는지 설명해 주세요."
	h.runCompare(p, prompt, "12")
	if p.run.err != nil {
		t.Fatalf("the comparison failed: %v", p.run.err)
	}
	if p.run.res.Prompt != prompt || p.prompt.Text != prompt {
		t.Errorf("the prompt reached the comparison as %q (entry %q)", p.run.res.Prompt, p.prompt.Text)
	}
	for i, c := range p.cols {
		if c.md.Text() == "" {
			t.Errorf("column %d is empty", i)
		}
	}

	// In a Korean window the page keeps the comparison it showed.
	h.Core.SetLanguage("ko")
	t.Cleanup(func() { locale.Set("en") })
	k := h.screen().page
	if k == nil || k == p || !uitest.Shown(h.W, k.content) {
		t.Fatal("the page was not made again in Korean")
	}
	uitest.Settle(h.W)
	page := uitest.Text(k.content)
	for _, want := range []string{"모델 비교", "[실행]", "수치", "1순위 일치율"} {
		if !strings.Contains(page, want) {
			t.Errorf("the Korean page lacks %q", want)
		}
	}
	if len(k.cols) != 2 || k.cols[0].md.Text() != p.cols[0].md.Text() || k.prompt.Text != prompt {
		t.Error("the rebuilt page lost the comparison")
	}

	// The chart speaks Korean too, in the page's font: its title is the
	// one Fyne draws for the translated text, not the chart's own bitmap
	// font (which has no Hangul: it drew "?" for each letter).
	chart, ok := k.chart.img.Image.(*image.RGBA)
	if !ok || !k.chart.content.Visible() {
		t.Fatalf("the Korean page shows no chart (%T)", k.chart.img.Image)
	}
	title := lang.X("compare.chart.title", "KL divergence per answer token (nats)")
	if !strings.Contains(title, "발산") {
		t.Fatalf("the chart's title is not translated: %q", title)
	}
	ink := lightInk(chart)
	want := chartText(title, ink)
	if inked(want) == 0 {
		t.Fatal("Fyne drew the Korean title empty")
	}
	// The title as Fyne draws it on the chart's ground, against the
	// chart's title area.
	r := want.Bounds().Sub(want.Bounds().Min).Add(image.Pt(8, 6))
	exp := image.NewRGBA(r)
	draw.Draw(exp, r, image.NewUniform(chart.RGBAAt(0, 0)), image.Point{}, draw.Src)
	draw.Draw(exp, r, want, want.Bounds().Min, draw.Over)
	if bad := differing(chart, exp, r); bad > inked(want)/20 {
		t.Errorf("the chart's title area differs from Fyne's drawing of %q in %d pixels (the title has %d)", title, bad, inked(want))
	}
}

// lightInk is the colour the chart's title is drawn in: the darkest (or
// on a dark ground, the lightest) colour in its top-left corner.
func lightInk(img *image.RGBA) color.RGBA {
	bg := img.RGBAAt(0, 0)
	best, far := bg, 0
	for y := 0; y < 30; y++ {
		for x := 0; x < 200; x++ {
			c := img.RGBAAt(x, y)
			if d := absDiff(c.R, bg.R) + absDiff(c.G, bg.G) + absDiff(c.B, bg.B); d > far {
				best, far = c, d
			}
		}
	}
	return best
}

// inked counts the pixels of a text picture that are mostly ink.
func inked(img image.Image) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if _, _, _, a := img.At(x, y).RGBA(); a > 0xc000 {
				n++
			}
		}
	}
	return n
}

// differing counts the pixels within r where a and b differ visibly.
func differing(a, b *image.RGBA, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			p, q := a.RGBAAt(x, y), b.RGBAAt(x, y)
			if absDiff(p.R, q.R)+absDiff(p.G, q.G)+absDiff(p.B, q.B) > 24 {
				n++
			}
		}
	}
	return n
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

// TestCompareStop stops a long comparison while the first model answers:
// it ends at once, says so, and saves nothing.
func TestCompareStop(t *testing.T) {
	h, p := startLong(t)
	if p.runBtn.Text != "Stop" {
		t.Fatalf("the button reads %q while running", p.runBtn.Text)
	}
	test.Tap(p.runBtn)
	h.Wait("the comparison to stop", func() bool { return !p.running() })
	if !strings.Contains(p.status.Text, "Stopped") {
		t.Errorf("status after Stop: %q", p.status.Text)
	}
	if n := len([]rune(p.cols[0].text)); n == 0 {
		t.Error("the text streamed before Stop is gone")
	}
	// Cut short: the first model did not reach its length, the second
	// never started.
	if p.cols[0].tokens >= 4000 || p.cols[1].text != "" {
		t.Errorf("Stop did not stop: %d tokens, second column %q", p.cols[0].tokens, p.cols[1].text)
	}
	if p.runBtn.Text != "Run" {
		t.Errorf("the button reads %q after stopping", p.runBtn.Text)
	}
	if cs, _ := h.St.ListComparisons(context.Background(), 10); len(cs) != 0 {
		t.Errorf("a stopped comparison was saved: %v", cs)
	}
}

// TestCompareErrors: models that cannot be compared, or a file that went
// missing, are explained in words on the page.
func TestCompareErrors(t *testing.T) {
	h, paths := compareHarness(t, "F16", "Q8_0")
	other := synth.Tiny("llama")
	other.Vocab = 400
	odd := filepath.Join(filepath.Dir(paths[0]), "other-vocab.gguf")
	if err := synth.Write(odd, other); err != nil {
		t.Fatal(err)
	}
	p := h.openCompare(3)
	for _, r := range p.pick.rows {
		if r.m.Path == paths[0] || r.m.Path == odd {
			uitest.TapCheck(r.check)
		}
	}
	h.runCompare(p, "Hello", "8")
	if !p.errLine.Visible() || !strings.Contains(p.errLine.Text, "do not share a vocabulary") {
		t.Errorf("vocabulary mismatch shown as %q", p.errLine.Text)
	}

	// Untick the odd one, tick the Q8_0, then delete its file.
	for _, r := range p.pick.rows {
		if r.m.Path == odd || r.m.Path == paths[1] {
			uitest.TapCheck(r.check)
		}
	}
	if err := os.Remove(paths[1]); err != nil {
		t.Fatal(err)
	}
	p.prompt.SetText("")
	h.runCompare(p, "Hello", "8")
	if !strings.Contains(p.errLine.Text, "missing") {
		t.Errorf("missing file shown as %q", p.errLine.Text)
	}

	// Bad sampler settings never start a run.
	p.maxTok.SetText("lots")
	test.Tap(p.runBtn)
	if p.running() || !strings.Contains(p.errLine.Text, "Max tokens") {
		t.Errorf("bad max tokens: running %v, error %q", p.running(), p.errLine.Text)
	}
}

// TestCompareMakeQuant makes a Q8_0 copy of a model from the page: the
// progress shows, the copy lands in the library, is ticked, and compares
// with its source. A copy of that copy is made only once the person
// agrees to quantize a quantized model.
func TestCompareMakeQuant(t *testing.T) {
	h, paths := compareHarness(t, "F16")
	p := h.openCompare(1)
	r := p.pick.rows[0]
	uitest.TapCheck(r.check)
	p.pick.startQuantize(r.m, "Q8_0")
	if !p.pick.quantizing() || !p.pick.quantRow.Visible() {
		t.Fatal("no quantization under way")
	}
	q8 := filepath.Join(filepath.Dir(paths[0]), "tiny-llama-Q8_0.gguf")
	h.Wait("the copy to be listed and ticked", func() bool {
		return !p.pick.quantizing() && slices.Contains(p.pick.chosen(), q8)
	})
	if p.errLine.Visible() {
		t.Fatalf("error: %s", p.errLine.Text)
	}
	if !strings.Contains(p.status.Text, "tiny-llama-Q8_0.gguf") {
		t.Errorf("status %q", p.status.Text)
	}
	h.runCompare(p, "Hello there", "8")
	if p.run.err != nil || p.run.res.Models[1].Type != "Q8_0" {
		t.Fatalf("comparison with the copy: %v", p.run.err)
	}

	// From the Q8_0: refused first, then made once confirmed.
	uitest.Settle(h.W)
	var src library.Model
	for _, r := range p.pick.rows {
		if r.m.Path == q8 {
			src = r.m
		}
	}
	p.pick.startQuantize(src, "Q4_0")
	h.Wait("the question", func() bool { return !p.pick.quantizing() && h.W.Canvas().Overlays().Top() != nil })
	if got := uitest.Text(h.W.Canvas().Overlays().Top()); !strings.Contains(got, "already Q8_0") {
		t.Errorf("the question reads %q", got)
	}
	test.Tap(uitest.OverlayButton(t, h.W, "Make it anyway"))
	q4 := filepath.Join(filepath.Dir(paths[0]), "tiny-llama-Q4_0.gguf")
	h.Wait("the copy of the copy", func() bool { return slices.Contains(p.pick.chosen(), q4) })
}

// TestExportBaseName keeps titles readable as file names.
func TestExportBaseName(t *testing.T) {
	for in, want := range map[string]string{
		"F16 vs Q4_0: Tell me a story…": "F16-vs-Q4_0-Tell-me-a-story…",
		"양자화 비교":                        "양자화-비교",
		"../../etc":                     "etc",
		"":                              "comparison",
	} {
		if got := exportBaseName(in); got != want {
			t.Errorf("exportBaseName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := quantOutPath(appcompare.Runner{}, "/lib", "/x/qwen3-1.7b-F16.gguf", "Q4_K_M"); got != filepath.Join("/lib", "qwen3-1.7b-Q4_K_M.gguf") {
		t.Errorf("quantOutPath: %s", got)
	}
	if got := quantOutPath(appcompare.Runner{}, "/lib", "/x/stories260K.gguf", "Q8_0"); got != filepath.Join("/lib", "stories260K-Q8_0.gguf") {
		t.Errorf("quantOutPath: %s", got)
	}
}

// TestCompareScreenshot compares stories260K with its Q4_K_M and Q2_K copies
// (made with engine/quantize) on a story prompt, as a person would, and
// checks the picture of the page. With $CHURON_SCREENSHOTS set to a
// folder it saves it there (docs/screenshots/compare.png is made this
// way).
func TestCompareScreenshot(t *testing.T) {
	stories := uitest.StoriesPath(t)
	h, _ := compareHarness(t)
	dir := h.screen().models.Dir()
	src := filepath.Join(dir, "stories260K-F32.gguf")
	if err := os.Symlink(stories, src); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
	for _, typ := range []string{"Q4_K_M", "Q2_K"} {
		if _, err := appcompare.Quantize(context.Background(), stories, filepath.Join(dir, "stories260K-"+typ+".gguf"), compare.QuantizeOptions{Type: typ}); err != nil {
			t.Fatal(err)
		}
	}
	h.A.Settings().SetTheme(uitest.DarkTheme{Theme: core.NewTheme()})
	h.W.Resize(fyne.NewSize(1280, 1740))
	p := h.openCompare(3)
	// Tick in precision order, so the columns read F32, Q4_K_M, Q2_K.
	for _, typ := range []string{"F32", "Q4_K_M", "Q2_K"} {
		for _, r := range p.pick.rows {
			if strings.HasSuffix(r.m.Path, "-"+typ+".gguf") {
				uitest.TapCheck(r.check)
			}
		}
	}
	h.runCompare(p, "Once upon a time, there was a little dog named Max. He", "64")
	if p.run.err != nil {
		t.Fatalf("the comparison failed: %v", p.run.err)
	}
	p.clearError()
	p.scroll.ScrollToTop()
	uitest.Settle(h.W)
	img := h.W.Canvas().Capture()
	if uitest.Colours(img) < 16 {
		t.Errorf("the picture has %d colours: blank?", uitest.Colours(img))
	}
	for i, c := range p.cols {
		if c.md.Text() == "" {
			t.Errorf("column %d is empty", i)
		}
		// Every column sits within the window, side by side.
		pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(c.content)
		if pos.X+c.content.Size().Width > h.W.Canvas().Size().Width+1 || pos.Y+c.content.Size().Height > h.W.Canvas().Size().Height {
			t.Errorf("column %d at %v size %v is cut off", i, pos, c.content.Size())
		}
	}
	uitest.SaveScreenshot(t, "compare.png", img)
}

// TestCompareRebuildWhileRunning switches the language while a
// comparison runs: the new page shows the text so far, goes on with the
// run's events, and stops it.
func TestCompareRebuildWhileRunning(t *testing.T) {
	h, p := startLong(t)
	h.Core.SetLanguage("en") // rebuilds the window, as a language change does
	k := h.screen().page
	if k == p || !k.running() || len(k.cols) != 2 || k.cols[0].text == "" {
		t.Fatalf("the new page does not carry the running comparison (running %v)", k.running())
	}
	before := len(k.cols[0].text)
	h.Wait("more text on the new page", func() bool { return len(k.cols[0].text) > before })
	test.Tap(k.runBtn)
	h.Wait("the comparison to stop", func() bool { return !k.running() })
	if !strings.Contains(k.status.Text, "Stopped") {
		t.Errorf("status after Stop: %q", k.status.Text)
	}
}

// TestCompareSiblingDownload offers the other quantizations of a model
// downloaded from the hub and downloads one: it shows up in the list.
func TestCompareSiblingDownload(t *testing.T) {
	hub := hubtest.New(t)
	opt := uitest.HubLibrary(t, hub)
	h := newHarness(t, uitest.Options{Models: &opt})
	s := h.screen().models
	f32 := s.DestFor(hubtest.Repo, "tiny-llama-F32.gguf")
	if err := os.MkdirAll(filepath.Dir(f32), 0o755); err != nil {
		t.Fatal(err)
	}
	src := hub.File(hubtest.Repo, "tiny-llama-F32.gguf")
	if err := os.WriteFile(f32, src.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	lib, err := library.Open(s.Dir(), header.Local)
	if err != nil {
		t.Fatal(err)
	}
	if err := lib.Record(f32, library.Origin{Repo: hubtest.Repo, Revision: "main", File: "tiny-llama-F32.gguf", SHA256: src.SHA256()}); err != nil {
		t.Fatal(err)
	}
	p := h.openCompare(1)
	p.pick.showSiblings(p.pick.rows[0].m)
	h.Wait("the repository's quantizations", func() bool {
		top := h.W.Canvas().Overlays().Top()
		return top != nil && strings.Contains(uitest.Text(top), "Q8_0")
	})
	if got := uitest.Text(h.W.Canvas().Overlays().Top()); !strings.Contains(got, "[On this computer]") {
		t.Errorf("the F32 one is not shown as present: %q", got)
	}
	test.Tap(uitest.OverlayButton(t, h.W, "Download"))
	h.Wait("the download to be listed", func() bool { return len(p.pick.rows) == 2 })
	uitest.TapCheck(p.pick.rows[0].check)
	uitest.TapCheck(p.pick.rows[1].check)
	h.runCompare(p, "Hello", "6")
	if p.run.err != nil {
		t.Fatalf("comparing with the downloaded sibling: %v", p.run.err)
	}
}

// TestTokenFlowWrapsWholeWords: a word split into tokens (" bo" + "x")
// moves to the next line whole; only a word longer than a line breaks
// inside.
func TestTokenFlowWrapsWholeWords(t *testing.T) {
	test.NewTempApp(t)
	f := newTokenFlow()
	var toks []tokenMark
	for range 12 {
		toks = append(toks, tokenMark{Text: " big"}, tokenMark{Text: " bo"}, tokenMark{Text: "x", Differs: true})
	}
	long := []tokenMark{{Text: " "}}
	for range 40 {
		long = append(long, tokenMark{Text: "ab"})
	}
	f.SetTokens(append(toks, long...))
	w := test.NewWindow(f)
	defer w.Close()
	w.Resize(fyne.NewSize(230, 600))
	r := test.WidgetRenderer(f).(*tokenFlowRenderer)
	r.Layout(f.Size())
	lines := map[float32]bool{}
	for i, p := range r.pieces {
		if p.text == nil {
			continue
		}
		lines[p.text.Position().Y] = true
		if p.text.Text == "x" && r.pieces[i-1].text.Position().Y != p.text.Position().Y {
			t.Fatalf("piece %d: %q wrapped away from %q", i, p.text.Text, r.pieces[i-1].text.Text)
		}
	}
	if len(lines) < 4 {
		t.Fatalf("%d lines at 230 px: the flow did not wrap", len(lines))
	}
	// The 80-character word is wider than the line: it breaks inside.
	first, last := r.pieces[len(toks)+1].text.Position().Y, r.pieces[len(r.pieces)-1].text.Position().Y
	if first == last {
		t.Error("a word longer than the line was not broken")
	}
}

// TestCompareFitsTheWindow: at the window's first size (desktop.Run's
// 1180×780) and in a narrower one, nothing on the Compare page is wider
// than the page: no sideways scroll bar (the sampler fields had one), and
// every field and the Run button are in view.
func TestCompareFitsTheWindow(t *testing.T) {
	h, _ := compareHarness(t, "Q8_0", "Q4_0")
	for _, size := range []fyne.Size{{Width: 1180, Height: 780}, {Width: 900, Height: 700}} {
		h.W.Resize(size)
		p := h.openCompare(2)
		uitest.Settle(h.W)
		uitest.Walk(p.content, func(o fyne.CanvasObject) bool {
			if s, ok := o.(*container.Scroll); ok && s != p.scroll && s.Direction != container.ScrollVerticalOnly && s.Direction != container.ScrollNone {
				if s.Content.MinSize().Width > s.Size().Width {
					t.Errorf("at %v a sideways scroll: content %v wide in %v", size, s.Content.MinSize().Width, s.Size().Width)
				}
			}
			return o.Visible()
		})
		page := fyne.CurrentApp().Driver().AbsolutePositionForObject(p.content).X + p.content.Size().Width
		for _, o := range []fyne.CanvasObject{p.maxTok, p.temp, p.seed, p.refSel, p.runBtn} {
			if right := fyne.CurrentApp().Driver().AbsolutePositionForObject(o).X + o.Size().Width; right > page+1 {
				t.Errorf("at %v a field ends at %v, past the page's edge at %v", size, right, page)
			}
		}
		test.Tap(uitest.FindButton(h.T, h.W.Content(), "Compare")) // closes it again
	}
}
