package compare

import (
	"fmt"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/software"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"

	"github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/ui/core"
)

// The chart and the exports of a finished comparison; both are drawn and
// written by app/compare.

// chartOptions size the chart as the page shows it: wide enough for a
// few hundred tokens, the page scales it to its width.
var chartOptions = compare.ChartOptions{Width: 1200, Height: 320, TextScale: 2}

// showChart draws the per-token KLD chart of a finished comparison, its
// words in the window's font and language. (The exports keep the chart's
// own font: they are drawn off Fyne's goroutine, and in English.)
func (p *comparePage) showChart(res *compare.Result) {
	opt := chartOptions
	opt.Dark = darkGround()
	opt.Text = chartText
	opt.Title = lang.X("compare.chart.title", "KL divergence per answer token (nats)")
	p.chart.Set(compare.Chart(res, opt))
	p.chartTitle.Show()
}

// chartTextScale is the chart's text size against the page's: the chart
// is drawn wider than the page shows it (chartOptions), so its text is
// drawn larger to be shown at about the page's size.
const chartTextScale = 1.35

// chartText draws s in the theme's font, as Fyne draws the page (with its
// fallback to the system's fonts for Hangul), on a transparent ground.
func chartText(s string, c color.RGBA) image.Image {
	t := canvas.NewText(s, c)
	t.TextSize = theme.TextSize() * chartTextScale
	cv := software.NewTransparentCanvas()
	cv.SetPadded(false)
	cv.SetContent(t)
	cv.Resize(t.MinSize())
	return cv.Capture()
}

// darkGround reports whether the window's background is dark, whatever
// made it so (the system's variant or a theme that forces one), so that
// pictures drawn outside Fyne can match it.
func darkGround() bool {
	a := fyne.CurrentApp()
	r, g, b, _ := a.Settings().Theme().Color(theme.ColorNameBackground, a.Settings().ThemeVariant()).RGBA()
	return 0.2126*float64(r)+0.7152*float64(g)+0.0722*float64(b) < 0.5*0xffff
}

// compareSaveDialog asks where to save an export and calls save with the
// chosen file's path. A variable so that tests can stand in for the file
// dialog.
var compareSaveDialog = func(p *comparePage, name, ext string, save func(path string)) {
	core.SaveFile(p.w.Win, name, ext, "", p.showError, func(w fyne.URIWriteCloser) {
		// The exports write beside the file (Markdown's chart) and replace
		// it atomically, so they want a path, not the dialog's stream.
		uri := w.URI()
		w.Close()
		if uri.Scheme() != "file" {
			p.showError(fmt.Errorf("%s", lang.X("compare.err.export_place", "Choose a folder on this computer to export to.")))
			return
		}
		save(filepath.FromSlash(uri.Path()))
	})
}

// onExport exports the comparison shown as Markdown (with the chart as a
// PNG beside it) or as one HTML page (the chart inside).
func (p *comparePage) onExport(html bool) {
	if p.run == nil || p.run.res == nil {
		return
	}
	res := p.run.res
	ext := ".md"
	if html {
		ext = ".html"
	}
	compareSaveDialog(p, exportBaseName(res.Title)+ext, ext, func(path string) {
		w := p.w
		go func() {
			var err error
			if html {
				err = compare.ExportHTML(path, res, chartOptions)
			} else {
				err = compare.ExportMarkdown(path, res, chartOptions)
			}
			w.Do(func() {
				if err != nil {
					p.showError(fmt.Errorf("%s: %w", lang.X("export.failed", "Export failed"), err))
					return
				}
				p.clearError()
				p.setStatus(lang.X("export.done", "Saved {{.Name}}.", map[string]any{"Name": filepath.Base(path)}))
			})
		}()
	})
}

// exportBaseName makes a file name from a comparison's title: letters,
// digits (any script), dashes; at most 60 characters.
func exportBaseName(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range title {
		ok := r == '_' || r == '.' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || r > 0x7f
		if ok && r != os.PathSeparator && r != '/' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	s := strings.Trim(b.String(), "-.")
	if s == "" {
		s = "comparison"
	}
	return s
}
