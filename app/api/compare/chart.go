package compare

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strconv"
)

// ChartOptions size the chart.
type ChartOptions struct {
	Width, Height int // pixels; 0 means 960 × 360
	// TextScale is the size of a font pixel (the font is 5×7); 0 means 2.
	TextScale int
	// Dark draws light lines on a dark ground, for a window in the dark
	// theme; exports keep the light chart, which prints.
	Dark bool
	// Text, when set, draws the chart's words and numbers instead of its
	// own 5×7 bitmap font, which has capital ASCII letters only: the
	// window gives its font, so that the chart reads like the page around
	// it and a translated title is drawn at all. It returns s in colour c
	// as a picture, transparent around the letters, the same height for
	// every s.
	Text func(s string, c color.RGBA) image.Image
	// Title is the chart's title; "" is the English one.
	Title string
}

// chartInk is the chart's neutral colours; the models' lines keep their
// palette colours on both grounds.
type chartInk struct{ bg, axis, grid, text, faint color.RGBA }

var (
	lightInk = chartInk{
		bg: color.RGBA{255, 255, 255, 255}, axis: color.RGBA{60, 60, 60, 255}, grid: color.RGBA{225, 225, 225, 255},
		text: color.RGBA{40, 40, 40, 255}, faint: color.RGBA{120, 120, 120, 255},
	}
	darkInk = chartInk{
		bg: color.RGBA{30, 32, 38, 255}, axis: color.RGBA{200, 200, 205, 255}, grid: color.RGBA{58, 61, 70, 255},
		text: color.RGBA{225, 225, 230, 255}, faint: color.RGBA{150, 150, 158, 255},
	}
	palette = []color.RGBA{
		{31, 119, 180, 255}, // blue
		{214, 39, 40, 255},  // red
		{44, 160, 44, 255},  // green
		{255, 127, 14, 255}, // orange
	}
)

// Color is model i's colour in the chart (by index into Result.Models),
// for views that draw a legend or columns to match.
func Color(i int) color.RGBA { return palette[((i%len(palette))+len(palette))%len(palette)] }

// Chart draws the per-token KL divergence of every model from the
// reference along the reference's answer: one line per model, a marker
// on every token, a bigger one where the model's top-1 token differs from
// the reference's, and under the axis one lane per model with a tick at
// each such disagreement. The image is an *image.RGBA; the GUI shows it
// as is and the exports embed it as PNG.
func Chart(r *Result, opt ChartOptions) image.Image {
	w, h, s := opt.Width, opt.Height, opt.TextScale
	if w <= 0 {
		w = 960
	}
	if h <= 0 {
		h = 360
	}
	if s <= 0 {
		s = 2
	}
	ink := lightInk
	if opt.Dark {
		ink = darkInk
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	fillRect(img, 0, 0, w, h, ink.bg)

	var models []int // the ones drawn: all but the reference
	T, yMax := 0, 0.0
	for i, m := range r.Models {
		if i == r.Reference || m.Quality == nil {
			continue
		}
		models = append(models, i)
		T = max(T, len(m.Quality.Answer.KLD))
		for _, v := range m.Quality.Answer.KLD {
			yMax = math.Max(yMax, v)
		}
	}
	p := newPen(opt, s)
	lh := p.height() // line height of text
	title := opt.Title
	if title == "" {
		title = "KL divergence per answer token (nats)"
	}
	p.draw(img, 8, 6, title, ink.text)
	// Legend, right-aligned on the title line.
	x := w - 8
	for k := len(models) - 1; k >= 0; k-- {
		i := models[k]
		label := r.Models[i].Type
		x -= p.width(label)
		p.draw(img, x, 6, label, ink.text)
		x -= lh + 2*s + 2
		fillRect(img, x, 6, lh, lh, Color(i))
		x -= 3 * s * 2
	}
	if r.Reference >= 0 && r.Reference < len(r.Models) {
		label := "vs " + r.Models[r.Reference].Type
		x -= p.width(label)
		if x > 8+p.width(title)+4*s {
			p.draw(img, x, 6, label, ink.faint)
		}
	}

	lane := max(6, 3*s)
	left := 8*s + max(6*s*6, p.width("0.125")) // room for tick labels such as "0.125"
	right := 12
	top := 6 + lh + 4*s + lh/2 + 4 // title line, then room for the top tick label
	bottom := h - (lh + 4*s + 6) - len(models)*(lane+3) - 4
	if bottom-top < 20 || right+left >= w-20 || T == 0 {
		note := "no answer tokens scored"
		if T > 0 {
			note = "chart too small"
		}
		p.draw(img, 8, top, note, ink.faint)
		return img
	}
	plotW, plotH := w-left-right, bottom-top

	// Y axis: nice ticks from 0 to a nice maximum.
	if yMax <= 0 {
		yMax = 0.1 // every model agrees exactly: draw flat lines at 0
	}
	step := niceStep(yMax / 4)
	yTop := step * math.Ceil(yMax/step)
	yOf := func(v float64) int { return bottom - int(math.Round(v/yTop*float64(plotH))) }
	for v := 0.0; v <= yTop*(1+1e-9); v += step {
		y := yOf(v)
		for xx := left; xx < left+plotW; xx++ {
			img.SetRGBA(xx, y, ink.grid)
		}
		label := tickLabel(v, step)
		p.draw(img, left-6-p.width(label), y-lh/2, label, ink.text)
	}
	// X axis: token positions.
	xOf := func(j int) int { return left + int((float64(j)+0.5)*float64(plotW)/float64(T)) }
	xStep := niceStep(float64(T) / 8)
	if xStep < 1 {
		xStep = 1
	}
	for v := 0.0; v < float64(T); v += xStep {
		xx := xOf(int(v))
		for y := bottom; y < bottom+3; y++ {
			img.SetRGBA(xx, y, ink.axis)
		}
	}
	xl := bottom + len(models)*(lane+3) + 6
	for v := 0.0; v < float64(T); v += xStep {
		label := strconv.Itoa(int(v))
		p.draw(img, xOf(int(v))-p.width(label)/2, xl, label, ink.text)
	}
	for xx := left; xx < left+plotW; xx++ {
		img.SetRGBA(xx, bottom, ink.axis)
	}
	for y := top; y <= bottom; y++ {
		img.SetRGBA(left, y, ink.axis)
	}

	// Lines, markers and disagreement lanes.
	cell := max(1, plotW/T)
	for k, i := range models {
		q := r.Models[i].Quality.Answer
		c := Color(i)
		for j := 1; j < len(q.KLD); j++ {
			drawLine(img, xOf(j-1), yOf(clamp0(q.KLD[j-1])), xOf(j), yOf(clamp0(q.KLD[j])), c)
		}
		ly := bottom + 4 + k*(lane+3)
		for j, v := range q.KLD {
			xx, y := xOf(j), yOf(clamp0(v))
			if j < len(q.Agree) && !q.Agree[j] {
				fillRect(img, xx-3, y-3, 7, 7, ink.axis)
				fillRect(img, xx-2, y-2, 5, 5, c)
				fillRect(img, xx-max(1, cell/2)+1, ly, max(2, cell-1), lane, c)
			} else {
				fillRect(img, xx-1, y-1, 3, 3, c)
			}
		}
	}
	return img
}

func clamp0(v float64) float64 { return math.Max(0, v) }

// WriteChartPNG encodes Chart as PNG.
func WriteChartPNG(w io.Writer, r *Result, opt ChartOptions) error {
	if err := png.Encode(w, Chart(r, opt)); err != nil {
		return fmt.Errorf("compare: chart: %w", err)
	}
	return nil
}

// niceStep rounds v up to 1, 2 or 5 times a power of ten.
func niceStep(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// tickLabel formats a tick value with the decimals its step needs.
func tickLabel(v, step float64) string {
	if step >= 1 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	if step < 1e-4 {
		return strconv.FormatFloat(v, 'e', 0, 64)
	}
	dec := int(math.Ceil(-math.Log10(step) - 1e-9))
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// drawLine draws a two-pixel-wide line (Bresenham).
func drawLine(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := 1, 1
	if x0 > x1 {
		sx = -1
	}
	if y0 > y1 {
		sy = -1
	}
	e := dx + dy
	for {
		fillRect(img, x0, y0, 2, 2, c)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
