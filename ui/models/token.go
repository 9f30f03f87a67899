package models

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// The hub's address and access token: where they come from, and the card
// under the search that sets a token for gated or private repositories,
// kept in the settings and used by every hub request from then on.

// buildToken is the token card.
func (p *modelsPage) buildToken() fyne.CanvasObject {
	p.token = widget.NewPasswordEntry()
	p.token.SetPlaceHolder(lang.X("models.token.hint", "hf_… (only for gated or private repositories)"))
	p.token.SetText(p.s.svc.Token())
	save := widget.NewButton(lang.X("dialog.save", "Save"), func() {
		p.s.svc.SetToken(p.token.Text)
		p.w.Banner(lang.X("models.token.saved", "Access token saved."), false)
	})
	tokenTitle := widget.NewLabel(lang.X("models.token", "Hugging Face access token"))
	tokenTitle.SizeName = theme.SizeNameCaptionText
	return container.NewVBox(tokenTitle, container.NewBorder(nil, nil, nil, save, p.token))
}
