package ui

import (
	"path/filepath"

	"fyne.io/fyne/v2"

	"github.com/churon/churon/ui/core"
	"github.com/churon/churon/ui/fontcheck"
)

// Theme is Churon's theme (see core.Theme).
type Theme = core.Theme

// NewTheme wraps Fyne's default theme with Churon's colours.
func NewTheme() fyne.Theme { return core.NewTheme() }

// boldFace reads the bold font the check found that has Hangul, for bold
// text (core.Theme.Bold); nil when there is none or it cannot be read,
// and Fyne's own bold font stays.
func boldFace(res fontcheck.Result) fyne.Resource {
	if res.Bold == "" {
		return nil
	}
	data, err := fontcheck.Face(res.Bold, res.BoldIndex)
	if err != nil {
		return nil
	}
	return fyne.NewStaticResource(filepath.Base(res.Bold), data)
}
