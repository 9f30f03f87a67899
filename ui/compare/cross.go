package compare

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2/lang"

	"github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/ui/core"
)

// A comparison across engines: when a remote model (remote:CONN/MODEL)
// is ticked, the page runs app/compare's RunCross, as `churon compare`
// does with remote models: every model answers greedily, the remote
// reference reports its k likeliest tokens at each place, and the local
// models' quality is estimated from those. The columns show the answers
// and speeds, and the estimate or the reason it is not shown; saving and
// exporting compare local models only, for now (as in the CLI).

// crossTopK is how many alternatives the reference is asked for (the
// CLI's default).
const crossTopK = 5

// startCross runs a comparison across engines of models in the
// background; the result reaches the page through Window.Do.
func (p *comparePage) startCross(models []string, ref, prompt string, set compareSettings) {
	w, sc := p.w, p.sc
	svc, ok := w.Compare.(compare.CrossService)
	if !ok {
		p.showError(errors.New(lang.X("compare.cross.unavailable", "Comparing with remote models is not available here.")))
		return
	}
	var rc compare.RemoteClients
	if w.Remotes != nil {
		rc = w.Remotes
	}
	ctx, cancel := context.WithCancel(w.Ctx)
	run := p.newRun(models, cancel, lang.X("compare.cross.running", "Comparing across engines: each model answers in turn, greedily (temperature 0), the remote reference first…"))
	opt := compare.CrossOptions{Models: models, Remotes: rc, Ref: ref, Prompt: prompt,
		MaxTokens: set.MaxTokens, TopK: crossTopK, Threads: p.threads}
	go func() {
		res, err := svc.Cross(ctx, opt)
		cancel()
		w.Do(func() {
			run.done, run.err, run.cross = true, err, res
			if pg := sc.page; pg != nil && pg.run == run {
				pg.showCross(run)
			}
		})
	}()
}

// showCross shows a finished comparison across engines: the answers,
// each column's speed, and the estimated quality or why there is none.
func (p *comparePage) showCross(run *compareRun) {
	p.refreshRun()
	err, res := run.err, run.cross
	switch {
	case errors.Is(err, context.Canceled):
		p.setStatus(lang.X("compare.st.stopped", "Stopped. Nothing was saved."))
		for _, c := range p.cols {
			c.setState("")
		}
		return
	case err != nil:
		p.setStatus("")
		p.showError(err)
		for _, c := range p.cols {
			c.setState("")
		}
		return
	}
	for i, col := range res.Columns {
		if i >= len(p.cols) {
			break
		}
		c := p.cols[i]
		info := lang.X("compare.cross.local", "local file")
		if col.Remote {
			info = lang.X("compare.cross.remote", "remote")
		}
		if i == res.Reference {
			info += " · " + lang.X("compare.cross.reference", "reference")
		}
		c.setModel(core.ModelLabel(col.Model), info)
		c.setText(col.Text)
		c.setError(col.Error)
		c.setState(crossSpeed(col))
		c.setDiff(crossQuality(col, i == res.Reference, res.TopK), nil)
	}
	p.setStatus(res.Label + ". " + lang.X("compare.cross.noexport",
		"Saving and exporting compare local models only, for now (as in churon compare); this comparison is shown, not stored."))
}

// crossSpeed is a column's speed line.
func crossSpeed(col compare.CrossColumn) string {
	var parts []string
	if col.TTFTMs > 0 {
		parts = append(parts, lang.X("compare.cross.ttft", "first token {{.Ms}} ms", map[string]any{"Ms": fmt.Sprintf("%.1f", col.TTFTMs)}))
	}
	if col.GenTPS > 0 {
		parts = append(parts, lang.X("compare.cross.tps", "{{.TPS}} tokens/s", map[string]any{"TPS": fmt.Sprintf("%.1f", col.GenTPS)}))
	}
	if col.GenTokens > 0 {
		parts = append(parts, lang.X("compare.cross.tokens", "{{.N}} tokens", map[string]any{"N": col.GenTokens}))
	}
	if col.Remote && len(parts) > 0 {
		parts = append(parts, lang.X("compare.cross.network", "including the network"))
	}
	return strings.Join(parts, " · ")
}

// crossQuality is a column's quality line: the estimate against the
// reference, labelled as one, or the reason there is none.
func crossQuality(col compare.CrossColumn, isRef bool, k int) string {
	if col.KLD != nil && col.Top1 != nil {
		return lang.X("compare.cross.quality", "KLD ≈ {{.KLD}} · top-1 agreement {{.Top1}}% over {{.N}} places — an estimate from the reference's {{.K}} alternatives at each place",
			map[string]any{"KLD": fmt.Sprintf("%.4f", *col.KLD), "Top1": fmt.Sprintf("%.0f", 100**col.Top1), "N": col.Positions, "K": k})
	}
	if isRef && col.Note == "reference" {
		return lang.X("compare.cross.isref", "The reference: the local models are scored against the {{.K}} likeliest tokens it reported at each place.", map[string]any{"K": k})
	}
	// The note says why in the comparison's words (app/compare).
	if r := []rune(col.Note); len(r) > 0 {
		return strings.ToUpper(string(r[:1])) + string(r[1:]) + "."
	}
	return ""
}
