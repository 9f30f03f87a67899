package ui

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"

	"github.com/churon/churon/internal/uitest"
	"github.com/churon/churon/ui/core"
)

// TestThemeAtStart: the theme chosen in an earlier run is the one the
// window opens in, whatever variant the system asks for.
func TestThemeAtStart(t *testing.T) {
	for _, c := range []struct {
		choice  string
		variant fyne.ThemeVariant
	}{{core.ThemeDark, theme.VariantDark}, {core.ThemeLight, theme.VariantLight}} {
		t.Run(c.choice, func(t *testing.T) {
			h := newHarness(t, harnessOptions{before: func(b *uitest.Harness) {
				if err := b.M.SetSetting(core.SettingTheme, c.choice); err != nil {
					t.Fatal(err)
				}
			}})
			want := theme.DefaultTheme().Color(theme.ColorNameBackground, c.variant)
			for _, asked := range []fyne.ThemeVariant{theme.VariantLight, theme.VariantDark} {
				if got := h.A.Settings().Theme().Color(theme.ColorNameBackground, asked); got != want {
					t.Errorf("asked for variant %d, the background is %v; want %v", asked, got, want)
				}
			}
		})
	}
}
