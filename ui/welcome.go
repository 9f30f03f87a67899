package ui

import (
	"context"
	"os"
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/models/discover"
	"github.com/churon/churon/ui/core"
)

// welcomeView is what a person sees with no model loaded: what Churon is,
// how to start, and the GGUF files other apps already keep on this
// computer, usable in place.
type welcomeView struct {
	ui      *UI
	rec     fyne.CanvasObject // the recommended download (ui/models)
	recent  *fyne.Container
	library *fyne.Container // the library's models that are not recent
	found   *fyne.Container
	status  *widget.Label
	started bool
	content fyne.CanvasObject
}

func newWelcomeView(u *UI) *welcomeView {
	w := &welcomeView{ui: u}
	title := widget.NewLabel(lang.X("welcome.title", "Welcome to Churon"))
	title.SizeName = theme.SizeNameHeadingText
	title.TextStyle.Bold = true
	intro := widget.NewLabel(lang.X("welcome.intro",
		"Churon runs language models on your own computer: nothing you type leaves it. To begin, open a model file in GGUF format — the format LM Studio, Ollama and llama.cpp use. Small models (1–4 GB) answer quickly on most computers."))
	intro.Wrapping = fyne.TextWrapWord
	open := widget.NewButtonWithIcon(lang.X("model.open", "Open GGUF file…"), theme.FolderOpenIcon(), func() { u.picker.onOpenFile() })
	open.Importance = widget.HighImportance
	w.rec = u.mdl.Recommendation()

	w.recent = container.NewVBox()
	w.library = container.NewVBox()
	w.found = container.NewVBox()
	w.status = widget.NewLabel(lang.X("welcome.searching", "Looking for GGUF files in LM Studio's, Hugging Face's and Ollama's folders…"))
	w.status.Wrapping = fyne.TextWrapWord
	foundTitle := widget.NewLabel(lang.X("welcome.found", "Models already on this computer"))
	foundTitle.TextStyle.Bold = true

	demoBtn := widget.NewButtonWithIcon(lang.X("welcome.demo", "Try the built-in demo"), theme.MediaPlayIcon(), u.onDemo)
	demoNote := core.NewMuted(theme.SizeNameCaptionText, fyne.TextWrapWord)
	core.SetMuted(demoNote, lang.X("welcome.demo.note", "A tiny English story model inside Churon, offline: real answers need a real model."))
	demoRow := container.NewBorder(nil, nil, demoBtn, nil, demoNote)

	col := container.NewVBox(title, intro, container.NewHBox(open), demoRow, w.rec,
		w.recent, w.library, widget.NewSeparator(), foundTitle, w.status, w.found)
	w.content = container.NewVScroll(container.New(&core.Readable{Max: 760}, col))
	w.showRecent()
	w.showLibrary()
	return w
}

// showRecent lists the models opened before that still exist.
func (w *welcomeView) showRecent() {
	w.list(w.recent, lang.X("welcome.recent", "Recently used"), w.ui.recentModels(), nil)
}

// showLibrary lists the library's models (downloaded, quantized or added
// on the Models page) that are not among the recent ones, as listed in
// the background for the model menu.
func (w *welcomeView) showLibrary() {
	w.list(w.library, lang.X("welcome.library", "In your library"), w.ui.menuModels, w.ui.recentModels())
}

// list fills box with a titled row per model file that still exists,
// leaving out those in skip; an empty list shows nothing.
func (w *welcomeView) list(box *fyne.Container, title string, paths, skip []string) {
	box.RemoveAll()
	var rows []fyne.CanvasObject
	for _, p := range paths {
		if slices.Contains(skip, p) || len(rows) == maxMenuLibrary {
			continue
		}
		if st, err := statFile(p); err == nil {
			rows = append(rows, w.row(core.ModelLabel(p), p, st, core.ShortDir(p), w.ui.w.LoadModel))
		}
	}
	if len(rows) == 0 {
		return
	}
	t := widget.NewLabel(title)
	t.TextStyle.Bold = true
	box.Add(widget.NewSeparator())
	box.Add(t)
	for _, r := range rows {
		box.Add(r)
	}
}

// start searches for model files once, in the background.
func (w *welcomeView) start() {
	if w.started {
		return
	}
	w.started = true
	ctx, cancel := context.WithTimeout(w.ui.w.Ctx, core.DiscoverTimeout)
	go func() {
		defer cancel()
		found, err := w.ui.opt.Discover(ctx)
		w.ui.w.Do(func() { w.show(found, err) })
	}()
}

func (w *welcomeView) show(found []discover.Model, err error) {
	w.found.RemoveAll()
	switch {
	case err != nil:
		w.status.SetText(lang.X("welcome.error", "Could not look for model files: {{.Err}}", map[string]any{"Err": err.Error()}))
	case len(found) == 0:
		w.status.SetText(lang.X("welcome.none",
			"No GGUF files found in LM Studio's folders (~/.lmstudio/models), the Hugging Face cache (~/.cache/huggingface/hub) or Ollama's models (~/.ollama/models)."))
	default:
		w.status.SetText(lang.X("welcome.use", "Found {{.N}}. They are used where they are: nothing is copied.", map[string]any{"N": len(found)}))
		for _, m := range found {
			// Found elsewhere (LM Studio, the Hugging Face cache, Ollama):
			// loaded, it joins the library, as a file opened by hand does.
			w.found.Add(w.row(m.Name, m.Path, fileInfo{size: m.Size}, sourceLabel(m), w.ui.picker.openFile))
		}
	}
	w.found.Refresh()
}

func sourceLabel(m discover.Model) string {
	s := string(m.Source)
	if m.Repo != "" {
		s += " · " + m.Repo
	}
	return s
}

// row is one model file with a button that loads it (with load).
func (w *welcomeView) row(name, path string, st fileInfo, source string, load func(string)) fyne.CanvasObject {
	title := widget.NewLabel(name)
	title.TextStyle.Bold = true
	title.Truncation = fyne.TextTruncateEllipsis
	detail := core.FormatBytes(st.size)
	if source != "" {
		detail = source + " · " + detail
	}
	sub := core.NewMuted(theme.SizeNameCaptionText, fyne.TextWrapOff)
	sub.Truncation = fyne.TextTruncateEllipsis
	core.SetMuted(sub, detail)
	use := widget.NewButton(lang.X("welcome.load", "Load"), func() { load(path) })
	return core.Row(container.NewVBox(title, sub), use)
}

type fileInfo struct{ size int64 }

func statFile(p string) (fileInfo, error) {
	st, err := os.Stat(p)
	if err != nil {
		return fileInfo{}, err
	}
	return fileInfo{size: st.Size()}, nil
}
