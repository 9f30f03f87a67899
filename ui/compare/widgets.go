package compare

import (
	"image"
	"image/color"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Widgets of the Compare page that Fyne lacks: text whose tokens are
// tinted by how far a model strays from the reference there, a table of
// figures with one column per model, and the KLD chart.

// tokenMark is one token of an answer with what the comparison says of it.
type tokenMark struct {
	Text string
	// KLD is the divergence from the reference at this token (nats).
	KLD float64
	// Differs: the model's most likely token is not the reference's.
	Differs bool
}

// kldNoticeable is the divergence (nats) from which a token is tinted even
// when the model's top token agrees: below it, the two distributions
// differ in ways no one would see in the text.
const kldNoticeable = 0.05

// kldStrong is the divergence at which the tint is at its strongest.
const kldStrong = 1.0

// tokenFlow shows tokens as running text, wrapped at its width, with a
// tinted box behind the tokens that differ: red where the model would have
// picked another token, amber (deeper as the divergence grows) where it
// agrees but its probabilities stray. Reading it, one sees at a glance
// where a quantized model parts from the reference.
type tokenFlow struct {
	widget.BaseWidget
	toks []tokenMark
}

func newTokenFlow() *tokenFlow {
	f := &tokenFlow{}
	f.ExtendBaseWidget(f)
	return f
}

// SetTokens replaces the tokens shown.
func (f *tokenFlow) SetTokens(toks []tokenMark) {
	f.toks = toks
	f.Refresh()
}

// Differing counts the tokens shown as different from the reference.
func (f *tokenFlow) Differing() int {
	n := 0
	for _, t := range f.toks {
		if t.Differs {
			n++
		}
	}
	return n
}

// Resize lays the tokens out again when the width changes: the height the
// widget needs depends on it.
func (f *tokenFlow) Resize(s fyne.Size) {
	if s == f.Size() {
		return
	}
	f.BaseWidget.Resize(s)
	f.Refresh()
}

func (f *tokenFlow) CreateRenderer() fyne.WidgetRenderer {
	r := &tokenFlowRenderer{f: f}
	r.Refresh()
	return r
}

// flowPiece is a run of a token's text on one line (a token holding a
// newline becomes two pieces).
type flowPiece struct {
	text  *canvas.Text
	box   *canvas.Rectangle // nil for a plain token
	br    bool              // a line break comes before this piece
	width float32
	lead  float32 // the width of its leading spaces, which hang left of a line's start
}

type tokenFlowRenderer struct {
	f      *tokenFlow
	pieces []flowPiece
	objs   []fyne.CanvasObject
	lineH  float32
	height float32 // for the width last laid out
}

func (r *tokenFlowRenderer) Destroy() {}

func (r *tokenFlowRenderer) Objects() []fyne.CanvasObject { return r.objs }

// Refresh rebuilds the pieces from the tokens and the theme.
func (r *tokenFlowRenderer) Refresh() {
	th := r.f.Theme()
	v := fyne.CurrentApp().Settings().ThemeVariant()
	size := th.Size(theme.SizeNameText)
	fg := th.Color(theme.ColorNameForeground, v)
	bad := th.Color(theme.ColorNameError, v)
	warn := th.Color(theme.ColorNameWarning, v)
	r.lineH = fyne.MeasureText("Mg한", size, fyne.TextStyle{}).Height + 4
	r.pieces = r.pieces[:0]
	r.objs = r.objs[:0]
	for _, t := range r.f.toks {
		var fill color.Color
		switch {
		case t.Differs:
			fill = withAlpha(bad, 0x90)
		case t.KLD >= kldNoticeable:
			frac := min(1, t.KLD/kldStrong)
			fill = withAlpha(warn, uint8(0x28+frac*0x50))
		}
		// Tabs are drawn as nothing by canvas.Text; spaces keep their width.
		lines := strings.Split(strings.ReplaceAll(t.Text, "\t", "    "), "\n")
		for i, s := range lines {
			if s == "" && i > 0 && i < len(lines)-1 {
				// An empty line between two breaks.
				r.pieces = append(r.pieces, flowPiece{br: true})
				continue
			}
			if s == "" && i == 0 && len(lines) > 1 {
				continue // the token starts with its newline
			}
			p := flowPiece{br: i > 0}
			if s != "" {
				p.text = canvas.NewText(s, fg)
				p.text.TextSize = size
				p.width = fyne.MeasureText(s, size, fyne.TextStyle{}).Width
				if t := strings.TrimLeft(s, " "); t != s && t != "" {
					p.lead = fyne.MeasureText(s[:len(s)-len(t)], size, fyne.TextStyle{}).Width
				}
				if fill != nil {
					p.box = canvas.NewRectangle(fill)
					p.box.CornerRadius = 3
					r.objs = append(r.objs, p.box)
				}
				r.objs = append(r.objs, p.text)
			}
			r.pieces = append(r.pieces, p)
		}
	}
	r.Layout(r.f.Size())
	canvas.Refresh(r.f)
}

// flow places the pieces in lines no wider than width and returns the
// height used; with place false it only measures.
func (r *tokenFlowRenderer) flow(width float32, place bool) float32 {
	if len(r.pieces) == 0 {
		return 0
	}
	// The text is inset as a Label's is, so that it lines up with the
	// answer above it.
	in := theme.InnerPadding()
	x, y := float32(0), float32(0)
	wordAtLineStart := false // the word being placed began a line
	for i, p := range r.pieces {
		// Tokens often split a word ("box" as " bo" + "x"): a line breaks
		// before a whole word, and inside one only when the word is
		// longer than a line.
		start := r.startsWord(i)
		wrap := p.br
		if !wrap && x > 0 {
			if start {
				wrap = x+r.wordWidth(i)-p.lead > width
			} else {
				wrap = wordAtLineStart && x+p.width > width
			}
		}
		if wrap {
			x, y = 0, y+r.lineH
		}
		if start || wrap {
			wordAtLineStart = x == 0
		}
		if x == 0 && (i == 0 || !p.br) {
			// A word that starts a line after a wrap keeps its text flush
			// left: SentencePiece and BPE tokens carry the space before
			// the word.
			x = -p.lead
		}
		if place && p.text != nil {
			if p.box != nil {
				p.box.Move(fyne.NewPos(in+x, y+1))
				p.box.Resize(fyne.NewSize(p.width, r.lineH-2))
			}
			p.text.Move(fyne.NewPos(in+x, y+1))
			p.text.Resize(fyne.NewSize(p.width, r.lineH-2))
		}
		x += p.width
	}
	return y + r.lineH
}

// startsWord reports whether piece i begins a word: it starts a line or
// the text, or a space separates it from the piece before.
func (r *tokenFlowRenderer) startsWord(i int) bool {
	if i == 0 || r.pieces[i].br {
		return true
	}
	p, q := r.pieces[i].text, r.pieces[i-1].text
	return p == nil || q == nil || strings.HasPrefix(p.Text, " ") || strings.HasSuffix(q.Text, " ")
}

// wordWidth is the width of the word that piece i begins.
func (r *tokenFlowRenderer) wordWidth(i int) float32 {
	w := r.pieces[i].width
	for j := i + 1; j < len(r.pieces) && !r.startsWord(j); j++ {
		w += r.pieces[j].width
	}
	return w
}

func (r *tokenFlowRenderer) Layout(s fyne.Size) {
	w := s.Width - 2*theme.InnerPadding()
	if w <= 0 {
		w = 320
	}
	r.height = r.flow(w, true)
}

func (r *tokenFlowRenderer) MinSize() fyne.Size {
	w := r.f.Size().Width - 2*theme.InnerPadding()
	if w <= 0 {
		w = 320
	}
	return fyne.NewSize(min(w, 60), r.flow(w, false))
}

// withAlpha is c at the given opacity.
func withAlpha(c color.Color, a uint8) color.NRGBA {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	n.A = a
	return n
}

// legendSwatch is a small tinted square for the legend under the text.
func legendSwatch(name fyne.ThemeColorName, alpha uint8) fyne.CanvasObject {
	v := fyne.CurrentApp().Settings().ThemeVariant()
	c := fyne.CurrentApp().Settings().Theme().Color(name, v)
	r := canvas.NewRectangle(withAlpha(c, alpha))
	r.CornerRadius = 3
	r.SetMinSize(fyne.NewSize(14, 14))
	return container.NewCenter(r)
}

// figureGrid is a table of figures: a first column of row names, then one
// column per model, so that each model's figures sit under its answer.
type figureGrid struct {
	box *fyne.Container
	// cells[r][c]: r 0 is the header row, c 0 the names.
	cells [][]*widget.Label
}

func newFigureGrid() *figureGrid {
	return &figureGrid{box: container.New(layout.NewCustomPaddedVBoxLayout(0))}
}

// tightGrid is a grid of equal columns whose rows take the labels' own
// height less their padding, so that a table of a dozen rows stays short.
type tightGrid struct{ cols int }

func (g *tightGrid) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	w := size.Width / float32(g.cols)
	for i, o := range objs {
		o.Move(fyne.NewPos(float32(i%g.cols)*w, -theme.Padding()))
		o.Resize(fyne.NewSize(w, size.Height+2*theme.Padding()))
	}
}

func (g *tightGrid) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var w, h float32
	for _, o := range objs {
		m := o.MinSize()
		w = max(w, m.Width)
		h = max(h, m.Height)
	}
	return fyne.NewSize(w*float32(g.cols), h-2*theme.Padding())
}

// Set fills the grid: header names the columns (the first for the
// names), rows are name then one value per model. best marks, per row,
// the column to show in bold (0: none).
func (g *figureGrid) Set(header []string, rows [][]string, best []int) {
	g.box.RemoveAll()
	g.cells = nil
	cols := len(header)
	add := func(cells []string, bold int, head bool) {
		grid := container.New(layout.NewGridLayoutWithColumns(cols))
		grid.Layout = &tightGrid{cols: cols}
		var row []*widget.Label
		for i := 0; i < cols; i++ {
			s := ""
			if i < len(cells) {
				s = cells[i]
			}
			l := widget.NewLabel(s)
			l.Truncation = fyne.TextTruncateEllipsis
			if head {
				l.TextStyle.Bold = true
				if i > 0 {
					l.Alignment = fyne.TextAlignTrailing
				}
			} else if i == 0 {
				l.SizeName = theme.SizeNameText
			} else {
				l.Alignment = fyne.TextAlignTrailing
				l.TextStyle.Bold = i == bold
			}
			row = append(row, l)
			grid.Add(l)
		}
		g.cells = append(g.cells, row)
		g.box.Add(grid)
	}
	add(header, 0, true)
	g.box.Add(widget.NewSeparator())
	for i, r := range rows {
		b := 0
		if i < len(best) {
			b = best[i]
		}
		add(r, b, false)
	}
	g.box.Refresh()
}

// Value is the text at row r (1 is the first row under the header) and
// column c (1 is the first model).
func (g *figureGrid) Value(r, c int) string {
	if r < 0 || r >= len(g.cells) || c < 0 || c >= len(g.cells[r]) {
		return ""
	}
	return g.cells[r][c].Text
}

// chartView shows the per-token KLD chart drawn by the comparison.
type chartView struct {
	img     *canvas.Image
	content *fyne.Container
}

// chartHeight is the height of the KLD chart on the page.
const chartHeight = 240

func newChartView() *chartView {
	c := &chartView{img: canvas.NewImageFromImage(nil)}
	c.img.FillMode = canvas.ImageFillContain
	c.img.ScaleMode = canvas.ImageScaleSmooth
	c.img.SetMinSize(fyne.NewSize(320, chartHeight))
	c.content = container.NewStack(c.img)
	c.content.Hide()
	return c
}

// Set shows img; nil hides the chart.
func (c *chartView) Set(img image.Image) {
	c.img.Image = img
	if img == nil {
		c.content.Hide()
		return
	}
	b := img.Bounds()
	if b.Dx() > 0 {
		// Keep the picture's proportions at the page's usual width.
		h := float32(chartHeight)
		c.img.SetMinSize(fyne.NewSize(min(float32(b.Dx()), 320), h))
	}
	c.content.Show()
	c.img.Refresh()
}
