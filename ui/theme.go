package ui

import (
	"fyne.io/fyne/v2"

	"github.com/churon/churon/ui/core"
)

// Theme is Churon's theme (see core.Theme).
type Theme = core.Theme

// NewTheme wraps Fyne's default theme with Churon's colours and Hangul.
func NewTheme() fyne.Theme { return core.NewTheme() }
