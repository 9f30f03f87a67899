package compare

import (
	"context"
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"syscall"

	"fyne.io/fyne/v2/lang"

	"github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/ui/core"
)

// compareRun is one comparison on the page: running (cancel set, done
// false) or finished, or reopened from the store. Its fields are used on
// Fyne's goroutine only; the comparison's own goroutine reaches them
// through Window.Do.
type compareRun struct {
	cancel context.CancelFunc
	done   bool
	err    error

	probes []compare.Probe
	ref    int
	// models holds what is known of each model so far: figures after
	// Generated, quality after QualityReady.
	models []compare.ModelResult
	loadMs []float64
	res    *compare.Result // set when the run ended well (or was reopened)

	// What a rebuilt page needs to show the run again (adopt).
	paths  []string
	texts  []string // each model's answer as streamed so far
	states []string // each column's state line
	status string
	saved  bool // Save was started (the result is stored, or is being)
	// cross is a finished comparison across engines (cross.go).
	cross *compare.CrossResult
}

func (p *comparePage) running() bool { return p.run != nil && !p.run.done }

// newRun makes the page's run of models, cancelled by cancel, with a
// column each waiting for its model, and status said over them.
func (p *comparePage) newRun(models []string, cancel context.CancelFunc, status string) *compareRun {
	run := &compareRun{cancel: cancel, ref: -1, paths: models,
		texts: make([]string, len(models)), states: make([]string, len(models))}
	p.run = run
	p.layoutColumns(len(models))
	for i, m := range models {
		p.cols[i].setModel(core.ModelLabel(m), "")
		p.cols[i].setState(lang.X("compare.st.waiting", "Waiting…"))
	}
	p.setStatus(status)
	p.refreshRun()
	return run
}

// start runs a comparison of models (paths) on prompt. Events reach the
// page through Window.Do, in order.
func (p *comparePage) start(models []string, ref, prompt string, set compareSettings) {
	w, sc := p.w, p.sc
	// The app's usual sampler, with the person's length, temperature and
	// seed.
	samp := w.Compare.DefaultSampling()
	samp.MaxTokens, samp.Temperature, samp.Seed = set.MaxTokens, set.Temperature, set.Seed
	opt := compare.Options{Models: models, Ref: ref, Prompt: prompt, Sampling: samp, Threads: p.threads}
	h := w.Compare.Start(w.Ctx, opt)
	run := p.newRun(models, h.Cancel, lang.X("compare.st.checking", "Checking the model files…"))
	go func() {
		sawDone := false
		for ev := range h.Events() {
			_, sawDone = ev.(compare.Done)
			w.Do(func() { deliver(sc, run, ev) })
		}
		if !sawDone {
			// Cancelled: the events still queued were dropped, Done with
			// them.
			res, err := h.Wait()
			w.Do(func() {
				if !run.done {
					deliver(sc, run, compare.Done{Result: res, Err: err})
				}
			})
		}
	}()
}

// deliver applies an event of run to the page that shows it now (the
// page is made again when the window is rebuilt). Runs on Fyne's
// goroutine.
func deliver(sc *Screen, run *compareRun, ev compare.Event) {
	if p := sc.page; p != nil && p.run == run {
		p.apply(ev)
		return
	}
	// Not shown (another comparison was opened): still note the outcome.
	if d, ok := ev.(compare.Done); ok {
		run.done, run.err = true, d.Err
	}
}

// stop cancels the running comparison; Run ends within a token.
func (p *comparePage) stop() {
	if p.running() {
		p.run.cancel()
		p.setStatus(lang.X("compare.st.stopping", "Stopping…"))
	}
}

// apply shows one event of the running comparison.
func (p *comparePage) apply(ev compare.Event) {
	run := p.run
	switch ev := ev.(type) {
	case compare.Planned:
		run.probes, run.ref = ev.Models, ev.Reference
		run.models = make([]compare.ModelResult, len(ev.Models))
		run.loadMs = make([]float64, len(ev.Models))
		for i, pr := range ev.Models {
			run.models[i].Probe = pr
			run.models[i].Reference = i == ev.Reference
			p.cols[i].setModel(core.ModelLabel(pr.File), probeInfo(pr, i == ev.Reference))
			p.cols[i].setColor(chartColor(i, ev.Reference))
		}
		p.refreshFigures()
	case compare.ModelLoading:
		name := core.ModelLabel(ev.Path)
		p.setStatus(lang.X("compare.st.loading", "Model {{.Step}} of {{.Steps}}: loading {{.Name}}…",
			map[string]any{"Step": ev.Step, "Steps": ev.Steps, "Name": name}))
		p.col(ev.Model).setState(lang.X("compare.st.loading_col", "Loading…"))
	case compare.ModelLoaded:
		if ev.Model < len(run.loadMs) {
			run.loadMs[ev.Model] = float64(ev.Load.Microseconds()) / 1000
		}
		p.col(ev.Model).setState(lang.X("compare.st.generating", "Answering…"))
	case compare.Token:
		p.col(ev.Model).appendText(ev.Text, ev.N)
		if ev.Model >= 0 && ev.Model < len(run.texts) {
			run.texts[ev.Model] += ev.Text
		}
	case compare.Generated:
		if ev.Model < len(run.models) {
			run.models[ev.Model] = ev.Result
		}
		c := p.col(ev.Model)
		c.setText(ev.Result.Output)
		if ev.Model >= 0 && ev.Model < len(run.texts) {
			run.texts[ev.Model] = ev.Result.Output
		}
		c.setState(answerLine(ev.Result))
		p.refreshFigures()
	case compare.Evaluating:
		p.col(ev.Model).setState(lang.X("compare.st.scoring", "Measuring against the reference: {{.Done}} of {{.Total}} tokens",
			map[string]any{"Done": ev.Done, "Total": ev.Total}))
	case compare.QualityReady:
		if ev.Model < len(run.models) {
			q := ev.Quality
			run.models[ev.Model].Quality = &q
		}
		p.refreshDiff(ev.Model)
		p.refreshFigures()
	case compare.ModelDone:
		if ev.Model < len(run.models) {
			run.models[ev.Model] = ev.Result
		}
		p.col(ev.Model).setState(answerLine(ev.Result))
		p.refreshDiff(ev.Model)
		p.refreshFigures()
	case compare.Done:
		run.done = true
		run.err = ev.Err
		if ev.Err != nil {
			p.finishedWithError(ev.Err)
		} else {
			p.finished(ev.Result)
		}
		p.refreshRun()
	}
}

// col is column i, or a detached one when i is out of range (an event
// that does not match the columns must not crash the page).
func (p *comparePage) col(i int) *cmpColumn {
	if i >= 0 && i < len(p.cols) {
		return p.cols[i]
	}
	return newCmpColumn(p)
}

func (p *comparePage) finishedWithError(err error) {
	if errors.Is(err, context.Canceled) {
		p.setStatus(lang.X("compare.st.stopped", "Stopped. Nothing was saved."))
	} else {
		p.setStatus("")
		p.showError(err)
	}
	for i, c := range p.cols {
		if p.run.models == nil || i >= len(p.run.models) || p.run.models[i].Quality == nil {
			c.setState(lang.X("compare.st.not_done", "Not finished."))
		}
	}
}

// finished shows a comparison's whole result: the final texts, figures
// and marks, and the chart.
func (p *comparePage) finished(res *compare.Result) {
	run := p.run
	run.res = res
	if res == nil {
		return
	}
	run.probes = nil
	run.ref = res.Reference
	run.models = res.Models
	for i, m := range res.Models {
		c := p.col(i)
		c.setModel(core.ModelLabel(m.File), probeInfo(m.Probe, m.Reference))
		c.setColor(chartColor(i, res.Reference))
		c.setText(m.Output)
		c.setState(answerLine(m))
		if i < len(run.loadMs) {
			run.loadMs[i] = m.LoadMs
		}
		p.refreshDiff(i)
	}
	p.refreshFigures()
	p.setStatus(lang.X("compare.st.done", "Done in {{.T}}.", map[string]any{"T": core.FormatDuration(msDuration(res.ElapsedMs))}))
	p.afterResult(res)
}

// chartColor is model i's colour in the chart, nil for the reference
// (the chart draws the others against it).
func chartColor(i, ref int) color.Color {
	if i == ref {
		return nil
	}
	return compare.Color(i)
}

// probeInfo is a column's second line: type, size, bits per weight.
func probeInfo(pr compare.Probe, ref bool) string {
	s := fmt.Sprintf("%s · %s · %.2f bpw", pr.Type, core.FormatBytes(pr.FileBytes), pr.BPW)
	if ref {
		s += " · " + lang.X("compare.is_ref", "reference")
	}
	return s
}

// answerLine says how an answer went: tokens, speed, why it ended.
func answerLine(m compare.ModelResult) string {
	s := lang.X("footer.tokens", "{{.N}} tokens", map[string]any{"N": len(m.Tokens)})
	if m.GenTPS > 0 {
		s += fmt.Sprintf(" · %.1f tok/s", m.GenTPS)
	}
	switch m.Finish {
	case "length", "context":
		s += " · " + lang.X("footer.length", "cut off at the length limit")
	case "cancelled":
		s += " · " + lang.X("footer.stopped", "stopped")
	}
	return s
}

// refreshDiff marks the reference's answer with model i's view of each
// token, once both are known.
func (p *comparePage) refreshDiff(i int) {
	run := p.run
	c := p.col(i)
	if run.ref < 0 || run.ref >= len(run.models) || i >= len(run.models) {
		return
	}
	m := run.models[i]
	if m.Quality == nil {
		return
	}
	if i == run.ref {
		c.setDiff(lang.X("compare.diff.ref", "This is the reference: the other columns mark its answer where they part from it."), nil)
		return
	}
	pieces := run.models[run.ref].Pieces
	toks := marksFor(pieces, m.Quality.Answer)
	if toks == nil {
		return
	}
	n := 0
	for _, t := range toks {
		if t.Differs {
			n++
		}
	}
	c.setDiff(lang.X("compare.diff.caption", "The reference's answer as this model saw it: {{.N}} of {{.Total}} tokens would differ here.",
		map[string]any{"N": n, "Total": len(toks)}), toks)
}

// marksFor pairs the reference's answer pieces with a model's per-token
// figures over that answer.
func marksFor(pieces []string, seg compare.Segment) []tokenMark {
	if len(pieces) == 0 {
		return nil
	}
	out := make([]tokenMark, len(pieces))
	for i, s := range pieces {
		out[i].Text = s
		if i < len(seg.KLD) {
			out[i].KLD = seg.KLD[i]
		}
		if i < len(seg.Agree) {
			out[i].Differs = !seg.Agree[i]
		}
	}
	return out
}

// Figures, one row each in the table, in this order.
type figure int

const (
	figSize figure = iota
	figBPW
	figRSS
	figLoad
	figTTFT
	figPromptTPS
	figGenTPS
	figKLDMean
	figKLDP99
	figTop1
	figPPLRatio
	numFigures
)

// figureRow says all there is to say about one figure, so that a new
// figure is one entry here rather than a case in several switches.
type figureRow struct {
	name func() string
	// value is model m's figure, NaN while unknown.
	value  func(m compare.ModelResult, loadMs float64) float64
	format func(v float64) string
	better func(a, b float64) bool
	// quality marks a figure measured against the reference: the
	// reference's own value is trivially perfect and is not "best".
	quality bool
}

var figureRows = [numFigures]figureRow{
	figSize: {
		name:   func() string { return lang.X("compare.fig.size", "File size") },
		value:  func(m compare.ModelResult, _ float64) float64 { return float64(m.FileBytes) },
		format: formatBytes, better: lower,
	},
	figBPW: {
		name:   func() string { return lang.X("compare.fig.bpw", "Bits per weight") },
		value:  func(m compare.ModelResult, _ float64) float64 { return m.BPW },
		format: fixed("%.2f"), better: lower,
	},
	figRSS: {
		name:   func() string { return lang.X("compare.fig.rss", "Memory used") },
		value:  func(m compare.ModelResult, _ float64) float64 { return known(float64(m.RSSBytes)) },
		format: formatBytes, better: lower,
	},
	figLoad: {
		name:   func() string { return lang.X("compare.fig.load", "Load time (warm)") },
		value:  func(_ compare.ModelResult, loadMs float64) float64 { return known(loadMs) },
		format: formatMs, better: lower,
	},
	figTTFT: {
		name:   func() string { return lang.X("compare.fig.ttft", "First token") },
		value:  func(m compare.ModelResult, _ float64) float64 { return known(m.TTFTMs) },
		format: formatMs, better: lower,
	},
	figPromptTPS: {
		name:   func() string { return lang.X("compare.fig.prompt_tps", "Prompt (tok/s)") },
		value:  func(m compare.ModelResult, _ float64) float64 { return known(m.PromptTPS) },
		format: fixed("%.1f"), better: higher,
	},
	figGenTPS: {
		name:   func() string { return lang.X("compare.fig.gen_tps", "Generation (tok/s)") },
		value:  func(m compare.ModelResult, _ float64) float64 { return known(m.GenTPS) },
		format: fixed("%.1f"), better: higher,
	},
	figKLDMean: {
		name:   func() string { return lang.X("compare.fig.kld_mean", "KLD mean") },
		value:  quality(func(q *compare.Quality) float64 { return q.KLDMean }),
		format: fixed("%.4f"), better: lower, quality: true,
	},
	figKLDP99: {
		name:   func() string { return lang.X("compare.fig.kld_p99", "KLD 99th percentile") },
		value:  quality(func(q *compare.Quality) float64 { return q.KLDP99 }),
		format: fixed("%.4f"), better: lower, quality: true,
	},
	figTop1: {
		name:    func() string { return lang.X("compare.fig.top1", "Top-1 agreement") },
		value:   quality(func(q *compare.Quality) float64 { return q.Top1Agreement }),
		format:  func(v float64) string { return fmt.Sprintf("%.1f %%", 100*v) },
		better:  higher,
		quality: true,
	},
	figPPLRatio: {
		name:   func() string { return lang.X("compare.fig.ppl", "Perplexity ratio") },
		value:  quality(func(q *compare.Quality) float64 { return q.PPLRatio }),
		format: fixed("%.3f"),
		// Towards 1: a perplexity below the reference's is no better.
		better:  func(a, b float64) bool { return math.Abs(a-1) < math.Abs(b-1) },
		quality: true,
	},
}

func lower(a, b float64) bool  { return a < b }
func higher(a, b float64) bool { return a > b }

// known is v where it is positive, else NaN: a figure not measured.
func known(v float64) float64 {
	if v > 0 {
		return v
	}
	return math.NaN()
}

// quality reads a figure of the model's quality, NaN until it is measured.
func quality(get func(q *compare.Quality) float64) func(compare.ModelResult, float64) float64 {
	return func(m compare.ModelResult, _ float64) float64 {
		if m.Quality == nil {
			return math.NaN()
		}
		return get(m.Quality)
	}
}

// The formats write a known figure; figure.format adds the dash for one
// not known.
func formatBytes(v float64) string { return core.FormatBytes(int64(v)) }

func formatMs(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.1f ms", v)
	}
	return core.FormatDuration(msDuration(v))
}

func fixed(layout string) func(float64) string {
	return func(v float64) string { return fmt.Sprintf(layout, v) }
}

func (f figure) name() string { return figureRows[f].name() }

// format writes a figure for the table, a dash while it is unknown.
func (f figure) format(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return figureRows[f].format(v)
}

// refreshFigures fills the table from what is known.
func (p *comparePage) refreshFigures() {
	run := p.run
	if run == nil || len(run.models) == 0 {
		return
	}
	header := []string{""}
	for i, m := range run.models {
		name := core.ModelLabel(m.File)
		if i == run.ref {
			name += " ★"
		}
		header = append(header, name)
	}
	var rows [][]string
	var best []int
	for f := figure(0); f < numFigures; f++ {
		fr := figureRows[f]
		row := []string{fr.name()}
		b, bv := 0, math.NaN()
		for i, m := range run.models {
			load := 0.0
			if i < len(run.loadMs) {
				load = run.loadMs[i]
			}
			if load == 0 {
				load = m.LoadMs
			}
			v := fr.value(m, load)
			cell := f.format(v)
			if f == figRSS && m.RSSEstimated {
				cell = "≈" + cell // too small to measure: weights + KV cache
			}
			row = append(row, cell)
			if math.IsNaN(v) || (fr.quality && i == run.ref) {
				continue
			}
			if math.IsNaN(bv) || fr.better(v, bv) {
				b, bv = i+1, v
			}
		}
		if len(run.models) < 3 && fr.quality {
			b = 0 // one model against the reference: nothing to rank
		}
		rows = append(rows, row)
		best = append(best, b)
	}
	p.figures.Set(header, rows, best)
	p.figTitle.Show()
	p.figures.box.Show()
}

// compareErrorText says what went wrong in words.
func compareErrorText(err error) string {
	var ve *compare.VocabError
	switch {
	case errors.As(err, &ve):
		return lang.X("compare.err.vocab", "{{.A}} and {{.B}} do not share a vocabulary ({{.Detail}}), so their answers cannot be measured against each other. Compare quantizations of one model.",
			map[string]any{"A": core.ModelLabel(ve.A), "B": core.ModelLabel(ve.B), "Detail": ve.Detail})
	case errors.Is(err, compare.ErrModelCount):
		return lang.X("compare.err.count", "Pick two to four models.")
	case errors.Is(err, compare.ErrEmptyPrompt):
		return lang.X("compare.err.prompt", "Type a prompt first.")
	case errors.Is(err, compare.ErrBadLogits):
		return lang.X("compare.err.logits", "A model produced invalid numbers (not finite), so it cannot be measured. Its file may be damaged.") + "\n" + err.Error()
	case errors.Is(err, os.ErrNotExist):
		return lang.X("compare.err.missing", "A model file is missing: it was moved or deleted. Refresh the list and pick again.") + "\n" + err.Error()
	case errors.Is(err, syscall.ENOMEM):
		return lang.X("compare.err.memory", "Not enough memory to load the model. Close other programs, or compare smaller quantizations.") + "\n" + err.Error()
	}
	return err.Error()
}
