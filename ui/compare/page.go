package compare

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/models/download"
	"github.com/churon/churon/models/hub"
	"github.com/churon/churon/ui/core"
	"github.com/churon/churon/ui/markdown"
)

// comparePage is the Compare page: pick two to four models (typically
// one model in several quantizations), type a prompt, and watch their
// answers stream side by side; then read, under them, what each costs
// and how far it strays from the reference, token by token.
//
// The work is app/compare's (run.go talks to it); the page holds
// widgets and what they show.
type comparePage struct {
	sc      *Screen
	w       *core.Window
	models  Models
	content fyne.CanvasObject
	scroll  *container.Scroll

	// Choosing the models (chooser.go).
	pick *modelChooser

	prompt  *core.Entry
	maxTok  *widget.Entry
	temp    *widget.Entry
	seed    *widget.Entry
	refSel  *widget.Select
	runBtn  *widget.Button
	history *widget.Button
	status  *widget.Label
	errLine *widget.Label

	// The outcome.
	cols       []*cmpColumn
	colsBox    *fyne.Container
	results    *fyne.Container // everything under the columns
	legend     fyne.CanvasObject
	figTitle   *widget.Label
	figures    *figureGrid
	chartTitle *widget.Label
	chart      *chartView
	exportMD   *widget.Button
	exportHTML *widget.Button

	run *compareRun // the comparison shown (running or finished); nil before the first
	// threads for the CPU backend (0: the engine's default); tests set it.
	threads int
}

// maxCompare is how many models one comparison takes at most.
const maxCompare = 4

// Screen is the Compare page's place in the window: the page, made when
// first shown and made again, keeping the comparison it showed, when the
// window is rebuilt.
type Screen struct {
	w      *core.Window
	models Models
	page   *comparePage // nil until first shown
}

// Models is what the page borrows of the Models page's state (the library,
// the hub client and the download queue; ui/models.State has them).
type Models interface {
	Dir() string
	Hub() *hub.Client
	DestFor(repo, file string) string
	Active(dest string) *download.Download
	// QueueVariant queues a model's download; a failure arrives as an
	// error banner.
	QueueVariant(repo, rev string, v hub.Variant, load bool)
	// AddFile adds a GGUF file to the library; it blocks (run it on the
	// command worker).
	AddFile(path string) error
	// OnLibrary calls f whenever the library changed (a download ended, a
	// file was added or removed).
	OnLibrary(f func())
}

// New sets the Compare page up; it is made when first shown.
func New(w *core.Window, models Models) *Screen {
	s := &Screen{w: w, models: models}
	// A model downloaded or added elsewhere appears in the chooser.
	models.OnLibrary(func() {
		if s.page != nil {
			s.page.pick.reload()
		}
	})
	return s
}

// Show opens the Compare page in the window's centre.
func (s *Screen) Show() {
	s.w.CompareShown = true
	s.w.ModelsShown = false
	if s.page != nil {
		s.page.pick.reload()
	}
	s.w.Refresh()
}

// Hide goes back to the chat. A comparison that runs goes on.
func (s *Screen) Hide() {
	s.w.CompareShown = false
	s.w.Refresh()
}

// Page is the Compare page, made on first use.
func (s *Screen) Page() fyne.CanvasObject {
	if s.page == nil {
		s.page = newComparePage(s)
	}
	return s.page.content
}

// Rebuild makes the page again, if it was made: the window is built
// again (the language changed) and widgets keep the text they were made
// with.
func (s *Screen) Rebuild() { s.page = s.page.rebuilt() }

func newComparePage(sc *Screen) *comparePage {
	p := &comparePage{sc: sc, w: sc.w, models: sc.models}
	title := widget.NewLabel(lang.X("compare.title", "Compare models"))
	title.SizeName = theme.SizeNameHeadingText
	title.TextStyle.Bold = true
	intro := core.MutedLine(lang.X("compare.intro", "Run one prompt through two to four models — typically one model in several quantizations — and see what the smaller files cost in quality and buy in speed."))
	p.history = widget.NewButtonWithIcon(lang.X("compare.history", "Past comparisons"), theme.HistoryIcon(), p.onHistory)
	p.history.Importance = widget.LowImportance
	back := widget.NewButtonWithIcon(lang.X("models.back", "Back to chat"), theme.NavigateBackIcon(), sc.Hide)
	back.Importance = widget.LowImportance
	header := core.Row(container.NewVBox(title, intro), p.history, back)

	p.pick = newModelChooser(p)

	p.prompt = core.NewEntry(sc.w.HandleShortcut)
	p.prompt.MultiLine = true
	p.prompt.Wrapping = fyne.TextWrapWord
	p.prompt.SetMinRowsVisible(3)
	p.prompt.SetPlaceHolder(lang.X("compare.prompt.hint", "The prompt every model answers, e.g. Explain in two sentences what quantization does to a model."))
	p.prompt.OnChanged = func(string) { p.refreshRun() }
	// The fields start where `churon compare` does (compare.Page*).
	p.maxTok = numberEntry(strconv.Itoa(compare.PageMaxTokens))
	p.temp = numberEntry(strconv.FormatFloat(compare.PageTemperature, 'g', -1, 64))
	p.seed = numberEntry(strconv.Itoa(compare.PageSeed))
	p.refSel = widget.NewSelect(nil, nil)
	p.refSel.PlaceHolder = lang.X("compare.ref.auto", "Highest precision")
	p.runBtn = widget.NewButtonWithIcon(lang.X("compare.run", "Run"), theme.MediaPlayIcon(), p.onRunStop)
	p.runBtn.Importance = widget.HighImportance
	field := func(label string, o fyne.CanvasObject) fyne.CanvasObject {
		l := widget.NewLabel(label)
		return container.NewHBox(l, o)
	}
	// The fields flow onto a second line in a narrow window rather than
	// scroll sideways.
	sampler := container.New(layout.NewRowWrapLayout(),
		field(lang.X("compare.max_tokens", "Max tokens"), sized(p.maxTok, 80)),
		field(lang.X("compare.temperature", "Temperature"), sized(p.temp, 70)),
		field(lang.X("compare.seed", "Seed"), sized(p.seed, 90)),
		field(lang.X("compare.reference", "Reference"), sized(p.refSel, 220)),
	)
	p.status = widget.NewLabel("")
	p.status.Wrapping = fyne.TextWrapWord
	p.status.Hide()
	p.errLine = widget.NewLabel("")
	p.errLine.Wrapping = fyne.TextWrapWord
	p.errLine.Importance = widget.DangerImportance
	p.errLine.Hide()
	setup := container.NewVBox(
		p.pick.content,
		sectionTitle(lang.X("compare.prompt", "Prompt")),
		p.prompt,
		container.NewBorder(nil, nil, nil, container.NewVBox(p.runBtn), sampler),
		p.status, p.errLine,
	)

	p.colsBox = container.New(layout.NewGridLayoutWithColumns(2))
	p.legend = container.NewHBox(
		legendSwatch(theme.ColorNameError, 0x60), legendText(lang.X("compare.legend.differs", "the model's first choice differs from the reference")),
		widget.NewLabel(""),
		legendSwatch(theme.ColorNameWarning, 0x60), legendText(lang.X("compare.legend.kld", "same choice, but its probabilities stray (deeper: further)")),
	)
	p.figTitle = sectionTitle(lang.X("compare.figures", "Figures"))
	p.figures = newFigureGrid()
	p.chartTitle = sectionTitle(lang.X("compare.chart", "Divergence from the reference, token by token"))
	p.chart = newChartView()
	p.exportMD = widget.NewButtonWithIcon(lang.X("compare.export.md", "Export Markdown…"), theme.DocumentSaveIcon(), func() { p.onExport(false) })
	p.exportHTML = widget.NewButtonWithIcon(lang.X("compare.export.html", "Export HTML…"), theme.DocumentSaveIcon(), func() { p.onExport(true) })
	p.results = container.NewVBox(p.colsBox, p.legend, p.figTitle, p.figures.box, p.chartTitle, p.chart.content,
		container.NewHBox(layout.NewSpacer(), p.exportMD, p.exportHTML))
	p.results.Hide()

	page := container.NewVBox(container.NewPadded(header), widget.NewSeparator(), setup, widget.NewSeparator(), p.results)
	p.scroll = container.NewVScroll(container.NewPadded(page))
	p.content = p.scroll
	p.pick.reload()
	p.refreshRun()
	return p
}

// rebuilt makes the page again after the window was rebuilt (the
// language changed: widgets keep the text they were made with), showing
// the comparison the old page showed, running or finished. nil stays nil.
func (p *comparePage) rebuilt() *comparePage {
	if p == nil {
		return nil
	}
	n := newComparePage(p.sc)
	n.threads = p.threads
	n.prompt.SetText(p.prompt.Text)
	n.maxTok.SetText(p.maxTok.Text)
	n.temp.SetText(p.temp.Text)
	n.seed.SetText(p.seed.Text)
	n.pick.picked = p.pick.chosen()
	if p.run != nil {
		n.adopt(p.run)
	}
	return n
}

// numberEntry is a short entry for a number.
func numberEntry(v string) *widget.Entry {
	e := widget.NewEntry()
	e.SetText(v)
	return e
}

// sized gives an entry or select a fixed width (an HBox would shrink it to
// its placeholder).
func sized(o fyne.CanvasObject, w float32) fyne.CanvasObject {
	return container.NewGridWrap(fyne.NewSize(w, o.MinSize().Height), o)
}

// legendText is a short caption that keeps to one line.
func legendText(s string) fyne.CanvasObject {
	rt := core.NewMuted(theme.SizeNameCaptionText, fyne.TextWrapOff)
	core.SetMuted(rt, s)
	return container.NewCenter(rt)
}

func sectionTitle(s string) *widget.Label {
	l := widget.NewLabel(s)
	l.TextStyle.Bold = true
	return l
}

// compareSettings are the sampler fields, checked.
type compareSettings struct {
	MaxTokens   int
	Temperature float64
	Seed        uint64
}

// settings reads the sampler fields; the error says which is wrong.
func (p *comparePage) settings() (compareSettings, error) {
	var s compareSettings
	n, err := strconv.Atoi(strings.TrimSpace(p.maxTok.Text))
	if err != nil || n < 1 || n > 4096 {
		return s, fmt.Errorf("%s", lang.X("compare.err.max_tokens", "Max tokens must be a whole number from 1 to 4096."))
	}
	t, err := strconv.ParseFloat(strings.TrimSpace(p.temp.Text), 64)
	if err != nil || t < 0 || t > 5 || math.IsNaN(t) {
		return s, fmt.Errorf("%s", lang.X("compare.err.temperature", "Temperature must be a number from 0 (always the likeliest token) to 5."))
	}
	seed, err := strconv.ParseUint(strings.TrimSpace(p.seed.Text), 10, 64)
	if err != nil {
		return s, fmt.Errorf("%s", lang.X("compare.err.seed", "The seed must be a whole number of 0 or more."))
	}
	return compareSettings{MaxTokens: n, Temperature: t, Seed: seed}, nil
}

// refreshRun enables Run when there is something to run, and turns it
// into Stop while a comparison runs.
func (p *comparePage) refreshRun() {
	if p.running() {
		p.runBtn.SetText(lang.X("compare.stop", "Stop"))
		p.runBtn.SetIcon(theme.MediaStopIcon())
		p.runBtn.Importance = widget.DangerImportance
		p.runBtn.Enable()
		p.runBtn.Refresh()
		return
	}
	p.runBtn.SetText(lang.X("compare.run", "Run"))
	p.runBtn.SetIcon(theme.MediaPlayIcon())
	p.runBtn.Importance = widget.HighImportance
	n := len(p.pick.chosen())
	if n >= 2 && n <= maxCompare && strings.TrimSpace(p.prompt.Text) != "" && !p.pick.quantizing() {
		p.runBtn.Enable()
	} else {
		p.runBtn.Disable()
	}
	p.runBtn.Refresh()
}

// refreshReference offers the chosen models as the reference.
func (p *comparePage) refreshReference() {
	chosen := p.pick.chosen()
	opts := []string{lang.X("compare.ref.auto", "Highest precision")}
	for _, m := range chosen {
		opts = append(opts, core.ModelLabel(m))
	}
	sel := p.refSel.Selected
	p.refSel.SetOptions(opts)
	keep := false
	for _, o := range opts {
		keep = keep || o == sel
	}
	if !keep {
		p.refSel.SetSelectedIndex(0)
	} else {
		p.refSel.SetSelected(sel)
	}
}

// reference is the path of the reference the person picked, "" for the
// automatic choice.
func (p *comparePage) reference() string {
	i := p.refSel.SelectedIndex()
	chosen := p.pick.chosen()
	if i <= 0 || i > len(chosen) {
		return ""
	}
	return chosen[i-1]
}

func (p *comparePage) onRunStop() {
	if p.running() {
		p.stop()
		return
	}
	p.clearError()
	set, err := p.settings()
	if err != nil {
		p.showError(err)
		return
	}
	chosen := p.pick.chosen()
	if len(chosen) < 2 || len(chosen) > maxCompare {
		p.showError(fmt.Errorf("%s", lang.X("compare.err.count", "Pick two to four models.")))
		return
	}
	if session.AnyRemote(chosen) {
		p.startCross(chosen, p.reference(), p.prompt.Text, set)
		return
	}
	p.start(chosen, p.reference(), p.prompt.Text, set)
}

func (p *comparePage) showError(err error) {
	p.errLine.SetText(compareErrorText(err))
	p.errLine.Show()
}

func (p *comparePage) clearError() {
	p.errLine.SetText("")
	p.errLine.Hide()
}

func (p *comparePage) setStatus(s string) {
	if p.run != nil {
		p.run.status = s
	}
	p.status.SetText(s)
	p.status.Hidden = s == ""
	p.status.Refresh()
}

// layoutColumns makes one column per model, in order.
func (p *comparePage) layoutColumns(n int) {
	p.cols = make([]*cmpColumn, n)
	objs := make([]fyne.CanvasObject, n)
	for i := range p.cols {
		p.cols[i] = newCmpColumn(p)
		objs[i] = p.cols[i].content
	}
	p.colsBox.Layout = layout.NewGridLayoutWithColumns(max(n, 1))
	p.colsBox.Objects = objs
	p.colsBox.Refresh()
	p.legend.Hide()
	p.figTitle.Hide()
	p.figures.box.Hide()
	p.chartTitle.Hide()
	p.chart.Set(nil)
	p.exportMD.Disable()
	p.exportHTML.Disable()
	p.results.Show()
}

// cmpColumn is one model's answer: its name and file, the answer as it
// streams (Markdown, as in the chat), and once the comparison is done,
// the reference's answer with this model's disagreements tinted.
type cmpColumn struct {
	p       *comparePage
	title   *widget.Label
	swatch  *canvas.Rectangle // the model's colour in the chart
	info    *widget.RichText
	state   *widget.RichText
	errText *widget.Label
	md      *markdown.View
	body    *fyne.Container
	diffCap *widget.RichText
	diff    *tokenFlow
	diffBox *fyne.Container
	content fyne.CanvasObject

	text     string
	fresh    string // text not yet looked at for Hangul
	tokens   int    // streamed so far
	dirty    bool
	throttle core.Throttle // paces re-rendering while the answer streams
}

func newCmpColumn(p *comparePage) *cmpColumn {
	c := &cmpColumn{p: p}
	c.title = core.BoldLabel("")
	c.info = core.NewMuted(theme.SizeNameCaptionText, fyne.TextWrapWord)
	c.state = core.NewMuted(theme.SizeNameCaptionText, fyne.TextWrapWord)
	c.errText = widget.NewLabel("")
	c.errText.Wrapping = fyne.TextWrapWord
	c.errText.Importance = widget.DangerImportance
	c.errText.Hide()
	c.md = markdown.NewView(markdown.Options{
		OnCopy: func(s string) { p.w.App.Clipboard().SetContent(s) },
	})
	c.body = container.NewStack(c.md)
	c.diffCap = core.NewMuted(theme.SizeNameCaptionText, fyne.TextWrapWord)
	c.diff = newTokenFlow()
	c.diffBox = container.NewVBox(widget.NewSeparator(), c.diffCap, c.diff)
	c.diffBox.Hide()
	c.swatch = canvas.NewRectangle(color.Transparent)
	c.swatch.SetMinSize(fyne.NewSize(14, 14))
	c.swatch.CornerRadius = 3
	c.swatch.Hide()
	head := container.NewBorder(nil, nil, container.NewCenter(c.swatch), nil, c.title)
	card := container.NewVBox(core.Lines(head, c.info, c.state), c.errText, c.body, c.diffBox)
	c.content = container.NewPadded(container.NewStack(core.NewBubble(), container.NewPadded(card)))
	return c
}

// setModel names the column's model.
func (c *cmpColumn) setModel(name, info string) {
	c.title.SetText(name)
	core.SetMuted(c.info, info)
}

func (c *cmpColumn) setState(s string) {
	core.SetMuted(c.state, s)
	if r := c.p.run; r != nil {
		for i, col := range c.p.cols {
			if col == c && i < len(r.states) {
				r.states[i] = s
			}
		}
	}
}

// setColor shows the colour of the model's line in the chart; nil hides
// it (the reference has no line).
func (c *cmpColumn) setColor(col color.Color) {
	if col == nil {
		c.swatch.Hide()
		return
	}
	c.swatch.FillColor = col
	c.swatch.Show()
	c.swatch.Refresh()
}

func (c *cmpColumn) setError(msg string) {
	c.errText.SetText(msg)
	c.errText.Hidden = msg == ""
	c.errText.Refresh()
}

// appendText adds streamed text (n tokens so far). The Markdown is
// rendered again at most every Coalesce, and less often as the answer
// grows: never more than a third of the time goes to rendering, so the
// page keeps up with a fast model.
func (c *cmpColumn) appendText(s string, n int) {
	c.text += s
	c.fresh += s
	c.tokens = n
	c.dirty = true
	c.throttle.Schedule(c.p.w.Do, c.render)
}

// setText replaces the answer (a reopened comparison, or the final text).
func (c *cmpColumn) setText(s string) {
	c.text = s
	c.fresh = s
	c.tokens = 0
	c.dirty = true
	c.render()
}

func (c *cmpColumn) render() {
	if !c.dirty {
		return
	}
	c.dirty = false
	c.md.SetText(c.text)
	c.fresh = ""
	if c.tokens > 0 {
		c.setState(lang.X("compare.st.tokens", "Answering… {{.N}} tokens", map[string]any{"N": c.tokens}))
	}
}

// setDiff shows the reference's answer with this model's view of each
// token; nil hides it.
func (c *cmpColumn) setDiff(caption string, toks []tokenMark) {
	if caption == "" {
		c.diffBox.Hide()
		return
	}
	core.SetMuted(c.diffCap, caption)
	c.diff.SetTokens(toks)
	c.diff.Hidden = toks == nil
	c.diffBox.Show()
	c.diffBox.Refresh()
}
