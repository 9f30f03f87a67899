package markdown

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
	"github.com/yuin/goldmark/ast"
)

// View shows one Markdown document. Use it from the Fyne goroutine only.
type View struct {
	widget.BaseWidget
	opt    Options
	text   string
	blocks []cached
	box    *fyne.Container
}

// cached is one rendered top-level block and what it was made from.
type cached struct {
	kind ast.NodeKind
	src  string // the block's source, trailing blank lines trimmed
	obj  fyne.CanvasObject
}

// NewView makes an empty View.
func NewView(opt Options) *View {
	v := &View{opt: opt, box: container.New(&column{gap: 0})}
	v.ExtendBaseWidget(v)
	return v
}

// Text is the Markdown source shown.
func (v *View) Text() string { return v.text }

// SetText shows src, rebuilding only the blocks that changed since the
// last call.
func (v *View) SetText(src string) {
	if src == v.text && v.blocks != nil {
		return
	}
	v.text = src
	b := []byte(src)
	doc, nrefs := parse(b)
	r := newRenderer(b, &v.opt)

	var nodes []ast.Node
	for c := doc.FirstChild(); c != nil; c = c.NextSibling() {
		nodes = append(nodes, c)
	}
	// Link reference definitions can change how earlier blocks render
	// without changing their text: rebuild everything when there are any.
	reuse := nrefs == 0

	next := make([]cached, 0, len(nodes))
	changed := len(nodes) != len(v.blocks)
	// The old blocks no new one took at its own place: a block of their
	// kind that cannot be updated in its place takes one of them, so that
	// a View given another text (a chat's widgets serving another
	// message) makes few new widgets.
	var spares map[ast.NodeKind][]fyne.CanvasObject
	for i, n := range nodes {
		if i >= len(v.blocks) {
			break
		}
		if old := v.blocks[i]; old.kind != n.Kind() {
			if spares == nil {
				spares = map[ast.NodeKind][]fyne.CanvasObject{}
			}
			spares[old.kind] = append(spares[old.kind], old.obj)
		}
	}
	for _, old := range v.blocks[min(len(nodes), len(v.blocks)):] {
		if spares == nil {
			spares = map[ast.NodeKind][]fyne.CanvasObject{}
		}
		spares[old.kind] = append(spares[old.kind], old.obj)
	}
	for i, n := range nodes {
		start := n.Pos()
		end := len(b)
		if i+1 < len(nodes) {
			end = nodes[i+1].Pos()
		}
		key := ""
		if start >= 0 && end >= start && end <= len(b) {
			key = strings.TrimRight(src[start:end], " \t\r\n")
		}
		if reuse && i < len(v.blocks) && key != "" {
			old := v.blocks[i]
			if old.kind == n.Kind() && old.src == key {
				next = append(next, old)
				continue
			}
			// The block that is growing: update it in place where the
			// widget allows, which keeps its size and saves allocations.
			if old.kind == n.Kind() && update(old.obj, n, r) {
				next = append(next, cached{n.Kind(), key, old.obj})
				continue
			}
		}
		if obj := takeSpare(spares, n, r); obj != nil {
			changed = true
			next = append(next, cached{n.Kind(), key, obj})
			continue
		}
		obj := r.block(n)
		if obj == nil {
			continue
		}
		changed = true
		next = append(next, cached{n.Kind(), key, obj})
	}
	v.blocks = next
	objs := make([]fyne.CanvasObject, len(next))
	for i, c := range next {
		objs[i] = c.obj
	}
	if changed || len(objs) != len(v.box.Objects) {
		v.box.Objects = objs
	}
	// Lay the blocks out again, without refreshing them: the container's
	// Refresh would refresh every block, and a RichText wraps all of its
	// text again on Refresh — every paragraph of a long answer at every
	// streamed frame. The block that grew refreshed itself (update); new
	// blocks are wrapped when the layout first gives them their width.
	v.box.Layout.Layout(v.box.Objects, v.box.Size())
	canvas.Refresh(v.box)
}

// takeSpare is a spare block of n's kind updated to show n, nil when
// none can be.
func takeSpare(spares map[ast.NodeKind][]fyne.CanvasObject, n ast.Node, r *renderer) fyne.CanvasObject {
	objs := spares[n.Kind()]
	for i, obj := range objs {
		if update(obj, n, r) {
			spares[n.Kind()] = append(objs[:i], objs[i+1:]...)
			return obj
		}
	}
	return nil
}

// update changes obj to show n when obj is of a kind that can be updated
// in place: a paragraph's or a heading's RichText, or a code block.
func update(obj fyne.CanvasObject, n ast.Node, r *renderer) bool {
	switch n := n.(type) {
	case *ast.Paragraph:
		rt, ok := obj.(*widget.RichText)
		if !ok {
			return false
		}
		rt.Segments = r.inlines(n, widget.RichTextStyleInline)
		rt.Refresh()
		return true
	case *ast.Heading:
		rt, ok := obj.(*widget.RichText)
		if !ok {
			return false
		}
		rt.Segments = r.heading(n)
		rt.Refresh()
		return true
	case *ast.FencedCodeBlock:
		cb, ok := obj.(*CodeBlock)
		if !ok || cb.lang != string(n.Language(r.src)) {
			return false
		}
		cb.setCode(r.lines(n))
		return true
	}
	return false
}

// Blocks are the objects shown, one per top-level block (for tests).
func (v *View) Blocks() []fyne.CanvasObject { return v.box.Objects }

func (v *View) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(v.box)
}
