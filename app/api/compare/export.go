package compare

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"math"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/churon/churon/internal/atomicfile"
	"github.com/churon/churon/internal/units"
)

// maxListed caps the disagreements listed per model in the exports.
const maxListed = 40

// WriteTable writes the comparison as plain text: the settings, a table
// of figures per model, quality per segment and the outputs (what
// `churon compare` prints).
func WriteTable(w io.Writer, r *Result) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n", r.Title)
	fmt.Fprintf(&b, "prompt: %d tokens (%s), %s; reference: %s\n\n", len(r.PromptTokens), r.Template, settings(r), r.Models[r.Reference].File)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "#\tmodel\ttype\tsize\tbpw\tRSS\twarm load ms\tTTFT ms\tprompt t/s\tgen t/s\tKLD mean\tKLD p99\ttop-1\tPPL ratio\t")
	for i, m := range r.Models {
		mark := ""
		if i == r.Reference {
			mark = "*"
		}
		q := summaryOf(m)
		fmt.Fprintf(tw, "%d%s\t%s\t%s\t%s\t%.2f\t%s\t%.0f\t%.0f\t%.1f\t%.1f\t%s\t%s\t%.1f%%\t%.4f\t\n",
			i+1, mark, filepath.Base(m.File), m.Type, units.Bytes(m.FileBytes), m.BPW, rssText(m),
			m.LoadMs, m.TTFTMs, m.PromptTPS, m.GenTPS, fmtKLD(q.KLDMean), fmtKLD(q.KLDP99), 100*q.Top1Agreement, q.PPLRatio)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "* reference. RSS: %s. KLD in nats, over %d tokens (answer + built-in texts). Whole run %.1f s, %d threads.\n\n",
		rssNote(r), summaryOf(r.Models[r.Reference]).Tokens, r.ElapsedMs/1000, r.Threads)

	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "#\ttype\t"
	for _, s := range segmentsOf(r) {
		head += s + " KLD\t" + s + " top-1\t"
	}
	fmt.Fprintln(tw, head)
	for i, m := range r.Models {
		row := fmt.Sprintf("%d\t%s\t", i+1, m.Type)
		for _, s := range segmentsOf(r) {
			if seg, ok := segmentOf(m, s); ok {
				row += fmt.Sprintf("%s\t%.1f%%\t", fmtKLD(seg.KLDMean), 100*seg.Top1Agreement)
			} else {
				row += "-\t-\t"
			}
		}
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i, m := range r.Models {
		fmt.Fprintf(&b, "\n── %d. %s (%s) · %d tokens, %s ──\n%s\n", i+1, filepath.Base(m.File), m.Type, len(m.Tokens), m.Finish, m.Output)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func summaryOf(m ModelResult) Summary {
	if m.Quality == nil {
		return Summary{}
	}
	return m.Quality.Summary
}

// segmentsOf names the segments scored: "answer" and the texts.
func segmentsOf(r *Result) []string {
	out := []string{"answer"}
	for _, t := range r.Texts {
		out = append(out, t.Name)
	}
	return out
}

func segmentOf(m ModelResult, name string) (Segment, bool) {
	if m.Quality == nil {
		return Segment{}, false
	}
	if name == "answer" {
		return m.Quality.Answer, true
	}
	for _, s := range m.Quality.Texts {
		if s.Name == name {
			return s, true
		}
	}
	return Segment{}, false
}

func settings(r *Result) string {
	s := r.Sampling
	out := fmt.Sprintf("seed %d, ", s.Seed)
	if s.Temperature <= 0 {
		out += "greedy"
	} else {
		out += fmt.Sprintf("temp %g, top-k %d, top-p %g, min-p %g", s.Temperature, s.TopK, s.TopP, s.MinP)
	}
	if s.RepeatPenalty != 1 {
		out += fmt.Sprintf(", repeat penalty %g", s.RepeatPenalty)
	}
	if s.MaxTokens > 0 {
		out += fmt.Sprintf(", at most %d tokens", s.MaxTokens)
	}
	return out
}

func rssNote(r *Result) string {
	if r.RSSSource == RSSEstimate {
		return "weights + KV cache (no /proc to measure)"
	}
	return "resident-set growth from before loading to after generating (≈: too small to measure, weights + KV cache instead)"
}

// rssText is a model's resident memory, marked ≈ where it is an estimate.
func rssText(m ModelResult) string {
	if m.RSSEstimated {
		return "≈" + units.Bytes(m.RSSBytes)
	}
	return units.Bytes(m.RSSBytes)
}

func fmtKLD(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) < 1e-3:
		return fmt.Sprintf("%.2e", v)
	}
	return fmt.Sprintf("%.4f", v)
}

// WriteMarkdown writes the comparison as Markdown. The chart is linked as
// chartFile (relative to the Markdown file) rather than embedded: many
// Markdown viewers, GitHub's among them, refuse data: URIs in images, and
// a separate file keeps the document readable as text. ExportMarkdown
// writes both files.
func WriteMarkdown(w io.Writer, r *Result, chartFile string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n", mdInline(r.Title))
	fmt.Fprintf(&b, "**Prompt** (%s, %d tokens): %s\n\n", r.Template, len(r.PromptTokens), mdInline(r.Prompt))
	if r.System != "" {
		fmt.Fprintf(&b, "**System:** %s\n\n", mdInline(r.System))
	}
	fmt.Fprintf(&b, "Settings: %s. Reference: `%s`. Created %s.\n\n", settings(r), filepath.Base(r.Models[r.Reference].File), r.Created)
	if chartFile != "" {
		fmt.Fprintf(&b, "![KL divergence per answer token](%s)\n\n", strings.ReplaceAll(chartFile, " ", "%20"))
	}
	b.WriteString("| # | model | type | size | bpw | RSS | warm load ms | TTFT ms | prompt tok/s | gen tok/s | KLD mean | KLD p99 | top-1 | PPL ratio |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for i, m := range r.Models {
		q := summaryOf(m)
		name := mdInline(filepath.Base(m.File))
		if i == r.Reference {
			name += " (reference)"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %.2f | %s | %.0f | %.0f | %.1f | %.1f | %s | %s | %.1f%% | %.4f |\n",
			i+1, name, mdInline(m.Type), units.Bytes(m.FileBytes), m.BPW, rssText(m), m.LoadMs, m.TTFTMs,
			m.PromptTPS, m.GenTPS, fmtKLD(q.KLDMean), fmtKLD(q.KLDP99), 100*q.Top1Agreement, q.PPLRatio)
	}
	fmt.Fprintf(&b, "\nRSS: %s. KLD: KL(reference ‖ model) in nats per token, teacher-forced over the reference's answer and the built-in texts.\n", rssNote(r))

	b.WriteString("\n## Quality by segment\n\n| # | type |")
	segs := segmentsOf(r)
	for _, s := range segs {
		fmt.Fprintf(&b, " %s KLD | %s top-1 |", s, s)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---:|---:|", len(segs)) + "\n")
	for i, m := range r.Models {
		fmt.Fprintf(&b, "| %d | %s |", i+1, mdInline(m.Type))
		for _, s := range segs {
			if seg, ok := segmentOf(m, s); ok {
				fmt.Fprintf(&b, " %s | %.1f%% |", fmtKLD(seg.KLDMean), 100*seg.Top1Agreement)
			} else {
				b.WriteString(" – | – |")
			}
		}
		b.WriteString("\n")
	}

	b.WriteString("\n## Outputs\n")
	for i, m := range r.Models {
		fence := codeFence(m.Output)
		fmt.Fprintf(&b, "\n### %d. %s (%s)\n\n%d tokens, %s.\n\n%stext\n%s\n%s\n", i+1, mdInline(filepath.Base(m.File)), mdInline(m.Type),
			len(m.Tokens), m.Finish, fence, m.Output, fence)
	}

	b.WriteString("\n## Where the models disagree with the reference\n")
	for i, m := range r.Models {
		if i == r.Reference || m.Quality == nil {
			continue
		}
		ds := m.Quality.Answer.Disagreements
		fmt.Fprintf(&b, "\n**%s**: %d of %d answer tokens.\n\n", mdInline(m.Type), len(ds), m.Quality.Answer.Tokens)
		for k, d := range ds {
			if k == maxListed {
				fmt.Fprintf(&b, "- … and %d more\n", len(ds)-maxListed)
				break
			}
			fmt.Fprintf(&b, "- token %d: reference `%s`, %s `%s` (KLD %s)\n", d.Pos, mdCode(d.RefText), mdInline(m.Type), mdCode(d.ModelText), fmtKLD(d.KLD))
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// ExportMarkdown writes path (Markdown) and the chart as PNG beside it,
// named after it (report.md → report.png). Both are written atomically.
func ExportMarkdown(path string, r *Result, opt ChartOptions) error {
	pngPath := strings.TrimSuffix(path, filepath.Ext(path)) + ".png"
	var img bytes.Buffer
	if err := WriteChartPNG(&img, r, opt); err != nil {
		return err
	}
	if err := writeFileAtomic(pngPath, img.Bytes()); err != nil {
		return err
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, r, filepath.Base(pngPath)); err != nil {
		return err
	}
	return writeFileAtomic(path, md.Bytes())
}

// ExportPNG writes the chart alone as a PNG file.
func ExportPNG(path string, r *Result, opt ChartOptions) error {
	var img bytes.Buffer
	if err := WriteChartPNG(&img, r, opt); err != nil {
		return err
	}
	return writeFileAtomic(path, img.Bytes())
}

// ExportHTML writes the comparison as one self-contained HTML file.
func ExportHTML(path string, r *Result, opt ChartOptions) error {
	var b bytes.Buffer
	if err := WriteHTML(&b, r, opt); err != nil {
		return err
	}
	return writeFileAtomic(path, b.Bytes())
}

func writeFileAtomic(path string, data []byte) error {
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("compare: export %s: %w", path, err)
	}
	return nil
}

// mdInline escapes text for a Markdown paragraph or table cell.
func mdInline(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	r := strings.NewReplacer(`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`, "<", "&lt;", ">", "&gt;", "#", `\#`)
	return r.Replace(s)
}

// mdCode makes text safe inside a one-backtick code span.
func mdCode(s string) string {
	s = strings.NewReplacer("`", "'", "\n", "⏎", "\r", "", "|", "¦").Replace(s)
	if s == "" {
		return "∅"
	}
	if strings.TrimSpace(s) == "" {
		return strings.ReplaceAll(s, " ", "␣")
	}
	return s
}

// codeFence is a backtick fence longer than any backtick run in s.
func codeFence(s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// WriteHTML writes a self-contained HTML page: the chart as a data: URI
// PNG, the table, the outputs side by side and, for each model, the
// reference's answer with the tokens where that model's top-1 differs
// highlighted (shaded by KLD; hover for the model's token).
func WriteHTML(w io.Writer, r *Result, opt ChartOptions) error {
	var img bytes.Buffer
	if err := WriteChartPNG(&img, r, opt); err != nil {
		return err
	}
	type span struct {
		Text     string
		Disagree bool
		Style    template.CSS
		Title    string
	}
	type col struct {
		ModelResult
		N        int
		Ref      bool
		Color    template.CSS
		Sum      Summary
		Segments []Segment
		Marked   []span
		Disagree int
	}
	pieces := r.AnswerPieces()
	// Shade by KLD relative to the largest over all models.
	maxKLD := 0.0
	for _, m := range r.Models {
		if m.Quality != nil {
			maxKLD = math.Max(maxKLD, m.Quality.Answer.KLDMax)
		}
	}
	cols := make([]col, len(r.Models))
	for i, m := range r.Models {
		c := Color(i)
		cols[i] = col{ModelResult: m, N: i + 1, Ref: i == r.Reference, Sum: summaryOf(m),
			Color: template.CSS(fmt.Sprintf("rgb(%d,%d,%d)", c.R, c.G, c.B))}
		for _, s := range segmentsOf(r) {
			if seg, ok := segmentOf(m, s); ok {
				cols[i].Segments = append(cols[i].Segments, seg)
			}
		}
		if i == r.Reference || m.Quality == nil {
			continue
		}
		a := m.Quality.Answer
		cols[i].Disagree = len(a.Disagreements)
		byPos := map[int]Disagreement{}
		for _, d := range a.Disagreements {
			byPos[d.Pos] = d
		}
		var pend *Disagreement // a disagreement on a token with no text of its own
		for j, p := range pieces {
			d, dis := byPos[j]
			if dis && pend == nil {
				pend = &d
			}
			if p == "" {
				continue
			}
			sp := span{Text: p}
			kld := 0.0
			if j < len(a.KLD) {
				kld = a.KLD[j]
			}
			if pend != nil {
				sp.Disagree = true
				sp.Title = fmt.Sprintf("most likely next: %q for the reference, %q for %s · KLD %s", pend.RefText, pend.ModelText, m.Type, fmtKLD(pend.KLD))
				pend = nil
			} else {
				sp.Title = "KLD " + fmtKLD(kld)
			}
			if maxKLD > 0 && kld > 0 {
				sp.Style = template.CSS(fmt.Sprintf("background-color: rgba(%d,%d,%d,%.2f)", c.R, c.G, c.B, 0.08+0.5*math.Min(1, kld/maxKLD)))
			}
			cols[i].Marked = append(cols[i].Marked, sp)
		}
	}
	data := struct {
		R         *Result
		Cols      []col
		Chart     template.URL
		Settings  string
		RSSNote   string
		Segs      []string
		RefType   string
		KLD       func(float64) string
		Pct       func(float64) string
		Bytes     func(int64) string
		RSS       func(ModelResult) string
		Base      func(string) string
		NumTokens int
	}{
		R: r, Cols: cols, Chart: template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(img.Bytes())),
		Settings: settings(r), RSSNote: rssNote(r), Segs: segmentsOf(r), RefType: r.Models[r.Reference].Type,
		KLD: fmtKLD, Pct: func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }, Bytes: units.Bytes, RSS: rssText, Base: filepath.Base,
		NumTokens: len(r.Models[r.Reference].Tokens),
	}
	if err := htmlPage.Execute(w, data); err != nil {
		return fmt.Errorf("compare: html: %w", err)
	}
	return nil
}

var htmlPage = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.R.Title}}</title>
<style>
body { font-family: system-ui, "Noto Sans", "Noto Sans KR", sans-serif; margin: 2rem auto; max-width: 1200px; padding: 0 1rem; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { border: 1px solid #ddd; padding: .3rem .5rem; text-align: right; }
th:nth-child(-n+3), td:nth-child(-n+3) { text-align: left; }
.swatch { display: inline-block; width: .8em; height: .8em; margin-right: .3em; vertical-align: baseline; }
.cols { display: grid; grid-template-columns: repeat(auto-fit, minmax(240px, 1fr)); gap: 1rem; }
.col { border: 1px solid #ddd; border-top: 4px solid; padding: .5rem .8rem; }
pre, .marked { white-space: pre-wrap; word-break: break-word; font-family: ui-monospace, monospace; font-size: .9rem; }
.marked span.d { outline: 2px solid #c00; outline-offset: -1px; border-radius: 2px; }
.note { color: #666; font-size: .9rem; }
img { max-width: 100%; }
</style></head><body>
<h1>{{.R.Title}}</h1>
<p><b>Prompt</b> ({{.R.Template}}, {{len .R.PromptTokens}} tokens):</p>
<pre>{{.R.Prompt}}</pre>
{{if .R.System}}<p><b>System:</b> {{.R.System}}</p>{{end}}
<p class="note">Settings: {{.Settings}}. Reference: {{.RefType}}. Created {{.R.Created}}.</p>
<img src="{{.Chart}}" alt="KL divergence per answer token">
<table>
<tr><th>#</th><th>model</th><th>type</th><th>size</th><th>bpw</th><th>RSS</th><th>warm load ms</th><th>TTFT ms</th><th>prompt tok/s</th><th>gen tok/s</th><th>KLD mean</th><th>KLD p99</th><th>top-1</th><th>PPL ratio</th></tr>
{{range .Cols}}<tr><td><span class="swatch" style="background: {{.Color}}"></span>{{.N}}</td><td>{{call $.Base .File}}{{if .Ref}} (reference){{end}}</td><td>{{.Type}}</td><td>{{call $.Bytes .FileBytes}}</td><td>{{printf "%.2f" .BPW}}</td><td>{{call $.RSS .ModelResult}}</td><td>{{printf "%.0f" .LoadMs}}</td><td>{{printf "%.0f" .TTFTMs}}</td><td>{{printf "%.1f" .PromptTPS}}</td><td>{{printf "%.1f" .GenTPS}}</td><td>{{call $.KLD .Sum.KLDMean}}</td><td>{{call $.KLD .Sum.KLDP99}}</td><td>{{call $.Pct .Sum.Top1Agreement}}</td><td>{{printf "%.4f" .Sum.PPLRatio}}</td></tr>
{{end}}</table>
<p class="note">RSS: {{.RSSNote}}. KLD: KL(reference ‖ model) in nats per token, teacher-forced over the reference's answer and the built-in texts.</p>
<h2>Quality by segment</h2>
<table><tr><th>#</th><th>type</th>{{range .Segs}}<th>{{.}} KLD</th><th>{{.}} top-1</th>{{end}}</tr>
{{range .Cols}}<tr><td>{{.N}}</td><td>{{.Type}}</td>{{range .Segments}}<td>{{call $.KLD .KLDMean}}</td><td>{{call $.Pct .Top1Agreement}}</td>{{end}}</tr>
{{end}}</table>
<h2>Outputs</h2>
<div class="cols">
{{range .Cols}}<div class="col" style="border-top-color: {{.Color}}"><h3>{{.N}}. {{.Type}}</h3><p class="note">{{call $.Base .File}} · {{len .Tokens}} tokens, {{.Finish}}</p><pre>{{.Output}}</pre></div>
{{end}}</div>
<h2>The reference's answer, as each model sees it</h2>
<p class="note">Shaded by KLD; outlined where the model's most likely token differs from the reference's (hover for both).</p>
<div class="cols">
{{range .Cols}}{{if not .Ref}}<div class="col" style="border-top-color: {{.Color}}"><h3>{{.Type}}</h3><p class="note">{{.Disagree}} of {{$.NumTokens}} tokens disagree</p><div class="marked">{{range .Marked}}<span{{if .Disagree}} class="d"{{end}}{{if .Style}} style="{{.Style}}"{{end}} title="{{.Title}}">{{.Text}}</span>{{end}}</div></div>
{{end}}{{end}}</div>
</body></html>
`))
