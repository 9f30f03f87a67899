package compare

import (
	"image"
	"image/color"
	"image/draw"
	"slices"
	"testing"
)

// TestChartText: with a Text function every word and number of the chart
// is drawn by it (none in the bitmap font, which has no Hangul), the
// title given replaces the English one, and the pictures land in the
// chart.
func TestChartText(t *testing.T) {
	r := &Result{Reference: 0, Models: []ModelResult{
		{Probe: Probe{Type: "F16"}},
		{Probe: Probe{Type: "Q4_0"}, Quality: &Quality{Answer: Segment{KLD: []float64{0.01, 0.2, 0.05, 0.1}}}},
	}}
	var asked []string
	block := func(s string, c color.RGBA) image.Image {
		asked = append(asked, s)
		img := image.NewRGBA(image.Rect(0, 0, 10*len([]rune(s)), 16))
		draw.Draw(img, img.Bounds(), image.NewUniform(color.RGBA{255, 0, 255, 255}), image.Point{}, draw.Src)
		return img
	}
	img := Chart(r, ChartOptions{Width: 600, Height: 240, Text: block, Title: "답 토큰별 KL"}).(*image.RGBA)
	for _, want := range []string{"답 토큰별 KL", "Q4_0", "vs F16", "0", "1"} {
		if !slices.Contains(asked, want) {
			t.Errorf("%q was not drawn by Text; it drew %q", want, asked)
		}
	}
	if slices.Contains(asked, "KL divergence per answer token (nats)") {
		t.Error("the English title was drawn too")
	}
	// The title's block sits at the top left.
	if got := img.RGBAAt(8+5, 6+8); got != (color.RGBA{255, 0, 255, 255}) {
		t.Errorf("the title's picture is not in the chart: %v at its place", got)
	}
	// Without Text the chart still draws, in its own font.
	plain := Chart(r, ChartOptions{Width: 600, Height: 240}).(*image.RGBA)
	if plain.RGBAAt(8+5, 6+8) == (color.RGBA{255, 0, 255, 255}) {
		t.Error("the bitmap chart used the Text pictures")
	}
}
