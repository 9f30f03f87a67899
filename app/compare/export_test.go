package compare

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"html"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	api "github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/app/store/storetest"
)

var (
	sampleOnce sync.Once
	sampleRes  *api.Result
	sampleErr  error
)

// sampleResult is one F16 / Q4_0 / F16-again comparison shared by the
// export tests, with a prompt that needs escaping everywhere.
func sampleResult(t *testing.T) *api.Result {
	t.Helper()
	f16 := tinyModel(t, "F16", 320, false)
	q4 := tinyModel(t, "Q4_0", 320, false)
	q8 := tinyModel(t, "Q8_0", 320, false)
	sampleOnce.Do(func() {
		sampleRes, sampleErr = Run(context.Background(), api.Options{
			Models: []string{f16, q8, q4}, Prompt: "<script>alert(1)</script> | 김치 *bold* `code`",
			Sampling: greedy(40), TextTokens: 48,
		}, nil)
	})
	if sampleErr != nil {
		t.Fatal(sampleErr)
	}
	return sampleRes
}

func TestChart(t *testing.T) {
	r := sampleResult(t)
	img := api.Chart(r, api.ChartOptions{Width: 800, Height: 300})
	if b := img.Bounds(); b.Dx() != 800 || b.Dy() != 300 {
		t.Fatalf("bounds %v", b)
	}
	count := func(img image.Image, i int) int {
		c := api.Color(i)
		n := 0
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				r, g, bb, _ := img.At(x, y).RGBA()
				if uint8(r>>8) == c.R && uint8(g>>8) == c.G && uint8(bb>>8) == c.B {
					n++
				}
			}
		}
		return n
	}
	// Lines of both quantized models are drawn; the reference has none
	// (its colour appears in no legend swatch either).
	if n1, n2, n0 := count(img, 1), count(img, 2), count(img, 0); n1 < 200 || n2 < 200 || n0 != 0 {
		t.Errorf("pixels per model colour: ref %d, Q8_0 %d, Q4_0 %d", n0, n1, n2)
	}
	// Q4_0 disagrees more than Q8_0 here, so more of its colour lies in
	// the disagreement lanes under the axis.
	q4, q8 := r.Models[2].Quality.Answer, r.Models[1].Quality.Answer
	if len(q4.Disagreements) == 0 {
		t.Fatalf("Q4_0 agrees everywhere: %+v", q4.Summary)
	}
	t.Logf("disagreements: Q8_0 %d, Q4_0 %d of %d", len(q8.Disagreements), len(q4.Disagreements), q4.Tokens)

	// A model against itself: nothing disagrees, so no lane ticks and no
	// big markers, only the flat line.
	self := *r
	self.Models = []api.ModelResult{r.Models[0], r.Models[0]}
	self.Models[1].Reference = false
	self.Reference = 0
	imgSelf := api.Chart(&self, api.ChartOptions{Width: 800, Height: 300})
	if n := count(imgSelf, 1); n == 0 || n > 3*800 {
		t.Errorf("self chart: %d pixels of the line colour", n)
	}

	// The dark chart has a dark ground and the same lines.
	dark := api.Chart(r, api.ChartOptions{Width: 800, Height: 300, Dark: true})
	if y := luma(dark.At(2, 299)); y > 0.25 {
		t.Errorf("dark chart ground has luma %.2f", y)
	}
	if y := luma(img.At(2, 299)); y < 0.9 {
		t.Errorf("light chart ground has luma %.2f", y)
	}
	if n1, n2 := count(dark, 1), count(dark, 2); n1 < 200 || n2 < 200 {
		t.Errorf("dark chart: pixels per model colour Q8_0 %d, Q4_0 %d", n1, n2)
	}

	var buf bytes.Buffer
	if err := api.WriteChartPNG(&buf, r, api.ChartOptions{}); err != nil {
		t.Fatal(err)
	}
	dec, err := png.Decode(&buf)
	if err != nil || dec.Bounds().Dx() != 960 {
		t.Fatalf("PNG: %v, %v", dec.Bounds(), err)
	}
	// Tiny sizes must not panic.
	for _, sz := range [][2]int{{1, 1}, {40, 30}, {120, 80}} {
		api.Chart(r, api.ChartOptions{Width: sz[0], Height: sz[1]})
	}
}

func TestExportMarkdown(t *testing.T) {
	r := sampleResult(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "cmp report.md")
	if err := api.ExportMarkdown(path, r, api.ChartOptions{}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pngData, err := os.ReadFile(filepath.Join(dir, "cmp report.png"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(pngData)); err != nil {
		t.Fatal(err)
	}
	s := string(md)
	for _, want := range []string{
		"![KL divergence per answer token](cmp%20report.png)",
		"| 3 | " + strings.ReplaceAll(filepath.Base(r.Models[2].File), "_", `\_`) + " | Q4\\_0 |",
		"(reference)",
		"&lt;script&gt;alert(1)&lt;/script&gt; \\| 김치 \\*bold\\* \\`code\\`",
		"## Where the models disagree with the reference",
		r.Models[2].Output,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	// One table row per model, each with 14 cells.
	rows := regexp.MustCompile(`(?m)^\| [123] \| .*\|$`).FindAllString(s, -1)
	if len(rows) < 3 {
		t.Fatalf("table rows: %q", rows)
	}
	if cells := strings.Count(strings.ReplaceAll(rows[0], `\|`, ""), "|") - 1; cells != 14 {
		t.Errorf("row has %d cells: %q", cells, rows[0])
	}
}

func TestExportHTML(t *testing.T) {
	r := sampleResult(t)
	var b bytes.Buffer
	if err := api.WriteHTML(&b, r, api.ChartOptions{}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if strings.Contains(s, "<script>") {
		t.Error("the prompt's markup reached the page unescaped")
	}
	// html/template writes '+' as &#43; in attributes, as it may.
	m := regexp.MustCompile(`src="data:image/png;base64,([^"]+)"`).FindStringSubmatch(s)
	if m == nil {
		t.Fatal("no embedded chart")
	}
	raw, err := base64.StdEncoding.DecodeString(html.UnescapeString(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	// Every disagreement of a model is outlined in its copy of the
	// reference's answer (tokens without text of their own carry theirs to
	// the next, so there can be fewer outlines, never more).
	outlined := strings.Count(s, `<span class="d"`)
	total := 0
	for i, mr := range r.Models {
		if i != r.Reference {
			total += len(mr.Quality.Answer.Disagreements)
		}
	}
	if outlined == 0 || outlined > total {
		t.Errorf("%d outlined tokens for %d disagreements", outlined, total)
	}
	if !strings.Contains(s, "김치") || strings.Contains(s, "ZgotmplZ") {
		t.Error("Korean text lost or a value filtered by the template")
	}
}

func TestSaveAndReopen(t *testing.T) {
	r := sampleResult(t)
	ctx := context.Background()
	st := storetest.Temp(t)
	cp := *r
	if err := Save(ctx, st, &cp); err != nil {
		t.Fatal(err)
	}
	if cp.ID == 0 {
		t.Fatal("no id after Save")
	}
	got, err := Load(ctx, st, cp.ID)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(r)
	b, _ := json.Marshal(got)
	if !bytes.Equal(a, b) || got.ID != cp.ID {
		t.Errorf("reopened comparison differs:\n%s\n%s", a, b)
	}
	list, err := st.ListComparisons(ctx, 0)
	if err != nil || len(list) != 1 || list[0].Title != r.Title || list[0].Prompt != r.Prompt {
		t.Errorf("list %+v, %v", list, err)
	}
	// Saving again with the id replaces it.
	got.Title = "renamed"
	if err := Save(ctx, st, got); err != nil || got.ID != cp.ID {
		t.Fatal(err)
	}
	if again, err := Load(ctx, st, cp.ID); err != nil || again.Title != "renamed" {
		t.Errorf("after rename: %v, %v", again, err)
	}
	if _, err := api.Decode([]byte(`{"format": 99, "models": [{}]}`)); err == nil {
		t.Error("a future format was accepted")
	}
}

// luma is a colour's brightness, 0 black to 1 white.
func luma(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	return (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)) / 0xffff
}
