package models

import (
	"net/url"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/models/library"
	"github.com/churon/churon/ui/core"
)

// The On this computer tab: the library, with verify, reveal, delete,
// and files or folders added in place.

type libRow struct {
	p       *modelsPage
	m       library.Model
	title   *widget.Label
	load    *widget.Button
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
	p.w.ListModels(&p.libGen, p.showLibrary)
}

func (p *modelsPage) showLibrary(ms []library.Model, err error) {
	p.libBox.RemoveAll()
	p.libRows = nil
	p.libStatus.SetText(core.ListStatus(err, core.ErrorText, len(ms),
		lang.X("models.lib.empty", "No models yet. Download one from the Recommended tab, or add GGUF files you already have: they are used where they are, not copied."),
		lang.X("models.lib.count", "{{.N}} models. Downloads are kept in {{.Dir}}.", map[string]any{"N": len(ms), "Dir": core.ShortDir(filepath.Join(p.s.Dir(), "x"))})))
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
	info := core.Known(meta.Architecture, core.FormatParams(meta.Parameters), meta.Quant, core.FormatBytes(m.Size))
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
		origin = lang.X("models.lib.inplace", "Used in place: {{.Dir}}", map[string]any{"Dir": core.ShortDir(m.Path)})
	}
	// Titled by file name: the quantizations of one model share their
	// general.name, and only the file tells them apart. The name the
	// header gives follows, when it says more than the file.
	if m.Meta.Name != "" && !strings.EqualFold(m.Meta.Name, core.ModelLabel(m.Path)) {
		info = append([]string{m.Meta.Name}, info...)
	}
	r.title = core.BoldLabel(core.ModelLabel(m.Path))
	col := core.Lines(r.title, core.MutedLine(strings.Join(info, " · ")))
	if origin != "" {
		col.Add(core.MutedLine(origin))
	}
	r.verdict = newVerdictLabel()
	col.Add(r.verdict)
	r.status = widget.NewLabel("")
	r.status.Wrapping = fyne.TextWrapWord
	r.status.Hide()
	col.Add(r.status)
	load := widget.NewButton(lang.X("models.load", "Load"), func() { p.s.load(m.Path) })
	load.Importance = widget.HighImportance
	r.load = load
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
	if !p.s.svc.Supported(meta.Architecture) && meta.Architecture != "" {
		r.showStatus(lang.X("models.unsupported.short", "Churon cannot run {{.Arch}} models yet.", map[string]any{"Arch": meta.Architecture}), widget.DangerImportance)
	}
	r.content = core.Row(col, load, r.verify, reveal, r.del)
	r.refreshVerdict()
	r.refreshLoaded()
	return r
}

// refreshLoaded marks the row of the model the session has loaded: its
// title says so and its Load button, which would do nothing, is off.
func (r *libRow) refreshLoaded() {
	w := r.p.w
	title := core.ModelLabel(r.m.Path)
	loaded := w.Model != nil && w.Model.Path == r.m.Path
	switch {
	case loaded:
		title = lang.X("models.lib.loaded", "{{.Name}} (loaded)", map[string]any{"Name": title})
	case w.LoadingPath == r.m.Path:
		title = lang.X("models.lib.loading", "{{.Name}} (loading…)", map[string]any{"Name": title})
	}
	if r.title.Text != title { // the window refreshes often: redraw only a change
		r.title.SetText(title)
	}
	if r.m.Err != "" || loaded || w.LoadingPath == r.m.Path {
		r.load.Disable()
	} else {
		r.load.Enable()
	}
}

func (r *libRow) refreshVerdict() {
	if r.m.Err != "" || r.m.Meta.Layers == 0 {
		r.verdict.Hide()
		return
	}
	setVerdict(r.verdict, r.p.s.svc.Check(r.m.Meta))
}

func (r *libRow) showStatus(msg string, imp widget.Importance) {
	r.status.Importance = imp
	r.status.SetText(msg)
	r.status.Show()
}

// onReveal opens the folder holding the model in the desktop's file
// manager (xdg-open, Finder, Explorer: Fyne's OpenURL picks the right one).
func (r *libRow) onReveal() {
	if err := r.p.w.App.OpenURL(folderURL(r.m.Path)); err != nil {
		r.showStatus(lang.X("models.reveal.failed", "Could not open the folder: {{.Err}}", map[string]any{"Err": err.Error()}), widget.DangerImportance)
	}
}

// folderURL is the file:// URL of the folder that holds path.
func folderURL(path string) *url.URL { return core.FolderURL(filepath.Dir(path)) }

// onVerify recomputes the file's SHA-256 in the background.
func (r *libRow) onVerify() {
	r.verify.Disable()
	r.showStatus(lang.X("models.verifying", "Checking the file's SHA-256…"), widget.MediumImportance)
	svc, m, w := r.p.s.svc, r.m, r.p.w
	// Not on the command worker: a check of gigabytes must not hold up the
	// person's other commands.
	go func() {
		err := svc.Verify(w.Ctx, m)
		w.Do(func() {
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
		body = lang.X("models.delete.body", "{{.Name}} ({{.Size}}) is deleted from this computer.", map[string]any{"Name": filepath.Base(m.Path), "Size": core.FormatBytes(m.Size)})
		action = lang.X("models.delete", "Delete")
	} else {
		title = lang.X("models.forget.title", "Remove from the list?")
		body = lang.X("models.forget.body", "{{.Name}} stays where it is; Churon stops listing it.", map[string]any{"Name": m.Path})
		action = lang.X("models.forget", "Remove")
	}
	p.w.ConfirmAction(title, body, action, func() {
		unload := p.w.Model != nil && p.w.Model.Path == m.Path
		svc, sess := p.s.svc, p.w.Session
		// The library lists itself again once the model is gone
		// (LibraryChanged).
		p.w.Commands.Run(func() error {
			if unload {
				if err := sess.UnloadModel(); err != nil {
					return err
				}
			}
			_, err := svc.Remove(m)
			return err
		}, p.w.ShowError)
	})
}

func (p *modelsPage) onAddFile() {
	p.w.OpenGGUF("", func(path string) {
		svc := p.s.svc
		p.w.Commands.Run(func() error { return svc.AddFile(path) }, p.w.ShowError)
	})
}

func (p *modelsPage) onAddFolder() {
	d := dialog.NewFolderOpen(func(l fyne.ListableURI, err error) {
		if err != nil {
			p.w.ShowError(err)
			return
		}
		if l == nil {
			return
		}
		svc, dir := p.s.svc, l.Path()
		p.w.Commands.Run(func() error { return svc.AddFolder(dir) }, p.w.ShowError)
	}, p.w.Win)
	core.ShowFileDialog(d, "")
}
