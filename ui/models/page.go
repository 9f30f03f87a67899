package models

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/models"
	"github.com/churon/churon/models/download"
	"github.com/churon/churon/ui/core"
)

// The Models page: its frame, the tabs and what every tab shares. Each
// tab has its file: catalog.go, search.go (with token.go), downloads.go,
// library.go.

// modelsPage is the Models page: the curated catalog with a fit verdict
// for this machine, a search of the hub with each repository's
// quantizations, the download queue, and the models on this computer.
// It holds widgets only; what it shows lives in State.
type modelsPage struct {
	w       *core.Window
	s       *State
	content fyne.CanvasObject
	tabs    *container.AppTabs
	memLine *widget.Label

	catTab, searchTab, dlTab, libTab *container.TabItem

	catRows []*catalogRow

	query        *widget.Entry
	searchBtn    *widget.Button
	searchStatus *widget.Label
	results      *fyne.Container
	repoBox      *fyne.Container
	searchGen    int
	repoGen      int
	variants     []*variantRow
	token        *widget.Entry

	dlBox   *fyne.Container
	dlEmpty *widget.Label
	dlClear *widget.Button
	dlRows  map[*download.Download]*dlRow
	dlOrder []*download.Download

	libBox    *fyne.Container
	libStatus *widget.Label
	libRows   []*libRow
	libGen    int
}

func newModelsPage(s *State) *modelsPage {
	p := &modelsPage{w: s.w, s: s, dlRows: map[*download.Download]*dlRow{}}
	title := widget.NewLabel(lang.X("models.title", "Models"))
	title.SizeName = theme.SizeNameHeadingText
	title.TextStyle.Bold = true
	p.memLine = widget.NewLabel("")
	p.memLine.SizeName = theme.SizeNameCaptionText
	back := widget.NewButtonWithIcon(lang.X("models.back", "Back to chat"), theme.NavigateBackIcon(), s.hide)
	back.Importance = widget.LowImportance
	header := core.Row(container.NewVBox(title, p.memLine), back)

	p.catTab = container.NewTabItem(lang.X("models.tab.catalog", "Recommended"), p.buildCatalog())
	p.searchTab = container.NewTabItem(lang.X("models.tab.search", "Search Hugging Face"), p.buildSearch())
	p.dlTab = container.NewTabItem(lang.X("models.tab.downloads", "Downloads"), p.buildDownloads())
	p.libTab = container.NewTabItem(lang.X("models.tab.library", "On this computer"), p.buildLibrary())
	p.tabs = container.NewAppTabs(p.catTab, p.searchTab, p.dlTab, p.libTab)
	p.tabs.OnSelected = func(t *container.TabItem) {
		if t == p.libTab {
			p.reloadLibrary()
		}
	}
	p.content = container.NewBorder(container.NewPadded(header), nil, nil, nil, p.tabs)
	p.refreshVerdicts()
	p.refresh()
	p.reloadLibrary()
	return p
}

// column is the page's reading column: rows at most 900 wide, centred.
func column(objs ...fyne.CanvasObject) fyne.CanvasObject {
	return container.NewVScroll(container.New(&core.Readable{Max: 900}, objs...))
}

// refreshVerdicts recomputes every fit verdict after the memory was read
// again.
func (p *modelsPage) refreshVerdicts() {
	s := p.s
	switch {
	case s.svc.Memory().Total <= 0:
		p.memLine.SetText(lang.X("models.mem.unknown", "This computer's memory is unknown, so the fit verdicts are estimates only."))
	default:
		p.memLine.SetText(lang.X("models.mem", "This computer: {{.Total}} of memory, {{.Avail}} free now.",
			map[string]any{"Total": core.FormatBytes(s.svc.Memory().Total), "Avail": core.FormatBytes(s.svc.Memory().Available)}))
	}
	rec, _, recOK := s.svc.Recommend()
	for _, r := range p.catRows {
		r.setVerdict(s.svc.Check(models.CatalogMeta(r.m)))
		r.badge.Hidden = !recOK || rec.ID != r.m.ID
	}
	for _, r := range p.variants {
		r.refreshVerdict()
	}
	for _, r := range p.libRows {
		r.refreshVerdict()
	}
}

// refresh updates what depends on the downloads.
func (p *modelsPage) refresh() {
	for _, r := range p.catRows {
		r.refresh()
	}
	for _, r := range p.variants {
		r.refresh()
	}
	p.refreshDownloads()
	p.refreshLoaded()
}

// refreshLoaded marks the loaded model in the library.
func (p *modelsPage) refreshLoaded() {
	for _, r := range p.libRows {
		r.refreshLoaded()
	}
}
