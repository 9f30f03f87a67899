package core

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// ShowError tells the person what went wrong, in their language, with the
// technical reason behind Details (see Describe). A nil error shows
// nothing.
func (w *Window) ShowError(err error) {
	if err == nil {
		return
	}
	msg, details := Describe(err)
	if details != "" && details != msg {
		w.BannerDetails(msg, details)
		return
	}
	w.Banner(msg, true)
}

// BannerAction shows a message for people with a button that acts on it
// (e.g. "Open folder" after a save).
func (w *Window) BannerAction(msg, action string, f func()) {
	btn := widget.NewButton(action, f)
	btn.Importance = widget.LowImportance
	w.addBanner(container.NewBorder(nil, nil, nil, btn, bannerLabel(msg, false)))
}

// BannerDetails shows a message for people, with the technical reason
// behind a Details button.
func (w *Window) BannerDetails(msg, details string) {
	more := widget.NewLabel(details)
	more.Wrapping = fyne.TextWrapWord
	more.Importance = widget.LowImportance
	more.Hide()
	toggle := widget.NewButton(lang.X("error.details", "Details"), func() {
		if more.Visible() {
			more.Hide()
		} else {
			more.Show()
		}
	})
	toggle.Importance = widget.LowImportance
	w.addBanner(container.NewVBox(bannerLabel(msg, true), container.NewHBox(toggle), more))
}

// Banner shows a message at the top of the chat until dismissed.
func (w *Window) Banner(msg string, isError bool) { w.addBanner(bannerLabel(msg, isError)) }

func bannerLabel(msg string, isError bool) *widget.Label {
	label := widget.NewLabel(msg)
	label.Wrapping = fyne.TextWrapWord
	if isError {
		label.Importance = widget.DangerImportance
	}
	return label
}

// addBanner shows content at the top of the chat with a button that
// dismisses it.
func (w *Window) addBanner(content fyne.CanvasObject) {
	var bar *fyne.Container
	closeBtn := widget.NewButtonWithIcon("", iconClose(), func() {
		w.Notice.Remove(bar)
	})
	closeBtn.Importance = widget.LowImportance
	bar = container.NewBorder(nil, nil, nil, closeBtn, content)
	// Keep a few at most: the newest matter.
	if len(w.Notice.Objects) >= 3 {
		w.Notice.Remove(w.Notice.Objects[0])
	}
	w.Notice.Add(bar)
}

// iconClose dismisses a banner.
func iconClose() fyne.Resource { return theme.CancelIcon() }
