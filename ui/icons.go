package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// iconSettings opens the settings.
func iconSettings() fyne.Resource { return theme.SettingsIcon() }

// iconPin marks pinned conversations (drawn for Churon; Fyne's theme has
// no pin). Black fill: theme.NewThemedResource recolours it.
var iconPin = fyne.NewStaticResource("pin.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">
<path fill="#000000" d="M14.6 2.6l6.8 6.8-1.7 1.1-1.6-.4-3.3 3.3.5 4.1-1.4 1.4-3.6-3.6-5.2 5.2-1.1-.1-.1-1.1 5.2-5.2-3.6-3.6 1.4-1.4 4.1.5 3.3-3.3-.4-1.6z"/>
</svg>`))
