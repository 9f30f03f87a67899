package compare

import (
	"image"
	"image/color"
	"image/draw"
	"strings"
)

// A 5×7 bitmap font for the chart's labels, so that the chart needs
// nothing beyond the standard library. Lower case is drawn as upper case;
// a character without a glyph is drawn as '?'.
var glyphs = map[rune][7]string{
	'0': {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."},
	'1': {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."},
	'2': {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"},
	'3': {"#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."},
	'4': {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."},
	'5': {"#####", "#....", "####.", "....#", "....#", "#...#", ".###."},
	'6': {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."},
	'7': {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."},
	'8': {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."},
	'9': {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."},
	'A': {".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"},
	'B': {"####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."},
	'C': {".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."},
	'D': {"###..", "#..#.", "#...#", "#...#", "#...#", "#..#.", "###.."},
	'E': {"#####", "#....", "#....", "####.", "#....", "#....", "#####"},
	'F': {"#####", "#....", "#....", "####.", "#....", "#....", "#...."},
	'G': {".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"},
	'H': {"#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"},
	'I': {".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."},
	'J': {"..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."},
	'K': {"#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"},
	'L': {"#....", "#....", "#....", "#....", "#....", "#....", "#####"},
	'M': {"#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"},
	'N': {"#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#"},
	'O': {".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."},
	'P': {"####.", "#...#", "#...#", "####.", "#....", "#....", "#...."},
	'Q': {".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#"},
	'R': {"####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"},
	'S': {".####", "#....", "#....", ".###.", "....#", "....#", "####."},
	'T': {"#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."},
	'U': {"#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."},
	'V': {"#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."},
	'W': {"#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."},
	'X': {"#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"},
	'Y': {"#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.."},
	'Z': {"#####", "....#", "...#.", "..#..", ".#...", "#....", "#####"},
	'.': {".....", ".....", ".....", ".....", ".....", ".##..", ".##.."},
	',': {".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."},
	':': {".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."},
	'-': {".....", ".....", ".....", "#####", ".....", ".....", "....."},
	'+': {".....", "..#..", "..#..", "#####", "..#..", "..#..", "....."},
	'_': {".....", ".....", ".....", ".....", ".....", ".....", "#####"},
	'%': {"##...", "##..#", "...#.", "..#..", ".#...", "#..##", "...##"},
	'(': {"...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."},
	')': {".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."},
	'/': {".....", "....#", "...#.", "..#..", ".#...", "#....", "....."},
	'=': {".....", ".....", "#####", ".....", "#####", ".....", "....."},
	'?': {".###.", "#...#", "....#", "...#.", "..#..", ".....", "..#.."},
	' ': {".....", ".....", ".....", ".....", ".....", ".....", "....."},
}

// textWidth is the width in pixels of s drawn at scale.
func textWidth(s string, scale int) int {
	n := len([]rune(s))
	if n == 0 {
		return 0
	}
	return (6*n - 1) * scale
}

// drawText draws s with its top-left corner at (x, y), each font pixel a
// scale×scale square.
func drawText(img *image.RGBA, x, y int, s string, scale int, c color.RGBA) {
	for _, r := range strings.ToUpper(s) {
		g, ok := glyphs[r]
		if !ok {
			g = glyphs['?']
		}
		for row, bits := range g {
			for col, b := range bits {
				if b == '#' {
					fillRect(img, x+col*scale, y+row*scale, scale, scale, c)
				}
			}
		}
		x += 6 * scale
	}
}

func fillRect(img *image.RGBA, x, y, w, h int, c color.RGBA) {
	r := image.Rect(x, y, x+w, y+h).Intersect(img.Bounds())
	for yy := r.Min.Y; yy < r.Max.Y; yy++ {
		for xx := r.Min.X; xx < r.Max.X; xx++ {
			img.SetRGBA(xx, yy, c)
		}
	}
}

// pen draws the chart's text: in the bitmap font, or in the pictures
// ChartOptions.Text makes.
type pen struct {
	scale int
	text  func(string, color.RGBA) image.Image
	cache map[penKey]image.Image
	h     int
}

type penKey struct {
	s string
	c color.RGBA
}

func newPen(opt ChartOptions, scale int) *pen {
	p := &pen{scale: scale, text: opt.Text, h: 7 * scale}
	if p.text != nil {
		p.cache = map[penKey]image.Image{}
		if h := p.picture("0", color.RGBA{A: 255}).Bounds().Dy(); h > 0 {
			p.h = h
		}
	}
	return p
}

func (p *pen) picture(s string, c color.RGBA) image.Image {
	k := penKey{s, c}
	img, ok := p.cache[k]
	if !ok {
		img = p.text(s, c)
		if img == nil {
			img = image.NewRGBA(image.Rect(0, 0, 0, 0))
		}
		p.cache[k] = img
	}
	return img
}

// height is the height of a line of text.
func (p *pen) height() int { return p.h }

// width is the width of s drawn.
func (p *pen) width(s string) int {
	if p.text == nil {
		return textWidth(s, p.scale)
	}
	// The width does not depend on the colour: any drawn one will do.
	for k, img := range p.cache {
		if k.s == s {
			return img.Bounds().Dx()
		}
	}
	return p.picture(s, color.RGBA{A: 255}).Bounds().Dx()
}

// draw draws s with its top-left corner at (x, y).
func (p *pen) draw(img *image.RGBA, x, y int, s string, c color.RGBA) {
	if p.text == nil {
		drawText(img, x, y, s, p.scale, c)
		return
	}
	pic := p.picture(s, c)
	b := pic.Bounds()
	draw.Draw(img, image.Rect(x, y, x+b.Dx(), y+b.Dy()), pic, b.Min, draw.Over)
}
