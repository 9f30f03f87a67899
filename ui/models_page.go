package ui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/assets/catalog"
	"github.com/churon/churon/models/download"
	"github.com/churon/churon/models/fit"
	"github.com/churon/churon/models/hub"
	"github.com/churon/churon/models/library"
	"github.com/churon/churon/ui/locale"
)

// HubTimeout bounds one hub request made for the page (a search, a file
// listing, a header read).
const HubTimeout = 45 * time.Second

// modelsPage is the Models page: the curated catalog with a fit verdict
// for this machine, a search of the hub with each repository's
// quantizations, the download queue, and the models on this computer.
// It holds widgets only; what it shows lives in modelsState.
type modelsPage struct {
	u       *UI
	s       *modelsState
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

// showModelsPage opens the Models page in the window's centre.
func (u *UI) showModelsPage() {
	u.modelsShown = true
	u.mdl.readMemory()
	if u.modelsPage != nil {
		u.modelsPage.refreshVerdicts()
		u.modelsPage.refresh()
		u.modelsPage.reloadLibrary()
	}
	u.refresh()
}

// hideModelsPage goes back to the chat (or the welcome view).
func (u *UI) hideModelsPage() {
	u.modelsShown = false
	u.refresh()
}

// modelsCenter is the Models page when it is open, made on first use
// (and again after the window is rebuilt). The message box is hidden
// while it shows.
func (u *UI) modelsCenter() (fyne.CanvasObject, bool) {
	if !u.modelsShown {
		u.composer.content.Show()
		return nil, false
	}
	if u.modelsPage == nil {
		u.modelsPage = newModelsPage(u)
	}
	u.composer.content.Hide()
	return u.modelsPage.content, true
}

func newModelsPage(u *UI) *modelsPage {
	p := &modelsPage{u: u, s: u.mdl, dlRows: map[*download.Download]*dlRow{}}
	title := widget.NewLabel(lang.X("models.title", "Models"))
	title.SizeName = theme.SizeNameHeadingText
	title.TextStyle.Bold = true
	p.memLine = widget.NewLabel("")
	p.memLine.SizeName = theme.SizeNameCaptionText
	back := widget.NewButtonWithIcon(lang.X("models.back", "Back to chat"), theme.NavigateBackIcon(), u.hideModelsPage)
	back.Importance = widget.LowImportance
	header := container.NewBorder(nil, nil, nil, container.NewCenter(back), container.NewVBox(title, p.memLine))

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

// lines stacks a row's lines closer than a plain VBox: each label
// already carries its own padding.
func lines(objs ...fyne.CanvasObject) *fyne.Container {
	return container.New(layout.NewCustomPaddedVBoxLayout(-2*theme.Padding()), objs...)
}

// column is the page's reading column: rows at most 900 wide, centred.
func column(objs ...fyne.CanvasObject) fyne.CanvasObject {
	return container.NewVScroll(container.New(&readable{max: 900}, objs...))
}

// refreshVerdicts recomputes every fit verdict after the memory was read
// again.
func (p *modelsPage) refreshVerdicts() {
	s := p.s
	switch {
	case s.memErr != nil || s.mem.Total <= 0:
		p.memLine.SetText(lang.X("models.mem.unknown", "This computer's memory is unknown, so the fit verdicts are estimates only."))
	default:
		p.memLine.SetText(lang.X("models.mem", "This computer: {{.Total}} of memory, {{.Avail}} free now.",
			map[string]any{"Total": formatBytes(s.mem.Total), "Avail": formatBytes(s.mem.Available)}))
	}
	rec, _, recOK := s.recommend()
	for _, r := range p.catRows {
		r.setVerdict(s.check(catalogMeta(r.m)))
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
}

// verdictText says a fit verdict in words, with the colour to show it in.
func verdictText(r fit.Result) (string, widget.Importance) {
	data := map[string]any{"Need": formatBytes(r.Need), "Avail": formatBytes(r.Memory.Available), "Total": formatBytes(r.Memory.Total)}
	switch r.Verdict {
	case fit.Fits:
		return lang.X("models.fits", "Fits: needs about {{.Need}} of the {{.Avail}} free", data), widget.SuccessImportance
	case fit.Tight:
		return lang.X("models.tight", "Tight: needs about {{.Need}}, {{.Avail}} free of {{.Total}}; close other programs first", data), widget.WarningImportance
	case fit.WontFit:
		return lang.X("models.wontfit", "Will not fit: needs about {{.Need}}, this computer has {{.Total}}", data), widget.DangerImportance
	}
	return lang.X("models.fit_unknown", "Needs about {{.Need}} of memory", data), widget.MediumImportance
}

func newVerdictLabel() *widget.Label {
	l := widget.NewLabel("")
	l.Wrapping = fyne.TextWrapWord
	return l
}

func setVerdict(l *widget.Label, r fit.Result) {
	text, imp := verdictText(r)
	l.Importance = imp
	l.SetText(text)
}

// formatParams writes a parameter count the way model cards do ("1.5B").
func formatParams(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.0fM", float64(n)/1e6)
	case n > 0:
		return fmt.Sprintf("%d", n)
	}
	return "?"
}

// formatContext writes a context length in thousands of tokens ("32K").
func formatContext(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%dK", n/1024)
	}
	return fmt.Sprint(n)
}

func boldLabel(s string) *widget.Label {
	l := widget.NewLabel(s)
	l.TextStyle.Bold = true
	l.Truncation = fyne.TextTruncateEllipsis
	return l
}

func mutedLine(s string) *widget.RichText {
	rt := newMuted(theme.SizeNameCaptionText, fyne.TextWrapWord)
	setMuted(rt, s)
	return rt
}

// confirmAction asks before something that cannot be undone.
func (u *UI) confirmAction(title, msg, action string, f func()) {
	d := dialog.NewConfirm(title, msg, func(ok bool) {
		if ok {
			f()
		}
	}, u.win)
	d.SetConfirmText(action)
	d.SetDismissText(lang.X("dialog.cancel", "Cancel"))
	d.SetConfirmImportance(widget.DangerImportance)
	d.Show()
}

// ---- Catalog ----

// catalogRow is one curated model.
type catalogRow struct {
	p        *modelsPage
	m        catalog.Model
	dest     string
	res      fit.Result
	badge    *widget.Label // "our pick for this computer"
	dlInfo   *widget.Label // the download's progress in words
	verdict  *widget.Label
	action   *widget.Button
	progress *widget.ProgressBar
	details  *fyne.Container
	detail   *widget.Label
	checked  bool
	content  fyne.CanvasObject
}

func (p *modelsPage) buildCatalog() fyne.CanvasObject {
	intro := widget.NewLabel(lang.X("models.catalog.intro",
		"Good models to start with, checked against this computer's memory. Each is one file in GGUF format; the download resumes if it is interrupted."))
	intro.Wrapping = fyne.TextWrapWord
	objs := []fyne.CanvasObject{intro}
	// The model recommended for this computer comes first; the rest keep
	// the catalog's order (smallest first).
	models := slices.Clone(p.s.cat.Models)
	if rec, _, ok := p.s.recommend(); ok {
		slices.SortStableFunc(models, func(a, b catalog.Model) int {
			return cmp.Compare(boolInt(b.ID == rec.ID), boolInt(a.ID == rec.ID))
		})
	}
	for _, m := range models {
		r := newCatalogRow(p, m)
		p.catRows = append(p.catRows, r)
		objs = append(objs, widget.NewSeparator(), r.content)
	}
	return column(objs...)
}

func newCatalogRow(p *modelsPage, m catalog.Model) *catalogRow {
	r := &catalogRow{p: p, m: m, dest: p.s.destFor(m.Repo, m.File)}
	info := mutedLine(strings.Join([]string{m.Family,
		lang.X("models.params", "{{.N}} parameters", map[string]any{"N": formatParams(m.Parameters)}),
		m.Quant, formatBytes(m.Size),
		lang.X("models.context", "{{.N}} context", map[string]any{"N": formatContext(m.Context)}),
		m.License}, " · "))
	desc := widget.NewLabel(m.Describe(locale.Current()))
	desc.Wrapping = fyne.TextWrapWord
	r.verdict = newVerdictLabel()
	r.progress = widget.NewProgressBar()
	r.progress.Hide()
	r.dlInfo = widget.NewLabel("")
	r.dlInfo.SizeName = theme.SizeNameCaptionText
	r.dlInfo.Hide()
	r.action = widget.NewButton("", r.onAction)
	more := widget.NewButton(lang.X("models.details", "Details"), r.onDetails)
	more.Importance = widget.LowImportance
	r.detail = widget.NewLabel("")
	r.detail.Wrapping = fyne.TextWrapWord
	r.details = container.NewVBox(r.detail)
	r.details.Hide()
	r.badge = widget.NewLabel(lang.X("models.pick", "Our pick for this computer"))
	r.badge.Importance = widget.HighImportance
	r.badge.SizeName = theme.SizeNameCaptionText
	r.badge.Hide()
	title := boldLabel(m.Name)
	title.Truncation = fyne.TextTruncateOff
	col := lines(container.NewHBox(title, r.badge), info, desc, r.verdict)
	if !p.s.supported(m.Architecture) {
		warn := widget.NewLabel(lang.X("models.unsupported", "Churon cannot run {{.Arch}} models yet: you can download this one for other apps.", map[string]any{"Arch": m.Architecture}))
		warn.Wrapping = fyne.TextWrapWord
		warn.Importance = widget.DangerImportance
		col.Add(warn)
	}
	col.Add(r.progress)
	col.Add(r.dlInfo)
	col.Add(r.details)
	r.content = container.NewBorder(nil, nil, nil, container.NewVBox(r.action, more), col)
	return r
}

func (r *catalogRow) setVerdict(res fit.Result) {
	r.res = res
	setVerdict(r.verdict, res)
}

// refresh shows what can be done with the model now: download it, follow
// its download, or load it.
func (r *catalogRow) refresh() {
	s := r.p.s
	r.action.Enable()
	r.progress.Hide()
	r.dlInfo.Hide()
	switch d := s.active(r.dest); {
	case s.pending[r.m.ID]:
		r.action.SetText(lang.X("models.preparing", "Preparing…"))
		r.action.Disable()
	case d != nil:
		// The row pauses and resumes its download; Cancel is on the
		// Downloads tab, with the other downloads.
		if d.Status() == download.Paused {
			r.action.SetText(lang.X("models.resume", "Resume"))
		} else {
			r.action.SetText(lang.X("models.pause", "Pause"))
		}
		r.action.Importance = widget.MediumImportance
		r.progress.SetValue(d.Progress())
		r.progress.Show()
		r.dlInfo.SetText(downloadLine(d))
		r.dlInfo.Show()
	case fileExists(r.dest):
		if m := r.p.u.model; m != nil && m.Path == r.dest {
			r.action.SetText(lang.X("models.loaded", "Loaded"))
			r.action.Disable()
		} else {
			r.action.SetText(lang.X("models.load", "Load"))
		}
		r.action.Importance = widget.HighImportance
	default:
		r.action.SetText(lang.X("models.download", "Download"))
		r.action.Importance = widget.MediumImportance
	}
	r.action.Refresh()
}

func (r *catalogRow) onAction() {
	s := r.p.s
	if d := s.active(r.dest); d != nil {
		if d.Status() == download.Paused {
			s.mgr.Resume(d)
		} else {
			s.mgr.Pause(d)
		}
		r.p.refresh()
		return
	}
	if fileExists(r.dest) {
		s.load(r.dest)
		return
	}
	confirmFit(r.p.u, r.m.Name, r.res, func() { s.downloadCatalog(r.m, false) })
}

// confirmFit asks before downloading a model that will not fit.
func confirmFit(u *UI, name string, res fit.Result, start func()) {
	if res.Verdict != fit.WontFit {
		start()
		return
	}
	text, _ := verdictText(res)
	u.confirmAction(lang.X("models.wontfit.title", "Download anyway?"),
		lang.X("models.wontfit.body", "{{.Name}} is unlikely to run on this computer. {{.Verdict}}.", map[string]any{"Name": name, "Verdict": text}),
		lang.X("models.download", "Download"), start)
}

// onDetails shows where the model comes from and, the first time, reads
// the file's header from the hub (a few hundred KB, with Range requests)
// for an exact memory estimate.
func (r *catalogRow) onDetails() {
	if r.details.Visible() {
		r.details.Hide()
		return
	}
	r.details.Show()
	where := lang.X("models.from", "From {{.Repo}}, file {{.File}}", map[string]any{"Repo": r.m.Repo, "File": r.m.File})
	if r.checked {
		return
	}
	r.checked = true
	r.detail.SetText(where + "\n" + lang.X("models.reading_header", "Reading the file's header…"))
	s := r.p.s
	hc := s.hub()
	url := hc.ResolveURL(r.m.Repo, "main", r.m.File)
	go func() {
		ctx, cancel := context.WithTimeout(r.p.u.ctx, HubTimeout)
		defer cancel()
		meta, stats, err := fit.Remote(ctx, url, fit.RemoteOptions{Authorize: hc.Authorize})
		r.p.u.do(func() {
			if err != nil {
				r.checked = false
				r.detail.SetText(where + "\n" + lang.X("models.header_error", "Could not read the file's header: {{.Err}}", map[string]any{"Err": err.Error()}))
				return
			}
			res := s.check(meta)
			r.setVerdict(res)
			r.detail.SetText(where + "\n" + lang.X("models.header", "From its header ({{.Read}} read): {{.Arch}}, {{.Layers}} layers, {{.Context}} context, {{.Params}} parameters.",
				map[string]any{"Read": formatBytes(stats.BytesFetched), "Arch": meta.Architecture, "Layers": meta.Layers,
					"Context": formatContext(meta.ContextLength), "Params": formatParams(meta.Parameters)}))
		})
	}()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// statusWord names a download's state.
func statusWord(st download.Status) string {
	switch st {
	case download.Queued:
		return lang.X("models.st.queued", "Queued")
	case download.Running:
		return lang.X("models.st.running", "Downloading…")
	case download.Paused:
		return lang.X("models.st.paused", "Paused")
	case download.Verifying:
		return lang.X("models.st.verifying", "Checking…")
	case download.Completed:
		return lang.X("models.st.done", "Done")
	case download.Failed:
		return lang.X("models.st.failed", "Failed")
	case download.Canceled:
		return lang.X("models.st.canceled", "Cancelled")
	}
	return st.String()
}

// ---- Search ----

func (p *modelsPage) buildSearch() fyne.CanvasObject {
	p.query = widget.NewEntry()
	p.query.SetPlaceHolder(lang.X("models.search.hint", "Model name, e.g. qwen3 or llama 3.2"))
	p.query.OnSubmitted = func(string) { p.onSearch() }
	p.searchBtn = widget.NewButtonWithIcon(lang.X("models.search", "Search"), theme.SearchIcon(), p.onSearch)
	p.searchBtn.Importance = widget.HighImportance
	bar := container.NewBorder(nil, nil, nil, p.searchBtn, p.query)
	p.searchStatus = widget.NewLabel(lang.X("models.search.intro", "Search Hugging Face for models in GGUF format. Pick a repository to see its quantizations, their sizes and whether they fit."))
	p.searchStatus.Wrapping = fyne.TextWrapWord
	p.results = container.NewVBox()
	p.repoBox = container.NewVBox()
	p.repoBox.Hide()

	p.token = widget.NewPasswordEntry()
	p.token.SetPlaceHolder(lang.X("models.token.hint", "hf_… (only for gated or private repositories)"))
	if v, ok := p.u.setting(settingHubToken); ok {
		p.token.SetText(v)
	}
	save := widget.NewButton(lang.X("dialog.save", "Save"), func() {
		p.s.setToken(p.token.Text)
		p.u.banner(lang.X("models.token.saved", "Access token saved."), false)
	})
	tokenTitle := widget.NewLabel(lang.X("models.token", "Hugging Face access token"))
	tokenTitle.SizeName = theme.SizeNameCaptionText
	tokenRow := container.NewVBox(tokenTitle, container.NewBorder(nil, nil, nil, save, p.token))
	return column(bar, p.searchStatus, p.results, p.repoBox, widget.NewSeparator(), tokenRow)
}

func (p *modelsPage) onSearch() {
	q := strings.TrimSpace(p.query.Text)
	p.searchGen++
	gen := p.searchGen
	p.repoBox.Hide()
	p.results.Show()
	p.searchStatus.Show()
	p.results.RemoveAll()
	p.searchStatus.SetText(lang.X("models.searching", "Searching…"))
	hc := p.s.hub()
	go func() {
		ctx, cancel := context.WithTimeout(p.u.ctx, HubTimeout)
		defer cancel()
		ms, err := hc.Search(ctx, q, hub.SearchOptions{Limit: 30})
		p.u.do(func() {
			if gen != p.searchGen {
				return // a newer search is under way
			}
			p.showResults(ms, err)
		})
	}()
}

func (p *modelsPage) showResults(ms []hub.Model, err error) {
	p.results.RemoveAll()
	switch {
	case err != nil:
		p.searchStatus.SetText(hubError(err))
	case len(ms) == 0:
		p.searchStatus.SetText(lang.X("models.noresults", "No GGUF models match."))
	default:
		p.searchStatus.SetText(lang.X("models.results", "{{.N}} repositories, most downloaded first.", map[string]any{"N": len(ms)}))
	}
	for _, m := range ms {
		m := m
		meta := []string{lang.X("models.downloads_n", "{{.N}} downloads", map[string]any{"N": humanCount(m.Downloads)}),
			lang.X("models.likes_n", "{{.N}} likes", map[string]any{"N": humanCount(m.Likes)})}
		if m.Gated {
			meta = append(meta, lang.X("models.gated", "gated: needs an access token"))
		}
		open := widget.NewButton(lang.X("models.files", "Show files"), func() { p.showRepo(m.ID) })
		p.results.Add(container.NewBorder(nil, nil, nil, container.NewCenter(open),
			lines(boldLabel(m.ID), mutedLine(strings.Join(meta, " · ")))))
	}
	p.results.Refresh()
}

// hubError says a hub error in the person's language where it is one the
// UI knows.
func hubError(err error) string {
	switch {
	case errors.Is(err, hub.ErrUnauthorized):
		return lang.X("models.err.auth", "Access denied: this repository is gated or private. Accept its terms on huggingface.co and save an access token below.")
	case errors.Is(err, hub.ErrRateLimited):
		return lang.X("models.err.rate", "Hugging Face asks to slow down; try again in a minute.")
	case errors.Is(err, hub.ErrNotFound):
		return lang.X("models.err.notfound", "Not found on Hugging Face.")
	}
	return lang.X("models.err.hub", "Could not reach Hugging Face: {{.Err}}", map[string]any{"Err": err.Error()})
}

func humanCount(n int64) string {
	switch {
	case n >= 1e6:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + "M"
	case n >= 1e3:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e3), ".0") + "K"
	}
	return fmt.Sprint(n)
}

// variantRow is one quantization of a repository.
type variantRow struct {
	p    *modelsPage
	repo string
	v    hub.Variant
	// meta is the repository's shape once a header was read; checked
	// says the attempt is over (meta stays nil when it failed).
	meta    *fit.Meta
	checked bool
	res     fit.Result
	verdict *widget.Label
	action  *widget.Button
	bar     *widget.ProgressBar
	content fyne.CanvasObject
}

// showRepo lists a repository's quantizations, then reads one file's
// header to give each a memory verdict (quantizations of one model share
// their shape; only the weights differ).
func (p *modelsPage) showRepo(repo string) {
	p.repoGen++
	gen := p.repoGen
	p.results.Hide()
	p.searchStatus.Hide()
	p.variants = nil
	p.repoBox.RemoveAll()
	back := widget.NewButtonWithIcon(lang.X("models.results.back", "All results"), theme.NavigateBackIcon(), func() {
		p.repoGen++
		p.repoBox.Hide()
		p.results.Show()
		p.searchStatus.Show()
	})
	back.Importance = widget.LowImportance
	status := widget.NewLabel(lang.X("models.listing", "Listing files…"))
	status.Wrapping = fyne.TextWrapWord
	p.repoBox.Add(container.NewBorder(nil, nil, back, nil, boldLabel(repo)))
	p.repoBox.Add(status)
	p.repoBox.Show()
	p.repoBox.Refresh()
	hc := p.s.hub()
	go func() {
		ctx, cancel := context.WithTimeout(p.u.ctx, HubTimeout)
		defer cancel()
		files, err := hc.Files(ctx, repo, "main")
		vs := hub.Variants(files)
		p.u.do(func() {
			if gen != p.repoGen {
				return
			}
			switch {
			case err != nil:
				status.SetText(hubError(err))
			case len(vs) == 0:
				status.SetText(lang.X("models.nogguf", "This repository has no GGUF files."))
			default:
				status.SetText(lang.X("models.variants", "{{.N}} files. Q4_K_M is the usual choice: small, with little loss.", map[string]any{"N": len(vs)}))
			}
			for _, v := range vs {
				r := newVariantRow(p, repo, v)
				p.variants = append(p.variants, r)
				p.repoBox.Add(widget.NewSeparator())
				p.repoBox.Add(r.content)
			}
			p.repoBox.Refresh()
		})
		if err != nil {
			return
		}
		var meta *fit.Meta
		if pick, ok := hub.Pick(vs, ""); ok {
			// Without a header the verdict comes from the size alone.
			if m, _, err := fit.Remote(ctx, hc.ResolveURL(repo, "main", pick.Files[0].Path), fit.RemoteOptions{Authorize: hc.Authorize}); err == nil {
				meta = &m
			}
		}
		p.u.do(func() {
			if gen != p.repoGen {
				return
			}
			for _, r := range p.variants {
				r.meta, r.checked = meta, true
				r.refreshVerdict()
			}
		})
	}()
}

func newVariantRow(p *modelsPage, repo string, v hub.Variant) *variantRow {
	r := &variantRow{p: p, repo: repo, v: v}
	name := v.Quant
	if name == "" {
		name = v.Name
	}
	info := []string{path.Base(v.Files[0].Path), formatBytes(v.Size)}
	if v.Split() {
		info = append(info, lang.X("models.parts", "{{.N}} parts", map[string]any{"N": len(v.Files)}))
	}
	if !v.Complete {
		info = append(info, lang.X("models.parts_missing", "parts missing"))
	}
	r.verdict = newVerdictLabel()
	r.verdict.SetText(lang.X("models.checking", "Checking whether it fits…"))
	r.verdict.Importance = widget.LowImportance
	r.action = widget.NewButton(lang.X("models.download", "Download"), r.onDownload)
	r.bar = widget.NewProgressBar()
	r.bar.Hide()
	r.content = container.NewBorder(nil, nil, nil, container.NewCenter(r.action),
		lines(boldLabel(name), mutedLine(strings.Join(info, " · ")), r.verdict, r.bar))
	r.refresh()
	return r
}

// refreshVerdict estimates the memory from the repository's shape with
// this variant's weights; without a header, from its size alone.
func (r *variantRow) refreshVerdict() {
	if !r.checked {
		return // still reading the header: the row says so
	}
	meta := fit.Meta{WeightBytes: r.v.Size}
	if r.meta != nil {
		meta = *r.meta
		meta.WeightBytes = r.v.Size - meta.HeaderBytes
	}
	r.res = r.p.s.check(meta)
	setVerdict(r.verdict, r.res)
	if r.meta == nil {
		// Without the header the KV cache is unknown: say the number is a
		// floor.
		r.verdict.SetText(r.verdict.Text + " " + lang.X("models.size_only", "(from the file size alone: the header could not be read)"))
	}
}

func (r *variantRow) dests() []string {
	var out []string
	for _, f := range r.v.Files {
		out = append(out, r.p.s.destFor(r.repo, f.Path))
	}
	return out
}

func (r *variantRow) refresh() {
	s := r.p.s
	dests := r.dests()
	r.action.Enable()
	r.bar.Hide()
	var done, size int64
	busy := false
	for _, dst := range dests {
		if d := s.active(dst); d != nil {
			busy = true
			done += d.BytesComplete()
		}
	}
	size = r.v.Size
	switch {
	case !r.v.Complete:
		r.action.Disable()
	case busy:
		r.action.SetText(lang.X("models.st.running", "Downloading…"))
		r.action.Disable()
		if size > 0 {
			r.bar.SetValue(float64(done) / float64(size))
		}
		r.bar.Show()
	case allPresent(dests):
		r.action.SetText(lang.X("models.load", "Load"))
	default:
		r.action.SetText(lang.X("models.download", "Download"))
	}
}

func (r *variantRow) onDownload() {
	dests := r.dests()
	s := r.p.s
	if allPresent(dests) {
		s.load(dests[0])
		return
	}
	name := r.repo + " " + r.v.Quant
	confirmFit(r.p.u, name, r.res, func() {
		if err := s.queueVariant(r.repo, "main", r.v, false); err != nil {
			r.p.u.showError(err)
		}
	})
}

// ---- Downloads ----

type dlRow struct {
	d       *download.Download
	bar     *widget.ProgressBar
	detail  *widget.Label
	pause   *widget.Button
	cancel  *widget.Button
	load    *widget.Button
	content fyne.CanvasObject
}

func (p *modelsPage) buildDownloads() fyne.CanvasObject {
	clearBtn := widget.NewButtonWithIcon(lang.X("models.clear", "Clear finished"), theme.DeleteIcon(), func() {
		if mgr := p.s.mgr; mgr != nil {
			mgr.Forget()
		}
		p.refreshDownloads()
	})
	clearBtn.Importance = widget.LowImportance
	p.dlClear = clearBtn
	p.dlEmpty = widget.NewLabel(lang.X("models.dl.none", "Nothing is downloading. Downloads continue in the background, and resume where they stopped after Churon is closed."))
	p.dlEmpty.Wrapping = fyne.TextWrapWord
	p.dlBox = container.NewVBox()
	return column(container.NewHBox(clearBtn), p.dlEmpty, p.dlBox)
}

func (p *modelsPage) newDLRow(d *download.Download) *dlRow {
	r := &dlRow{d: d}
	r.bar = widget.NewProgressBar()
	r.detail = widget.NewLabel("")
	r.detail.SizeName = theme.SizeNameCaptionText
	r.detail.Wrapping = fyne.TextWrapWord
	r.pause = widget.NewButtonWithIcon(lang.X("models.pause", "Pause"), theme.MediaPauseIcon(), func() {
		if mgr := p.s.mgr; mgr != nil {
			if d.Status() == download.Paused {
				mgr.Resume(d)
			} else {
				mgr.Pause(d)
			}
		}
		p.refreshDownloads()
	})
	r.cancel = widget.NewButtonWithIcon(lang.X("models.cancel", "Cancel"), theme.CancelIcon(), func() {
		p.u.confirmAction(lang.X("models.cancel.title", "Cancel this download?"),
			lang.X("models.cancel.body", "{{.Name}}: the part downloaded so far is deleted.", map[string]any{"Name": d.Request().Label}),
			lang.X("models.cancel.yes", "Cancel download"), func() {
				d.Cancel()
				p.refreshDownloads()
			})
	})
	r.load = widget.NewButton(lang.X("models.load", "Load"), func() { p.s.load(d.Request().Dest) })
	r.load.Importance = widget.HighImportance
	title := boldLabel(d.Request().Label)
	if title.Text == "" {
		title.SetText(filepath.Base(d.Request().Dest))
	}
	r.content = container.NewBorder(nil, nil, nil, container.NewCenter(container.NewHBox(r.pause, r.cancel, r.load)),
		lines(title, r.bar, r.detail))
	return r
}

// refreshDownloads lists the manager's downloads with their progress.
func (p *modelsPage) refreshDownloads() {
	list := p.s.downloads()
	same := len(list) == len(p.dlOrder)
	for i := 0; same && i < len(list); i++ {
		same = list[i] == p.dlOrder[i]
	}
	if !same {
		p.dlBox.RemoveAll()
		rows := map[*download.Download]*dlRow{}
		for i, d := range list {
			r := p.dlRows[d]
			if r == nil {
				r = p.newDLRow(d)
			}
			rows[d] = r
			if i > 0 {
				p.dlBox.Add(widget.NewSeparator())
			}
			p.dlBox.Add(r.content)
		}
		p.dlRows, p.dlOrder = rows, list
		p.dlBox.Refresh()
	}
	active := 0
	for _, d := range list {
		if !d.IsDone() {
			active++
		}
		p.dlRows[d].refresh()
	}
	if active < len(list) {
		p.dlClear.Enable()
	} else {
		p.dlClear.Disable()
	}
	p.dlEmpty.Hidden = len(list) > 0
	title := lang.X("models.tab.downloads", "Downloads")
	if active > 0 {
		title = fmt.Sprintf("%s (%d)", title, active)
	}
	if p.dlTab.Text != title {
		p.dlTab.Text = title
		p.tabs.Refresh()
	}
}

func (r *dlRow) refresh() {
	d := r.d
	st := d.Status()
	r.bar.SetValue(d.Progress())
	r.detail.Importance = widget.MediumImportance
	if st == download.Failed {
		r.detail.Importance = widget.DangerImportance
	}
	r.detail.SetText(downloadLine(d))
	done := d.IsDone()
	r.pause.Hidden, r.cancel.Hidden = done, done
	if st == download.Paused {
		r.pause.SetText(lang.X("models.resume", "Resume"))
		r.pause.SetIcon(theme.MediaPlayIcon())
	} else {
		r.pause.SetText(lang.X("models.pause", "Pause"))
		r.pause.SetIcon(theme.MediaPauseIcon())
	}
	r.load.Hidden = st != download.Completed || !strings.HasSuffix(strings.ToLower(d.Request().Dest), ".gguf") || isLaterPart(d.Request().Dest)
	r.content.Refresh()
}

// downloadLine says where a download stands: its state, the bytes done,
// and while it runs, the rate and the time left (or why it failed).
func downloadLine(d *download.Download) string {
	st := d.Status()
	size := d.Size()
	parts := []string{statusWord(st)}
	if size > 0 {
		parts = append(parts, lang.X("models.dl.of", "{{.Done}} of {{.Size}}", map[string]any{"Done": formatBytes(d.BytesComplete()), "Size": formatBytes(size)}))
	} else if n := d.BytesComplete(); n > 0 {
		parts = append(parts, formatBytes(n))
	}
	if st == download.Running {
		if rate := d.Rate(); rate > 0 {
			parts = append(parts, formatBytes(int64(rate))+"/s")
		}
		if eta := d.ETA(); eta > 0 {
			parts = append(parts, lang.X("models.dl.left", "{{.T}} left", map[string]any{"T": eta.Round(time.Second).String()}))
		}
	}
	if st == download.Failed && d.IsDone() {
		if err := d.Err(); err != nil {
			parts = append(parts, err.Error())
		}
	}
	return strings.Join(parts, " · ")
}

// isLaterPart reports whether a file is part 2 or later of a split model
// (loading starts from the first part).
func isLaterPart(p string) bool {
	b := filepath.Base(p)
	i := strings.LastIndex(b, "-of-")
	return i > 6 && b[i-6] == '-' && b[i-5:i] != "00001"
}

// ---- Library ----

type libRow struct {
	p       *modelsPage
	m       library.Model
	verdict *widget.Label
	status  *widget.Label
	verify  *widget.Button
	del     *widget.Button
	content fyne.CanvasObject
}

func (p *modelsPage) buildLibrary() fyne.CanvasObject {
	addFile := widget.NewButtonWithIcon(lang.X("models.add_file", "Add a file…"), theme.FileIcon(), p.onAddFile)
	addFolder := widget.NewButtonWithIcon(lang.X("models.add_folder", "Add a folder…"), theme.FolderIcon(), p.onAddFolder)
	refresh := widget.NewButtonWithIcon("", theme.ViewRefreshIcon(), p.reloadLibrary)
	for _, b := range []*widget.Button{addFile, addFolder, refresh} {
		b.Importance = widget.LowImportance
	}
	p.libStatus = widget.NewLabel("")
	p.libStatus.Wrapping = fyne.TextWrapWord
	p.libBox = container.NewVBox()
	return column(container.NewHBox(addFile, addFolder, refresh), p.libStatus, p.libBox)
}

// reloadLibrary lists the library in the background (reading each
// model's header takes a moment on slow disks).
func (p *modelsPage) reloadLibrary() {
	if err := p.s.open(); err != nil {
		p.libStatus.SetText(err.Error())
		return
	}
	p.libGen++
	gen := p.libGen
	lib := p.s.lib
	go func() {
		ctx, cancel := context.WithTimeout(p.u.ctx, DiscoverTimeout)
		defer cancel()
		ms, err := lib.List(ctx)
		p.u.do(func() {
			if gen == p.libGen {
				p.showLibrary(ms, err)
			}
		})
	}()
}

func (p *modelsPage) showLibrary(ms []library.Model, err error) {
	p.libBox.RemoveAll()
	p.libRows = nil
	switch {
	case err != nil:
		p.libStatus.SetText(err.Error())
	case len(ms) == 0:
		p.libStatus.SetText(lang.X("models.lib.empty", "No models yet. Download one from the Recommended tab, or add GGUF files you already have: they are used where they are, not copied."))
	default:
		p.libStatus.SetText(lang.X("models.lib.count", "{{.N}} models. Downloads are kept in {{.Dir}}.", map[string]any{"N": len(ms), "Dir": shortDir(filepath.Join(p.s.lib.Dir(), "x"))}))
	}
	for i, m := range ms {
		r := p.newLibRow(m)
		p.libRows = append(p.libRows, r)
		if i > 0 {
			p.libBox.Add(widget.NewSeparator())
		}
		p.libBox.Add(r.content)
	}
	p.libBox.Refresh()
}

func (p *modelsPage) newLibRow(m library.Model) *libRow {
	r := &libRow{p: p, m: m}
	meta := m.Meta
	info := []string{}
	for _, s := range []string{meta.Architecture, formatParams(meta.Parameters), meta.Quant, formatBytes(m.Size)} {
		if s != "" && s != "?" {
			info = append(info, s)
		}
	}
	if meta.ContextLength > 0 {
		info = append(info, lang.X("models.context", "{{.N}} context", map[string]any{"N": formatContext(meta.ContextLength)}))
	}
	var origin string
	switch {
	case m.Origin.Repo != "":
		origin = lang.X("models.lib.from", "From {{.Repo}}", map[string]any{"Repo": m.Origin.Repo})
	case m.Origin.URL != "":
		origin = lang.X("models.lib.url", "From {{.URL}}", map[string]any{"URL": m.Origin.URL})
	case !m.Managed:
		origin = lang.X("models.lib.inplace", "Used in place: {{.Dir}}", map[string]any{"Dir": shortDir(m.Path)})
	}
	col := lines(boldLabel(m.Name()), mutedLine(strings.Join(info, " · ")))
	if origin != "" {
		col.Add(mutedLine(origin))
	}
	r.verdict = newVerdictLabel()
	col.Add(r.verdict)
	r.status = widget.NewLabel("")
	r.status.Wrapping = fyne.TextWrapWord
	r.status.Hide()
	col.Add(r.status)
	load := widget.NewButton(lang.X("models.load", "Load"), func() { p.s.load(m.Path) })
	load.Importance = widget.HighImportance
	r.verify = widget.NewButton(lang.X("models.verify", "Verify"), r.onVerify)
	r.del = widget.NewButtonWithIcon("", theme.DeleteIcon(), r.onDelete)
	r.del.Importance = widget.LowImportance
	reveal := widget.NewButtonWithIcon("", theme.FolderOpenIcon(), r.onReveal)
	reveal.Importance = widget.LowImportance
	if m.Err != "" {
		load.Disable()
		r.showStatus(m.Err, widget.DangerImportance)
	}
	if m.Origin.SHA256 == "" {
		r.verify.Hide()
	}
	if !p.s.supported(meta.Architecture) && meta.Architecture != "" {
		r.showStatus(lang.X("models.unsupported.short", "Churon cannot run {{.Arch}} models yet.", map[string]any{"Arch": meta.Architecture}), widget.DangerImportance)
	}
	r.content = container.NewBorder(nil, nil, nil, container.NewCenter(container.NewHBox(load, r.verify, reveal, r.del)), col)
	r.refreshVerdict()
	return r
}

func (r *libRow) refreshVerdict() {
	if r.m.Err != "" || r.m.Meta.Layers == 0 {
		r.verdict.Hide()
		return
	}
	setVerdict(r.verdict, r.p.s.check(r.m.Meta))
}

func (r *libRow) showStatus(msg string, imp widget.Importance) {
	r.status.Importance = imp
	r.status.SetText(msg)
	r.status.Show()
}

// onReveal opens the folder holding the model in the desktop's file
// manager (xdg-open, Finder, Explorer: Fyne's OpenURL picks the right one).
func (r *libRow) onReveal() {
	if err := r.p.u.app.OpenURL(folderURL(r.m.Path)); err != nil {
		r.showStatus(lang.X("models.reveal.failed", "Could not open the folder: {{.Err}}", map[string]any{"Err": err.Error()}), widget.DangerImportance)
	}
}

// folderURL is the file:// URL of the folder that holds path.
func folderURL(path string) *url.URL {
	dir := filepath.ToSlash(filepath.Dir(path))
	if !strings.HasPrefix(dir, "/") {
		dir = "/" + dir // Windows: file:///C:/…
	}
	return &url.URL{Scheme: "file", Path: dir}
}

// onVerify recomputes the file's SHA-256 in the background.
func (r *libRow) onVerify() {
	r.verify.Disable()
	r.showStatus(lang.X("models.verifying", "Checking the file's SHA-256…"), widget.MediumImportance)
	lib, m := r.p.s.lib, r.m
	go func() {
		_, err := lib.Verify(r.p.u.ctx, m)
		r.p.u.do(func() {
			r.verify.Enable()
			if err != nil {
				r.showStatus(lang.X("models.verify.bad", "Damaged: {{.Err}}", map[string]any{"Err": err.Error()}), widget.DangerImportance)
				return
			}
			r.showStatus(lang.X("models.verify.ok", "Intact: the SHA-256 matches the one published on the hub."), widget.SuccessImportance)
		})
	}()
}

// onDelete asks, then deletes a downloaded model or forgets one used in
// place (its file is someone else's and stays).
func (r *libRow) onDelete() {
	m := r.m
	p := r.p
	var title, body, action string
	if m.Managed {
		title = lang.X("models.delete.title", "Delete this model?")
		body = lang.X("models.delete.body", "{{.Name}} ({{.Size}}) is deleted from this computer.", map[string]any{"Name": filepath.Base(m.Path), "Size": formatBytes(m.Size)})
		action = lang.X("models.delete", "Delete")
	} else {
		title = lang.X("models.forget.title", "Remove from the list?")
		body = lang.X("models.forget.body", "{{.Name}} stays where it is; Churon stops listing it.", map[string]any{"Name": m.Path})
		action = lang.X("models.forget", "Remove")
	}
	p.u.confirmAction(title, body, action, func() {
		if p.u.model != nil && p.u.model.Path == m.Path {
			if err := p.u.s.UnloadModel(); err != nil {
				p.u.showError(err)
				return
			}
		}
		if _, err := p.s.lib.Delete(m); err != nil {
			p.u.showError(err)
		}
		p.reloadLibrary()
		p.refresh()
	})
}

func (p *modelsPage) onAddFile() {
	d := dialog.NewFileOpen(func(rc fyne.URIReadCloser, err error) {
		if err != nil {
			p.u.showError(err)
			return
		}
		if rc == nil {
			return
		}
		path := rc.URI().Path()
		rc.Close()
		if err := p.s.lib.AddFile(path); err != nil {
			p.u.showError(err)
		}
		p.reloadLibrary()
	}, p.u.win)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".gguf", ".GGUF"}))
	d.Resize(fyne.NewSize(820, 560))
	d.Show()
}

func (p *modelsPage) onAddFolder() {
	d := dialog.NewFolderOpen(func(l fyne.ListableURI, err error) {
		if err != nil {
			p.u.showError(err)
			return
		}
		if l == nil {
			return
		}
		if err := p.s.lib.AddFolder(l.Path()); err != nil {
			p.u.showError(err)
		}
		p.reloadLibrary()
	}, p.u.win)
	d.Resize(fyne.NewSize(820, 560))
	d.Show()
}
