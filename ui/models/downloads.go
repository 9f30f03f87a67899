package models

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/models/download"
	"github.com/churon/churon/ui/core"
)

// The Downloads tab: the queue, with progress, pause, cancel and load.

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
		p.s.svc.Forget() // DownloadsChanged follows
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
		if d.Status() == download.Paused {
			p.s.svc.Resume(d)
		} else {
			p.s.svc.Pause(d)
		}
		p.refreshDownloads()
	})
	r.cancel = widget.NewButtonWithIcon(lang.X("models.cancel", "Cancel"), theme.CancelIcon(), func() {
		p.w.ConfirmAction(lang.X("models.cancel.title", "Cancel this download?"),
			lang.X("models.cancel.body", "{{.Name}}: the part downloaded so far is deleted.", map[string]any{"Name": d.Request().Label}),
			lang.X("models.cancel.yes", "Cancel download"), func() {
				d.Cancel()
				p.refreshDownloads()
			})
	})
	r.load = widget.NewButton(lang.X("models.load", "Load"), func() { p.s.load(d.Request().Dest) })
	r.load.Importance = widget.HighImportance
	title := core.BoldLabel(d.Request().Label)
	if title.Text == "" {
		title.SetText(filepath.Base(d.Request().Dest))
	}
	r.content = core.Row(core.Lines(title, r.bar, r.detail), r.pause, r.cancel, r.load)
	return r
}

// refreshDownloads lists the manager's downloads with their progress.
func (p *modelsPage) refreshDownloads() {
	list := p.s.svc.Downloads()
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

// newProgress makes a row's download bar and the line of words under
// it, hidden while nothing downloads.
func newProgress() (*widget.ProgressBar, *widget.Label) {
	bar := widget.NewProgressBar()
	bar.Hide()
	info := widget.NewLabel("")
	info.SizeName = theme.SizeNameCaptionText
	info.Hide()
	return bar, info
}

// follow brings a catalog model's row in line with its download: the
// action enabled, the bar and its line showing the download under way,
// if any (returned). While the hub is asked for the files (preparing),
// the action says so, disabled.
func (s *State) follow(id, dest string, action *widget.Button, bar *widget.ProgressBar, info *widget.Label) (d *download.Download, preparing bool) {
	action.Enable()
	bar.Hide()
	info.Hide()
	if s.svc.IsPending(id) {
		action.SetText(lang.X("models.preparing", "Preparing…"))
		action.Disable()
		return nil, true
	}
	if d = s.Active(dest); d != nil {
		bar.SetValue(d.Progress())
		bar.Show()
		info.SetText(downloadLine(d))
		info.Show()
	}
	return d, false
}

// downloadLine says where a download stands: its state, the bytes done,
// and while it runs, the rate and the time left (or why it failed).
func downloadLine(d *download.Download) string {
	st := d.Status()
	size := d.Size()
	parts := []string{statusWord(st)}
	if size > 0 {
		parts = append(parts, lang.X("models.dl.of", "{{.Done}} of {{.Size}}", map[string]any{"Done": core.FormatBytes(d.BytesComplete()), "Size": core.FormatBytes(size)}))
	} else if n := d.BytesComplete(); n > 0 {
		parts = append(parts, core.FormatBytes(n))
	}
	if st == download.Running {
		if rate := d.Rate(); rate > 0 {
			parts = append(parts, core.FormatBytes(int64(rate))+"/s")
		}
		if eta := d.ETA(); eta > 0 {
			parts = append(parts, lang.X("models.dl.left", "{{.T}} left", map[string]any{"T": eta.Round(time.Second).String()}))
		}
	}
	if st == download.Failed && d.IsDone() {
		if err := d.Err(); err != nil {
			parts = append(parts, core.ErrorText(err))
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
