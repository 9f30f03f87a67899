package models

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/assets/catalog"
	"github.com/churon/churon/models/download"
	"github.com/churon/churon/models/fit"
	"github.com/churon/churon/ui/core"
	"github.com/churon/churon/ui/locale"
)

// The Recommended tab: the curated catalog, the model that suits this
// computer first.

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
	models := slices.Clone(p.s.svc.Catalog().Models)
	if rec, _, ok := p.s.svc.Recommend(); ok {
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
	r := &catalogRow{p: p, m: m, dest: p.s.DestFor(m.Repo, m.File)}
	info := core.MutedLine(strings.Join([]string{m.Family,
		lang.X("models.params", "{{.N}} parameters", map[string]any{"N": core.FormatParams(m.Parameters)}),
		m.Quant, core.FormatBytes(m.Size),
		lang.X("models.context", "{{.N}} context", map[string]any{"N": formatContext(m.Context)}),
		m.License}, " · "))
	desc := widget.NewLabel(m.Describe(locale.Current()))
	desc.Wrapping = fyne.TextWrapWord
	r.verdict = newVerdictLabel()
	r.progress, r.dlInfo = newProgress()
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
	title := core.BoldLabel(m.Name)
	title.Truncation = fyne.TextTruncateOff
	col := core.Lines(container.NewHBox(title, r.badge), info, desc, r.verdict)
	if !p.s.svc.Supported(m.Architecture) {
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
	d, preparing := r.p.s.follow(r.m.ID, r.dest, r.action, r.progress, r.dlInfo)
	switch {
	case preparing:
	case d != nil:
		// The row pauses and resumes its download; Cancel is on the
		// Downloads tab, with the other downloads.
		if d.Status() == download.Paused {
			r.action.SetText(lang.X("models.resume", "Resume"))
		} else {
			r.action.SetText(lang.X("models.pause", "Pause"))
		}
		r.action.Importance = widget.MediumImportance
	case core.FileExists(r.dest):
		if m := r.p.w.Model; m != nil && m.Path == r.dest {
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
	if d := s.Active(r.dest); d != nil {
		if d.Status() == download.Paused {
			s.svc.Resume(d)
		} else {
			s.svc.Pause(d)
		}
		r.p.refresh()
		return
	}
	if core.FileExists(r.dest) {
		s.load(r.dest)
		return
	}
	confirmFit(r.p.w, r.m.Name, r.res, func() { s.svc.DownloadCatalog(r.m, false) })
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
	go func() {
		ctx, cancel := context.WithTimeout(r.p.w.Ctx, core.HubTimeout)
		defer cancel()
		meta, fetched, err := s.svc.RemoteMeta(ctx, r.m.Repo, "main", r.m.File)
		r.p.w.Do(func() {
			if err != nil {
				r.checked = false
				r.detail.SetText(where + "\n" + lang.X("models.header_error", "Could not read the file's header: {{.Err}}", map[string]any{"Err": err.Error()}))
				return
			}
			res := s.svc.Check(meta)
			r.setVerdict(res)
			r.detail.SetText(where + "\n" + lang.X("models.header", "From its header ({{.Read}} read): {{.Arch}}, {{.Layers}} layers, {{.Context}} context, {{.Params}} parameters.",
				map[string]any{"Read": core.FormatBytes(fetched), "Arch": meta.Architecture, "Layers": meta.Layers,
					"Context": formatContext(meta.ContextLength), "Params": core.FormatParams(meta.Parameters)}))
		})
	}()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
