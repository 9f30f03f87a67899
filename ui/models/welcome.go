package models

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/assets/catalog"
	"github.com/churon/churon/ui/core"
	"github.com/churon/churon/ui/locale"
)

// welcomeRec is the welcome view's offer: the catalog model that suits
// this computer best, one click to download and load it, and the way to
// every other model.
type welcomeRec struct {
	s       *State
	m       catalog.Model
	ok      bool
	dest    string
	verdict *widget.Label
	action  *widget.Button
	bar     *widget.ProgressBar
	info    *widget.Label
	content *fyne.Container
}

// Recommendation is the welcome view's offer of a model (see welcomeRec),
// which then follows its download.
func (s *State) Recommendation() fyne.CanvasObject {
	s.rec = newWelcomeRec(s)
	return s.rec.content
}

func newWelcomeRec(s *State) *welcomeRec {
	w := &welcomeRec{s: s}
	m, res, ok := s.svc.Recommend()
	w.m, w.ok = m, ok
	browse := widget.NewButtonWithIcon(lang.X("welcome.browse", "Browse models…"), theme.SearchIcon(), s.Show)
	w.content = container.NewVBox(widget.NewSeparator())
	if !ok {
		note := widget.NewLabel(lang.X("welcome.rec.none", "Download a model from Churon's selection or from Hugging Face: the Models page checks each one against this computer's memory first."))
		note.Wrapping = fyne.TextWrapWord
		w.content.Add(note)
		w.content.Add(container.NewHBox(browse))
		return w
	}
	w.dest = s.DestFor(m.Repo, m.File)
	head := widget.NewLabel(lang.X("welcome.rec", "Recommended for this computer"))
	head.TextStyle.Bold = true
	name := widget.NewLabel(lang.X("welcome.rec.name", "{{.Name}} · {{.Size}} download",
		map[string]any{"Name": m.Name, "Size": core.FormatBytes(m.Size)}))
	name.TextStyle.Bold = true
	desc := core.NewMuted(theme.SizeNameText, fyne.TextWrapWord)
	core.SetMuted(desc, m.Describe(locale.Current()))
	w.verdict = newVerdictLabel()
	setVerdict(w.verdict, res)
	w.action = widget.NewButtonWithIcon("", theme.DownloadIcon(), w.onAction)
	w.action.Importance = widget.HighImportance
	w.bar, w.info = newProgress()
	w.content.Add(head)
	w.content.Add(name)
	w.content.Add(desc)
	w.content.Add(w.verdict)
	w.content.Add(container.NewHBox(w.action, browse))
	w.content.Add(w.bar)
	w.content.Add(w.info)
	w.refresh()
	return w
}

// refresh follows the recommended model's download.
func (w *welcomeRec) refresh() {
	if !w.ok {
		return
	}
	d, preparing := w.s.follow(w.m.ID, w.dest, w.action, w.bar, w.info)
	switch {
	case preparing:
	case d != nil:
		w.action.SetText(statusWord(d.Status()))
		w.action.Disable()
	case core.FileExists(w.dest):
		w.action.SetText(lang.X("welcome.rec.load", "Load {{.Name}}", map[string]any{"Name": w.m.Name}))
	default:
		w.action.SetText(lang.X("welcome.rec.get", "Download and load"))
	}
}

func (w *welcomeRec) onAction() {
	s := w.s
	if core.FileExists(w.dest) && s.Active(w.dest) == nil {
		s.load(w.dest)
		return
	}
	s.svc.DownloadCatalog(w.m, true)
}
