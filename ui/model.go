package ui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/remote"
	"github.com/churon/churon/models/discover"
	"github.com/churon/churon/models/library"
	"github.com/churon/churon/ui/core"
)

// MaxRecent is how many model files the picker remembers.
const MaxRecent = 8

// modelPicker is the button at the top that names the loaded model and
// opens a menu: open a GGUF file, recent files, unload; with a progress
// bar while a model loads.
type modelPicker struct {
	ui       *UI
	button   *widget.Button
	progress *widget.ProgressBar
	content  fyne.CanvasObject
	libGen   int // the library listing the menu waits for
}

func newModelPicker(u *UI) *modelPicker {
	p := &modelPicker{ui: u}
	p.button = widget.NewButtonWithIcon("", theme.MenuDropDownIcon(), p.onMenu)
	p.button.IconPlacement = widget.ButtonIconTrailingText
	p.progress = widget.NewProgressBar()
	p.progress.Hide()
	p.content = container.NewHBox(p.button, container.NewGridWrap(fyne.NewSize(160, p.button.MinSize().Height), p.progress))
	return p
}

func (p *modelPicker) refresh() {
	u := p.ui
	switch {
	case u.w.LoadingPath != "":
		p.button.SetText(lang.X("model.loading", "Loading {{.Name}}…", map[string]any{"Name": core.ModelLabel(u.w.LoadingPath)}))
		p.progress.SetValue(u.w.LoadProgress)
		p.progress.Show()
	case u.w.Model != nil:
		p.button.SetText(core.ModelLabel(u.w.Model.Path))
		p.progress.Hide()
	default:
		p.button.SetText(lang.X("model.choose", "Choose a model"))
		p.progress.Hide()
	}
}

func (p *modelPicker) onMenu() {
	u := p.ui
	items := []*fyne.MenuItem{
		fyne.NewMenuItem(lang.X("model.open", "Open GGUF file…"), p.onOpenFile),
		fyne.NewMenuItem(lang.X("model.manage", "Download and manage models…"), u.mdl.Show),
	}
	recent := u.recentModels()
	if len(recent) > 0 {
		items = append(items, fyne.NewMenuItemSeparator())
		for _, path := range recent {
			item := fyne.NewMenuItem(core.ModelLabel(path), func() { u.w.LoadModel(path) })
			if u.w.Model != nil && u.w.Model.Path == path {
				item.Checked = true
			}
			items = append(items, item)
		}
	}
	// The library's other models, as they were when the menu last opened:
	// listing reads every model's header, so the menu does not wait for it.
	var lib []*fyne.MenuItem
	for _, path := range u.menuModels {
		if slices.Contains(recent, path) || len(lib) == maxMenuLibrary {
			continue
		}
		item := fyne.NewMenuItem(core.ModelLabel(path), func() { u.w.LoadModel(path) })
		item.Checked = u.w.Model != nil && u.w.Model.Path == path
		lib = append(lib, item)
	}
	if len(lib) > 0 {
		items = append(items, fyne.NewMenuItemSeparator())
		items = append(items, lib...)
	}
	p.refreshLibrary()
	// The connections' models, marked remote, under their connection.
	for _, c := range u.menuRemotes {
		if len(c.Models) == 0 {
			continue
		}
		items = append(items, fyne.NewMenuItemSeparator())
		head := fyne.NewMenuItem(lang.X("model.remote.header", "Remote: {{.Conn}}", map[string]any{"Conn": c.Name}), nil)
		head.Disabled = true
		items = append(items, head)
		for _, m := range c.Models {
			path := session.RemotePath(c.Name, m)
			item := fyne.NewMenuItem(core.ModelLabel(path), func() { u.w.LoadModel(path) })
			item.Icon = theme.ComputerIcon()
			item.Checked = u.w.Model != nil && u.w.Model.Path == path
			items = append(items, item)
		}
	}
	p.refreshRemotes()
	demoItem := fyne.NewMenuItem(core.ModelLabel(session.DemoPath), u.onDemo)
	demoItem.Checked = u.w.Model != nil && session.IsDemo(u.w.Model.Path)
	items = append(items, fyne.NewMenuItemSeparator(), demoItem)
	unload := fyne.NewMenuItem(lang.X("model.unload", "Unload model"), p.onUnload)
	unload.Disabled = u.w.Model == nil && u.w.LoadingPath == ""
	items = append(items, fyne.NewMenuItemSeparator(), unload)
	widget.ShowPopUpMenuAtRelativePosition(fyne.NewMenu("", items...), u.w.Win.Canvas(),
		fyne.NewPos(0, p.button.Size().Height), p.button)
}

// maxMenuLibrary bounds the library models the menu lists; the Models
// page lists them all.
const maxMenuLibrary = 12

// refreshLibrary lists the library's models in the background for the
// next time the menu opens.
func (p *modelPicker) refreshLibrary() {
	u := p.ui
	u.w.ListModels(&p.libGen, func(ms []library.Model, err error) {
		if err != nil {
			return // the Models page says why
		}
		paths := make([]string, len(ms))
		for i, m := range ms {
			paths[i] = m.Path
		}
		u.menuModels = paths
		u.welcome.showLibrary()
	})
}

// refreshRemotes reads the connections in the background for the next
// time the menu opens.
func (p *modelPicker) refreshRemotes() {
	u := p.ui
	if u.w.Remotes == nil {
		return
	}
	core.Then(u.w.Reads, u.w.Remotes.List, func(list []remote.Connection, err error) {
		if err == nil { // else Settings says what is wrong with the file
			u.menuRemotes = list
		}
	})
}

// onOpenFile shows a file dialog for .gguf files, starting in a folder
// where models are likely to be.
func (p *modelPicker) onOpenFile() {
	p.ui.w.OpenGGUF(p.startDir(), p.openFile)
}

// openFile loads a file the person chose and keeps it in the library, so
// that the Models page and the model menu list it from now on (the
// library lists itself again after, LibraryChanged). A file the engine
// refuses is said so once, and stays out of the library.
func (p *modelPicker) openFile(path string) {
	svc := p.ui.w.Models
	p.ui.w.LoadModelThen(path, func() error { return svc.AddFile(path) })
}

// startDir is the folder of the last model opened, else the first of the
// usual model folders that exists.
func (p *modelPicker) startDir() string {
	if r := p.ui.recentModels(); len(r) > 0 {
		if d := filepath.Dir(r[0]); isDir(d) {
			return d
		}
	}
	for _, l := range discover.DefaultLocations() {
		if isDir(l.Dir) {
			return l.Dir
		}
	}
	return ""
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// reloadLast loads the model used last, at start, unless the person
// turned that off or the session has a model already (a window opened
// again over a running session).
func (p *modelPicker) reloadLast() {
	w := p.ui.w
	if !w.ReloadLast() || w.Model != nil || w.LoadingPath != "" {
		return
	}
	if v, _ := w.Setting(settingUnloaded); v == "true" {
		return // the person unloaded it before quitting: start without one
	}
	recent := p.ui.recentModels()
	if len(recent) == 0 {
		return
	}
	if st, err := os.Stat(recent[0]); err != nil || !st.Mode().IsRegular() {
		return // moved or deleted since: the welcome page offers the others
	}
	w.LoadModel(recent[0])
}

func (p *modelPicker) onUnload() {
	sess := p.ui.w.Session
	p.ui.w.SetSetting(settingUnloaded, "true")
	p.ui.w.Commands.Run(sess.UnloadModel, p.ui.w.ShowError)
}

// settingUnloaded is "true" while the person has unloaded the model by
// hand (and none was loaded since): the next start then loads none.
const settingUnloaded = "ui.model_unloaded"

// remember puts path first in the recent files.
func (p *modelPicker) remember(path string) {
	if v, _ := p.ui.w.Setting(settingUnloaded); v != "" {
		p.ui.w.SetSetting(settingUnloaded, "")
	}
	recent := []string{path}
	for _, r := range p.ui.recentModels() {
		if r != path && len(recent) < MaxRecent {
			recent = append(recent, r)
		}
	}
	b, err := json.Marshal(recent)
	if err != nil {
		return
	}
	p.ui.w.SetSetting(settingRecent, string(b))
}
