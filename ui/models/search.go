package models

import (
	"context"
	"fmt"
	"path"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/models/fit"
	"github.com/churon/churon/models/hub"
	"github.com/churon/churon/ui/core"
)

// The Search tab: a search of the hub, then a repository's
// quantizations with a fit verdict each.

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
	return column(bar, p.searchStatus, p.results, p.repoBox, widget.NewSeparator(), p.buildToken())
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
	hc := p.s.Hub()
	go func() {
		ctx, cancel := context.WithTimeout(p.w.Ctx, core.HubTimeout)
		defer cancel()
		ms, err := hc.Search(ctx, q, hub.SearchOptions{Limit: 30})
		p.w.Do(func() {
			if gen != p.searchGen {
				return // a newer search is under way
			}
			p.showResults(ms, err)
		})
	}()
}

func (p *modelsPage) showResults(ms []hub.Model, err error) {
	p.results.RemoveAll()
	p.searchStatus.SetText(core.ListStatus(err, core.HubError, len(ms),
		lang.X("models.noresults", "No GGUF models match."),
		lang.X("models.results", "{{.N}} repositories, most downloaded first.", map[string]any{"N": len(ms)})))
	for _, m := range ms {
		m := m
		meta := []string{lang.X("models.downloads_n", "{{.N}} downloads", map[string]any{"N": humanCount(m.Downloads)}),
			lang.X("models.likes_n", "{{.N}} likes", map[string]any{"N": humanCount(m.Likes)})}
		if m.Gated {
			meta = append(meta, lang.X("models.gated", "gated: needs an access token"))
		}
		open := widget.NewButton(lang.X("models.files", "Show files"), func() { p.showRepo(m.ID) })
		p.results.Add(core.Row(core.Lines(core.BoldLabel(m.ID), core.MutedLine(strings.Join(meta, " · "))), open))
	}
	p.results.Refresh()
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
	p.repoBox.Add(container.NewBorder(nil, nil, back, nil, core.BoldLabel(repo)))
	p.repoBox.Add(status)
	p.repoBox.Show()
	p.repoBox.Refresh()
	hc := p.s.Hub()
	go func() {
		ctx, cancel := context.WithTimeout(p.w.Ctx, core.HubTimeout)
		defer cancel()
		files, err := hc.Files(ctx, repo, "main")
		vs := hub.Variants(files)
		p.w.Do(func() {
			if gen != p.repoGen {
				return
			}
			status.SetText(core.ListStatus(err, core.HubError, len(vs),
				lang.X("models.nogguf", "This repository has no GGUF files."),
				lang.X("models.variants", "{{.N}} files. Q4_K_M is the usual choice: small, with little loss.", map[string]any{"N": len(vs)})))
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
			if m, _, err := p.s.svc.RemoteMeta(ctx, repo, "main", pick.Files[0].Path); err == nil {
				meta = &m
			}
		}
		p.w.Do(func() {
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
	info := []string{path.Base(v.Files[0].Path), core.FormatBytes(v.Size)}
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
	r.content = core.Row(core.Lines(core.BoldLabel(name), core.MutedLine(strings.Join(info, " · ")), r.verdict, r.bar), r.action)
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
	r.res = r.p.s.svc.Check(meta)
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
		out = append(out, r.p.s.DestFor(r.repo, f.Path))
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
		if d := s.Active(dst); d != nil {
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
	case core.AllPresent(dests):
		r.action.SetText(lang.X("models.load", "Load"))
	default:
		r.action.SetText(lang.X("models.download", "Download"))
	}
}

func (r *variantRow) onDownload() {
	dests := r.dests()
	s := r.p.s
	if core.AllPresent(dests) {
		s.load(dests[0])
		return
	}
	name := r.repo + " " + r.v.Quant
	confirmFit(r.p.w, name, r.res, func() {
		s.QueueVariant(r.repo, "main", r.v, false)
	})
}
