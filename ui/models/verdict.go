package models

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/models/fit"
	"github.com/churon/churon/ui/core"
)

// Whether a model fits this computer's memory, in words.

// verdictText says a fit verdict in words, with the colour to show it in.
func verdictText(r fit.Result) (string, widget.Importance) {
	data := map[string]any{"Need": core.FormatBytes(r.Need), "Avail": core.FormatBytes(r.Memory.Available), "Total": core.FormatBytes(r.Memory.Total)}
	switch r.Verdict {
	case fit.Fits:
		return lang.X("models.fits", "Fits: needs about {{.Need}} of the {{.Avail}} free", data), widget.SuccessImportance
	case fit.Tight:
		return lang.X("models.tight", "Tight: needs about {{.Need}}, {{.Avail}} free of {{.Total}}; close other programs first", data), widget.WarningImportance
	case fit.WontFit:
		return lang.X("models.wontfit", "Will not fit: needs about {{.Need}}, this computer has {{.Total}}", data), widget.DangerImportance
	}
	return lang.X("models.fit_unknown", "Needs about {{.Need}} of memory", data), widget.MediumImportance
}

func newVerdictLabel() *widget.Label {
	l := widget.NewLabel("")
	l.Wrapping = fyne.TextWrapWord
	return l
}

func setVerdict(l *widget.Label, r fit.Result) {
	text, imp := verdictText(r)
	l.Importance = imp
	l.SetText(text)
}

// confirmFit asks before downloading a model that will not fit.
func confirmFit(w *core.Window, name string, res fit.Result, start func()) {
	if res.Verdict != fit.WontFit {
		start()
		return
	}
	text, _ := verdictText(res)
	w.ConfirmAction(lang.X("models.wontfit.title", "Download anyway?"),
		lang.X("models.wontfit.body", "{{.Name}} is unlikely to run on this computer. {{.Verdict}}.", map[string]any{"Name": name, "Verdict": text}),
		lang.X("models.download", "Download"), start)
}

// formatContext writes a context length in thousands of tokens ("32K").
func formatContext(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%dK", n/1024)
	}
	return fmt.Sprint(n)
}
