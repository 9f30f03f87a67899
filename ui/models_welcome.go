package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/assets/catalog"
	"github.com/churon/churon/ui/locale"
)

// welcomeRec is the welcome view's offer: the catalog model that suits
// this computer best, one click to download and load it, and the way to
// every other model.
type welcomeRec struct {
	u       *UI
	m       catalog.Model
	ok      bool
	dest    string
	verdict *widget.Label
	action  *widget.Button
	bar     *widget.ProgressBar
	info    *widget.Label
	content *fyne.Container
}

func newWelcomeRec(u *UI) *welcomeRec {
	w := &welcomeRec{u: u}
	s := u.mdl
	m, res, ok := s.recommend()
	w.m, w.ok = m, ok
	browse := widget.NewButtonWithIcon(lang.X("welcome.browse", "Browse models…"), theme.SearchIcon(), u.showModelsPage)
	w.content = container.NewVBox(widget.NewSeparator())
	if !ok {
		note := widget.NewLabel(lang.X("welcome.rec.none", "Download a model from Churon's selection or from Hugging Face: the Models page checks each one against this computer's memory first."))
		note.Wrapping = fyne.TextWrapWord
		w.content.Add(note)
		w.content.Add(container.NewHBox(browse))
		return w
	}
	w.dest = s.destFor(m.Repo, m.File)
	head := widget.NewLabel(lang.X("welcome.rec", "Recommended for this computer"))
	head.TextStyle.Bold = true
	name := widget.NewLabel(lang.X("welcome.rec.name", "{{.Name}} · {{.Size}} download",
		map[string]any{"Name": m.Name, "Size": formatBytes(m.Size)}))
	name.TextStyle.Bold = true
	desc := newMuted(theme.SizeNameText, fyne.TextWrapWord)
	setMuted(desc, m.Describe(locale.Current()))
	w.verdict = newVerdictLabel()
	setVerdict(w.verdict, res)
	w.action = widget.NewButtonWithIcon("", theme.DownloadIcon(), w.onAction)
	w.action.Importance = widget.HighImportance
	w.bar = widget.NewProgressBar()
	w.bar.Hide()
	w.info = widget.NewLabel("")
	w.info.SizeName = theme.SizeNameCaptionText
	w.info.Hide()
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
	s := w.u.mdl
	w.action.Enable()
	w.bar.Hide()
	w.info.Hide()
	switch d := s.active(w.dest); {
	case s.pending[w.m.ID]:
		w.action.SetText(lang.X("models.preparing", "Preparing…"))
		w.action.Disable()
	case d != nil:
		w.action.SetText(statusWord(d.Status()))
		w.action.Disable()
		w.bar.SetValue(d.Progress())
		w.bar.Show()
		w.info.SetText(downloadLine(d))
		w.info.Show()
	case fileExists(w.dest):
		w.action.SetText(lang.X("welcome.rec.load", "Load {{.Name}}", map[string]any{"Name": w.m.Name}))
	default:
		w.action.SetText(lang.X("welcome.rec.get", "Download and load"))
	}
}

func (w *welcomeRec) onAction() {
	s := w.u.mdl
	if fileExists(w.dest) && s.active(w.dest) == nil {
		s.load(w.dest)
		return
	}
	s.downloadCatalog(w.m, true)
}
