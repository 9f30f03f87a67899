package compare

import (
	"context"
	"errors"
	"fmt"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/ui/core"
)

// Past comparisons: every finished comparison is saved in the chat
// database (app/compare.Save) and can be reopened from the page's
// "Past comparisons" list, deleted there, or exported again.

// historyLimit is how many past comparisons the list shows.
const historyLimit = 200

// msDuration turns milliseconds (the comparison's unit) into a Duration.
func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// afterResult saves a finished comparison, then draws its chart and
// offers the exports.
func (p *comparePage) afterResult(res *compare.Result) {
	p.showChart(res)
	p.exportMD.Enable()
	p.exportHTML.Enable()
	p.legend.Show()
	run := p.run
	if res.ID != 0 || run.saved {
		return // reopened, or shown again after a rebuild: saved already
	}
	run.saved = true
	w := p.w
	// Save sets the copy's ID on its goroutine; the page's result gets it
	// back on Fyne's.
	cp := *res
	go func() {
		err := w.Session.SaveComparison(w.Ctx, &cp)
		w.Do(func() {
			if err == nil {
				res.ID = cp.ID
			}
			if err != nil {
				p.showError(fmt.Errorf("%s: %w", lang.X("compare.err.save", "The comparison could not be saved"), err))
				return
			}
			if p.run == run {
				p.setStatus(p.status.Text + " " + lang.X("compare.saved", "Saved under Past comparisons."))
			}
		})
	}()
}

// onHistory lists the saved comparisons, newest first.
func (p *comparePage) onHistory() {
	w := p.w
	list := container.NewVBox()
	status := widget.NewLabel(lang.X("compare.history.loading", "Reading…"))
	var d dialog.Dialog
	body := container.NewBorder(status, nil, nil, nil, container.NewVScroll(list))
	d = dialog.NewCustom(lang.X("compare.history", "Past comparisons"), lang.X("compare.close", "Close"), body, w.Win)
	d.Resize(fyne.NewSize(720, 520))
	d.Show()
	p.fillHistory(list, status, func() { d.Hide() })
}

// fillHistory reads the saved comparisons into list; opening one calls
// closeList first.
func (p *comparePage) fillHistory(list *fyne.Container, status *widget.Label, closeList func()) {
	w := p.w
	go func() {
		cs, err := w.Session.Comparisons(w.Ctx, historyLimit)
		w.Do(func() {
			list.RemoveAll()
			status.SetText(core.ListStatus(err, core.ErrorText, len(cs),
				lang.X("compare.history.empty", "No comparisons yet. Each one you run is kept here."),
				lang.X("compare.history.count", "{{.N}} comparisons, newest first.", map[string]any{"N": len(cs)})))
			for _, c := range cs {
				list.Add(p.historyRow(c, list, status, closeList))
			}
			list.Refresh()
		})
	}()
}

func (p *comparePage) historyRow(c store.Comparison, list *fyne.Container, status *widget.Label, closeList func()) fyne.CanvasObject {
	open := widget.NewButton(lang.X("compare.history.open", "Open"), func() {
		closeList()
		p.reopen(c.ID)
	})
	open.Importance = widget.HighImportance
	del := widget.NewButtonWithIcon("", theme.DeleteIcon(), func() {
		p.w.ConfirmAction(lang.X("compare.delete.title", "Delete this comparison?"),
			lang.X("compare.delete.body", "“{{.Title}}” is deleted from the history.", map[string]any{"Title": c.Title}),
			lang.X("models.delete", "Delete"), func() {
				w := p.w
				core.Then(w.Commands, func() (struct{}, error) { return struct{}{}, w.Session.DeleteComparison(w.Ctx, c.ID) }, func(_ struct{}, err error) {
					if err != nil {
						status.SetText(core.ErrorText(err))
						return
					}
					p.fillHistory(list, status, closeList)
				})
			})
	})
	del.Importance = widget.LowImportance
	when := c.Created.Local().Format("2006-01-02 15:04")
	return core.Row(core.Lines(core.BoldLabel(c.Title), core.MutedLine(when)), open, del)
}

// reopen shows a saved comparison as it ended.
func (p *comparePage) reopen(id int64) {
	if p.running() {
		p.showError(fmt.Errorf("%s", lang.X("compare.err.busy", "A comparison is running. Stop it first.")))
		return
	}
	w := p.w
	go func() {
		ctx, cancel := context.WithTimeout(w.Ctx, time.Minute)
		defer cancel()
		res, err := w.Session.Comparison(ctx, id)
		w.Do(func() {
			if err != nil {
				p.showError(err)
				return
			}
			p.showResult(res)
		})
	}()
}

// showResult lays out a finished comparison (a reopened one) and fills
// the form with its settings, so it can be run again.
func (p *comparePage) showResult(res *compare.Result) {
	p.clearError()
	p.run = &compareRun{done: true, ref: res.Reference}
	p.layoutColumns(len(res.Models))
	p.prompt.SetText(res.Prompt)
	p.maxTok.SetText(fmt.Sprint(res.Sampling.MaxTokens))
	p.temp.SetText(fmt.Sprint(res.Sampling.Temperature))
	p.seed.SetText(fmt.Sprint(res.Sampling.Seed))
	// Tick its models again (those still here), to run it once more.
	var files []string
	for _, m := range res.Models {
		if core.FileExists(m.File) {
			files = append(files, m.File)
		}
	}
	p.pick.picked = files
	p.pick.reload()
	p.finished(res)
	created := res.Created
	if t, err := time.Parse(time.RFC3339, res.Created); err == nil {
		created = t.Local().Format("2006-01-02 15:04")
	}
	p.setStatus(lang.X("compare.st.reopened", "“{{.Title}}”, run on {{.When}}.", map[string]any{"Title": res.Title, "When": created}))
}

// adopt shows run, a comparison another page (before the window was
// rebuilt) started: its columns as far as they got, then its events as
// they come.
func (p *comparePage) adopt(run *compareRun) {
	p.run = run
	if run.done && run.cross != nil {
		p.layoutColumns(len(run.paths))
		p.showCross(run)
		return
	}
	if run.done && run.res != nil {
		p.layoutColumns(len(run.res.Models))
		p.finished(run.res)
		return
	}
	n := len(run.paths)
	if n == 0 {
		return
	}
	p.layoutColumns(n)
	for i, c := range p.cols {
		info := ""
		if i < len(run.models) && run.models[i].File != "" {
			info = probeInfo(run.models[i].Probe, i == run.ref)
			c.setColor(chartColor(i, run.ref))
		}
		c.setModel(core.ModelLabel(run.paths[i]), info)
		c.setText(run.texts[i])
		c.setState(run.states[i])
		p.refreshDiff(i)
	}
	p.refreshFigures()
	if run.done && run.err != nil && !errors.Is(run.err, context.Canceled) {
		p.showError(run.err)
	}
	p.setStatus(run.status)
	p.refreshRun()
}
