package markdown

import (
	"image/color"
	"net/url"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// ColorNameCode is the theme colour for inline code. A theme that does not
// know it (it returns a transparent colour) gets the foreground colour.
const ColorNameCode fyne.ThemeColorName = "churon-code"

var md = goldmark.New(goldmark.WithExtensions(extension.GFM))

// Options configure a View.
type Options struct {
	// OnCopy receives a code block's text when its copy button is tapped.
	OnCopy func(string)
	// OnLink opens a link; when nil the app's OpenURL is used.
	OnLink func(*url.URL)
}

// renderer turns one parsed document into Fyne objects.
type renderer struct {
	src      []byte
	opt      *Options
	codeName fyne.ThemeColorName // ColorNameCode, or foreground when the theme lacks it
}

func newRenderer(src []byte, opt *Options) *renderer {
	r := &renderer{src: src, opt: opt, codeName: ColorNameCode}
	if app := fyne.CurrentApp(); app != nil {
		s := app.Settings()
		c := s.Theme().Color(ColorNameCode, s.ThemeVariant())
		if c == nil {
			r.codeName = theme.ColorNameForeground
		} else if _, _, _, a := c.RGBA(); a == 0 {
			r.codeName = theme.ColorNameForeground
		}
	}
	return r
}

// block renders one block-level node.
func (r *renderer) block(n ast.Node) fyne.CanvasObject {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return r.richText(r.inlines(n, widget.RichTextStyleInline))
	case *ast.Heading:
		return r.richText(r.heading(n))
	case *ast.List:
		return r.list(n)
	case *ast.Blockquote:
		return r.quote(n)
	case *ast.FencedCodeBlock:
		return newCodeBlock(string(n.Language(r.src)), r.lines(n), r.opt.OnCopy)
	case *ast.CodeBlock:
		return newCodeBlock("", r.lines(n), r.opt.OnCopy)
	case *east.Table:
		return r.table(n)
	case *ast.ThematicBreak:
		return widget.NewSeparator()
	case *ast.HTMLBlock:
		return r.richText([]widget.RichTextSegment{&widget.TextSegment{Style: widget.RichTextStyleInline, Text: strings.TrimRight(r.lines(n), "\n")}})
	default:
		// Anything else (footnotes, a definition list) shows as its text.
		if t := r.plain(n); t != "" {
			return r.richText([]widget.RichTextSegment{&widget.TextSegment{Style: widget.RichTextStyleInline, Text: t}})
		}
		return nil
	}
}

func (r *renderer) richText(segs []widget.RichTextSegment) *widget.RichText {
	rt := widget.NewRichText(segs...)
	rt.Wrapping = fyne.TextWrapWord
	return rt
}

func (r *renderer) heading(n *ast.Heading) []widget.RichTextSegment {
	style := widget.RichTextStyleParagraph
	switch n.Level {
	case 1:
		style = widget.RichTextStyleHeading
	case 2:
		style = widget.RichTextStyleSubHeading
	default:
		style.TextStyle.Bold = true
	}
	return []widget.RichTextSegment{&widget.TextSegment{Style: style, Text: r.plain(n)}}
}

// inlines renders the inline children of n in the given base style.
func (r *renderer) inlines(n ast.Node, base widget.RichTextStyle) []widget.RichTextSegment {
	var out []widget.RichTextSegment
	r.appendInlines(&out, n, base)
	return splitLong(out)
}

// wrapChunk is the longest text segment splitLong leaves whole.
const wrapChunk = 240

// splitLong cuts long text segments into pieces of about wrapChunk bytes.
// Fyne wraps a segment by measuring the whole rest of it for every line it
// makes, so a long paragraph costs about the square of its length to
// wrap — hundreds of milliseconds for a long answer, at every streamed
// frame; pieces bound what each measure shapes, and the pieces that no
// longer change measure the same strings again, which Fyne keeps.
//
// Each piece after the first starts with a zero-width space and the
// space it was cut at, so that the lines come out as they would whole: a
// piece whose first word does not fit in the rest of a line leaves the
// zero-width space there (it always fits) and breaks at the space after
// it. (Starting at the space alone, a line with less room left than a
// space's width makes Fyne 2.7 put one character on each line after.)
func splitLong(segs []widget.RichTextSegment) []widget.RichTextSegment {
	var out []widget.RichTextSegment
	for _, s := range segs {
		ts, ok := s.(*widget.TextSegment)
		if !ok || len(ts.Text) <= wrapChunk {
			out = append(out, s)
			continue
		}
		text := ts.Text
		piece := ts.Style
		piece.Inline = true
		lead := ""
		// Every piece longer than a line (the last too: Fyne 2.7 adds
		// a line to a piece that starts a line and fits in one).
		for len(text) > 2*wrapChunk {
			i := strings.LastIndexByte(text[:wrapChunk], ' ')
			if i <= 0 {
				break // one long word: left whole
			}
			out = append(out, &widget.TextSegment{Style: piece, Text: lead + text[:i]})
			text, lead = text[i:], zeroWidthSpace
		}
		out = append(out, &widget.TextSegment{Style: ts.Style, Text: lead + text})
	}
	return out
}

const zeroWidthSpace = "\u200b"

func (r *renderer) appendInlines(out *[]widget.RichTextSegment, n ast.Node, style widget.RichTextStyle) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inline(out, c, style)
	}
}

func (r *renderer) inline(out *[]widget.RichTextSegment, n ast.Node, style widget.RichTextStyle) {
	add := func(s string, st widget.RichTextStyle) {
		if s == "" {
			return
		}
		// Merge with the previous segment of the same style: fewer
		// segments lay out faster and wrap better.
		if k := len(*out); k > 0 {
			if prev, ok := (*out)[k-1].(*widget.TextSegment); ok && prev.Style == st {
				prev.Text += s
				return
			}
		}
		*out = append(*out, &widget.TextSegment{Style: st, Text: s})
	}
	switch n := n.(type) {
	case *ast.Text:
		add(string(n.Value(r.src)), style)
		if n.HardLineBreak() {
			*out = append(*out, &widget.TextSegment{Style: widget.RichTextStyleParagraph})
		} else if n.SoftLineBreak() {
			add(" ", style)
		}
	case *ast.String:
		add(string(n.Value), style)
	case *ast.Emphasis:
		st := style
		if n.Level >= 2 {
			st.TextStyle.Bold = true
		} else {
			st.TextStyle.Italic = true
		}
		r.appendInlines(out, n, st)
	case *ast.CodeSpan:
		st := style
		st.TextStyle.Monospace = true
		st.ColorName = r.codeName
		add(r.plain(n), st)
	case *ast.Link:
		r.link(out, r.plain(n), string(n.Destination))
	case *ast.AutoLink:
		u := string(n.URL(r.src))
		label := string(n.Label(r.src))
		if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(u, "mailto:") {
			u = "mailto:" + u
		}
		r.link(out, label, u)
	case *ast.Image:
		st := style
		st.TextStyle.Italic = true
		alt := r.plain(n)
		if alt == "" {
			alt = string(n.Destination)
		}
		// Remote images are not fetched: a chat must not phone home.
		add("["+alt+"]", st)
	case *east.Strikethrough:
		st := style
		st.ColorName = theme.ColorNamePlaceHolder
		r.appendInlines(out, n, st)
	case *east.TaskCheckBox:
		// Drawn as the list item's bullet.
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			add(string(seg.Value(r.src)), style)
		}
	default:
		r.appendInlines(out, n, style)
	}
}

func (r *renderer) link(out *[]widget.RichTextSegment, label, dest string) {
	u, err := url.Parse(dest)
	if err != nil || label == "" {
		if label == "" {
			label = dest
		}
		*out = append(*out, &widget.TextSegment{Style: widget.RichTextStyleInline, Text: label})
		return
	}
	seg := &widget.HyperlinkSegment{Text: label, URL: u}
	if r.opt.OnLink != nil {
		open := r.opt.OnLink
		seg.OnTapped = func() { open(u) }
	}
	*out = append(*out, seg)
}

// plain is the text of n's inline content without formatting.
func (r *renderer) plain(n ast.Node) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Value(r.src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.AutoLink:
			b.Write(c.Label(r.src))
		}
		return ast.WalkContinue, nil
	})
	return strings.TrimSpace(b.String())
}

// lines is the raw content of a leaf block (a code block's code).
func (r *renderer) lines(n ast.Node) string {
	var b strings.Builder
	ls := n.Lines()
	for i := 0; i < ls.Len(); i++ {
		s := ls.At(i)
		b.Write(s.Value(r.src))
	}
	return b.String()
}

// stack renders the block children of n one under another.
func (r *renderer) stack(n ast.Node, gap float32) *fyne.Container {
	var objs []fyne.CanvasObject
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if o := r.block(c); o != nil {
			objs = append(objs, o)
		}
	}
	return container.New(&column{gap: gap}, objs...)
}

func (r *renderer) list(n *ast.List) fyne.CanvasObject {
	ordered := n.IsOrdered()
	num := n.Start
	var rows []fyne.CanvasObject
	bulletWidth := float32(0)
	var bullets []fyne.CanvasObject
	for item := n.FirstChild(); item != nil; item = item.NextSibling() {
		var bullet fyne.CanvasObject
		if cb := taskBox(item); cb != nil {
			icon := theme.CheckButtonIcon()
			if cb.IsChecked {
				icon = theme.CheckButtonCheckedIcon()
			}
			bullet = newBullet(widget.NewIcon(icon))
		} else {
			label := "•"
			if ordered {
				label = strconv.Itoa(num) + "."
				num++
			}
			rt := widget.NewRichText(&widget.TextSegment{Style: widget.RichTextStyleInline, Text: label})
			bullet = rt
		}
		if w := bullet.MinSize().Width; w > bulletWidth {
			bulletWidth = w
		}
		bullets = append(bullets, bullet)
		// A loose list (blank lines between items) keeps paragraph gaps.
		gap := -theme.InnerPadding()
		if !n.IsTight {
			gap = 0
		}
		rows = append(rows, r.stack(item, gap))
	}
	var out []fyne.CanvasObject
	for i, row := range rows {
		out = append(out, container.New(&hang{width: bulletWidth}, bullets[i], row))
	}
	gap := -theme.InnerPadding()
	if !n.IsTight {
		gap = 0
	}
	return container.New(&column{gap: gap}, out...)
}

// taskBox finds a GFM task list check box at the start of a list item.
func taskBox(item ast.Node) *east.TaskCheckBox {
	first := item.FirstChild()
	if first == nil {
		return nil
	}
	if cb, ok := first.FirstChild().(*east.TaskCheckBox); ok {
		return cb
	}
	return nil
}

func (r *renderer) quote(n *ast.Blockquote) fyne.CanvasObject {
	bar := NewRect(theme.ColorNamePrimary, "", 0)
	bar.SetMinSize(fyne.NewSize(3, 0))
	body := r.stack(n, 0)
	return container.NewBorder(nil, nil, container.NewPadded(bar), nil, body)
}

func (r *renderer) table(n *east.Table) fyne.CanvasObject {
	var rows [][]fyne.CanvasObject
	cols := 0
	for row := n.FirstChild(); row != nil; row = row.NextSibling() {
		_, header := row.(*east.TableHeader)
		var cells []fyne.CanvasObject
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			style := widget.RichTextStyleInline
			if header {
				style.TextStyle.Bold = true
			}
			if tc, ok := cell.(*east.TableCell); ok {
				switch tc.Alignment {
				case east.AlignRight:
					style.Alignment = fyne.TextAlignTrailing
				case east.AlignCenter:
					style.Alignment = fyne.TextAlignCenter
				}
			}
			segs := r.inlines(cell, style)
			for _, s := range segs {
				if ts, ok := s.(*widget.TextSegment); ok {
					ts.Style.Alignment = style.Alignment
				}
			}
			rt := r.richText(segs)
			fill := fyne.ThemeColorName("")
			if header {
				fill = theme.ColorNameHeaderBackground
			}
			bg := NewRect(fill, theme.ColorNameSeparator, 0)
			cells = append(cells, container.NewStack(bg, rt))
		}
		cols = max(cols, len(cells))
		rows = append(rows, cells)
	}
	if cols == 0 {
		return nil
	}
	var objs []fyne.CanvasObject
	for _, cells := range rows {
		for len(cells) < cols {
			cells = append(cells, canvas.NewRectangle(color.Transparent))
		}
		objs = append(objs, cells...)
	}
	return container.New(&grid{cols: cols}, objs...)
}

// parse parses src with the package's goldmark set-up, and says how many
// link reference definitions it holds.
func parse(src []byte) (ast.Node, int) {
	pc := parser.NewContext()
	doc := md.Parser().Parse(text.NewReader(src), parser.WithContext(pc))
	return doc, len(pc.References())
}
