package models

import (
	"os"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/models/hub"
)

// The hub's address and access token: where they come from, and the card
// under the search that sets a token for gated or private repositories,
// kept in the settings and used by every hub request from then on.

// Settings and environment read for the hub.
const (
	settingHubURL   = "models.hub_url"
	settingHubToken = "models.hub_token"
	envHubURL       = "CHURON_HUB_URL"
	envHubToken     = "HF_TOKEN"
)

func (s *State) hubURL() string {
	for _, v := range []string{s.opt.HubURL, os.Getenv(envHubURL)} {
		if v != "" {
			return v
		}
	}
	if v, ok := s.w.Setting(settingHubURL); ok && v != "" {
		return v
	}
	return hub.DefaultBaseURL
}

func (s *State) hubToken() string {
	if s.opt.Token != "" {
		return s.opt.Token
	}
	if v, ok := s.w.Setting(settingHubToken); ok && v != "" {
		return v
	}
	return os.Getenv(envHubToken)
}

// setToken stores a new access token and uses it from now on.
func (s *State) setToken(tok string) {
	s.w.SetSetting(settingHubToken, strings.TrimSpace(tok))
	s.hc.Store(hub.New(hub.Options{BaseURL: s.hubURL(), Token: s.hubToken()}))
}

// buildToken is the token card.
func (p *modelsPage) buildToken() fyne.CanvasObject {
	p.token = widget.NewPasswordEntry()
	p.token.SetPlaceHolder(lang.X("models.token.hint", "hf_… (only for gated or private repositories)"))
	if v, ok := p.w.Setting(settingHubToken); ok {
		p.token.SetText(v)
	}
	save := widget.NewButton(lang.X("dialog.save", "Save"), func() {
		p.s.setToken(p.token.Text)
		p.w.Banner(lang.X("models.token.saved", "Access token saved."), false)
	})
	tokenTitle := widget.NewLabel(lang.X("models.token", "Hugging Face access token"))
	tokenTitle.SizeName = theme.SizeNameCaptionText
	return container.NewVBox(tokenTitle, container.NewBorder(nil, nil, nil, save, p.token))
}
