package uitest

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// SaveScreenshot writes img as name into $CHURON_SCREENSHOTS when that is
// set (docs/screenshots is made this way); otherwise it does nothing.
func SaveScreenshot(t *testing.T, name string, img image.Image) {
	t.Helper()
	dir := os.Getenv("CHURON_SCREENSHOTS")
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
}

// Colours counts the colours of img, sampled: a blank picture has few.
func Colours(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r >> 8, g >> 8, bl >> 8, a >> 8}] = true
		}
	}
	return len(seen)
}

// DarkTheme is the app's theme in its dark variant whatever the settings
// say: the test app's settings name no variant, so the window would mix
// dark defaults with Churon's light tints; the real app follows the
// system's choice.
type DarkTheme struct{ fyne.Theme }

func (d DarkTheme) Color(n fyne.ThemeColorName, _ fyne.ThemeVariant) color.Color {
	return d.Theme.Color(n, theme.VariantDark)
}
