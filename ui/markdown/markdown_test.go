package markdown

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// dump describes what a View shows, object by object, so two views can be
// compared and tests can say what they expect in plain words.
func dump(o fyne.CanvasObject) string {
	var b strings.Builder
	var walk func(o fyne.CanvasObject, depth int)
	walk = func(o fyne.CanvasObject, depth int) {
		ind := strings.Repeat("  ", depth)
		switch o := o.(type) {
		case *widget.RichText:
			b.WriteString(ind + "text")
			for _, s := range o.Segments {
				switch s := s.(type) {
				case *widget.TextSegment:
					fmt.Fprintf(&b, " [%s%s]", styleName(s.Style), s.Text)
				case *widget.HyperlinkSegment:
					fmt.Fprintf(&b, " [link %s->%s]", s.Text, s.URL)
				default:
					fmt.Fprintf(&b, " [%T]", s)
				}
			}
			b.WriteString("\n")
		case *CodeBlock:
			fmt.Fprintf(&b, "%scode(%s) %q\n", ind, o.Language(), o.Code())
		case *widget.Separator:
			b.WriteString(ind + "rule\n")
		case *widget.Icon:
			fmt.Fprintf(&b, "%sicon %s\n", ind, o.Resource.Name())
		case *Rect:
		case *fyne.Container:
			switch l := o.Layout.(type) {
			case *grid:
				fmt.Fprintf(&b, "%stable %d cols\n", ind, l.cols)
			case *hang:
				b.WriteString(ind + "item\n")
			}
			for _, c := range o.Objects {
				walk(c, depth+1)
			}
		case *View:
			for _, c := range o.Blocks() {
				walk(c, depth)
			}
		default:
			fmt.Fprintf(&b, "%s%T\n", ind, o)
		}
	}
	walk(o, 0)
	return b.String()
}

func styleName(s widget.RichTextStyle) string {
	var p []string
	switch s.SizeName {
	case "headingText":
		p = append(p, "h1")
	case "subHeadingText":
		p = append(p, "h2")
	}
	if s.TextStyle.Bold {
		p = append(p, "b")
	}
	if s.TextStyle.Italic {
		p = append(p, "i")
	}
	if s.TextStyle.Monospace {
		p = append(p, "mono")
	}
	if len(p) == 0 {
		return ""
	}
	return strings.Join(p, ",") + " "
}

func TestRender(t *testing.T) {
	test.NewTempApp(t)
	cases := []struct {
		name, src string
		want      []string // lines that must appear in the dump, in order
	}{
		{"heading and paragraph", "# Title\n\nSome *soft* and **strong** text\nwith `code`.",
			[]string{"text [h1,b Title]", "text [Some ] [i soft] [ and ] [b strong] [ text with ] [mono code] [.]"}},
		{"levels", "## Two\n### Three", []string{"text [h2,b Two]", "text [b Three]"}},
		{"bullet list", "- one\n- two\n  - nested",
			[]string{"item", "text [•]", "text [one]", "item", "text [two]", "item", "text [nested]"}},
		{"ordered list from 3", "3. c\n4. d", []string{"text [3.]", "text [c]", "text [4.]", "text [d]"}},
		{"task list", "- [x] done\n- [ ] todo", []string{"icon", "text [done]", "icon", "text [todo]"}},
		{"fenced code", "```go\nx := 1\ny := 2\n```", []string{`code(go) "x := 1\ny := 2"`}},
		{"indented code", "    plain\n    code", []string{`code() "plain\ncode"`}},
		{"unclosed fence while streaming", "Look:\n\n```python\nprint(1)", []string{"text [Look:]", `code(python) "print(1)"`}},
		{"table", "| a | b |\n|---|--:|\n| 1 | **2** |", []string{"table 2 cols", "text [b a]", "text [b b]", "text [1]", "text [b 2]"}},
		{"link and autolink", "[Go](https://go.dev) and https://example.com/x",
			[]string{"text [link Go->https://go.dev] [ and ] [link https://example.com/x->https://example.com/x]"}},
		{"quote", "> quoted *words*", []string{"text [quoted ] [i words]"}},
		{"rule", "a\n\n---\n\nb", []string{"text [a]", "rule", "text [b]"}},
		{"hard break", "line one  \nline two", []string{"text [line one] [] [line two]"}},
		{"korean", "# 안녕하세요\n\n**한국어** 문장입니다.", []string{"text [h1,b 안녕하세요]", "text [b 한국어] [ 문장입니다.]"}},
		{"image is not fetched", "![a cat](https://example.com/cat.png)", []string{"text [i [a cat]]"}},
		{"strikethrough", "~~old~~ new", []string{"text [old] [ new]"}},
		{"raw html", "a <br> b", []string{"text [a <br> b]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := NewView(Options{})
			v.SetText(c.src)
			got := dump(v)
			rest := got
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("missing %q (in order) in\n%s", w, got)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

func TestEmptyAndBlank(t *testing.T) {
	test.NewTempApp(t)
	for _, src := range []string{"", " ", "\n\n\n", "```", "|", "- ", "#", "> "} {
		v := NewView(Options{})
		v.SetText(src)
		w := test.NewWindow(v)
		w.Resize(fyne.NewSize(300, 200))
		w.Canvas().Capture() // lays out and paints: must not panic
		w.Close()
	}
}

func TestCopyCode(t *testing.T) {
	test.NewTempApp(t)
	var copied string
	v := NewView(Options{OnCopy: func(s string) { copied = s }})
	v.SetText("Run:\n\n```sh\ngo test ./...\n```\n")
	var cb *CodeBlock
	for _, o := range v.Blocks() {
		if c, ok := o.(*CodeBlock); ok {
			cb = c
		}
	}
	if cb == nil {
		t.Fatalf("no code block in\n%s", dump(v))
	}
	w := test.NewWindow(v)
	defer w.Close()
	test.Tap(cb.CopyButton())
	if copied != "go test ./..." {
		t.Errorf("copied %q, want %q", copied, "go test ./...")
	}
}

func TestLinkHandler(t *testing.T) {
	test.NewTempApp(t)
	var opened *url.URL
	v := NewView(Options{OnLink: func(u *url.URL) { opened = u }})
	v.SetText("see [docs](https://example.com/docs)")
	rt := v.Blocks()[0].(*widget.RichText)
	for _, s := range rt.Segments {
		if h, ok := s.(*widget.HyperlinkSegment); ok {
			h.OnTapped()
		}
	}
	if opened == nil || opened.String() != "https://example.com/docs" {
		t.Errorf("opened %v, want https://example.com/docs", opened)
	}
}

// TestStreaming feeds a document a few bytes at a time, as a model would,
// and checks after every step that the incrementally updated view shows
// exactly what a fresh render of the same text shows.
func TestStreaming(t *testing.T) {
	test.NewTempApp(t)
	doc := "# Plan\n\nFirst a paragraph with *emphasis*\nthat wraps.\n\n" +
		"1. one\n2. two with `code`\n   - nested\n\n" +
		"```go\nfunc main() {\n\tprintln(\"hi\")\n}\n```\n\n" +
		"| k | v |\n|---|---|\n| a | 1 |\n| b | 2 |\n\n" +
		"Setext heading\n---\n\n> a quote\n> continues\n\n한국어 끝."
	v := NewView(Options{})
	for i := 0; i <= len(doc); i += 3 {
		prefix := doc[:i]
		v.SetText(prefix)
		fresh := NewView(Options{})
		fresh.SetText(prefix)
		if got, want := dump(v), dump(fresh); got != want {
			t.Fatalf("after %d bytes %q:\nincremental:\n%s\nfresh:\n%s", i, prefix, got, want)
		}
	}
}

func TestStreamingReusesBlocks(t *testing.T) {
	test.NewTempApp(t)
	v := NewView(Options{})
	v.SetText("# Title\n\nfirst para")
	h, p := v.Blocks()[0], v.Blocks()[1]
	v.SetText("# Title\n\nfirst paragraph grows")
	if v.Blocks()[0] != h {
		t.Error("the unchanged heading was rebuilt")
	}
	if v.Blocks()[1] != p {
		t.Error("the growing paragraph was rebuilt instead of updated in place")
	}
	v.SetText("# Title\n\nfirst paragraph grows\n\n```go\nx")
	cb, ok := v.Blocks()[2].(*CodeBlock)
	if !ok {
		t.Fatalf("third block is %T, want a code block", v.Blocks()[2])
	}
	v.SetText("# Title\n\nfirst paragraph grows\n\n```go\nx := 1\n")
	if v.Blocks()[2] != cb || cb.Code() != "x := 1" {
		t.Errorf("code block rebuilt or not updated: same=%v code=%q", v.Blocks()[2] == cb, cb.Code())
	}
	if v.Blocks()[0] != h || v.Blocks()[1] != p {
		t.Error("earlier blocks were rebuilt when a code block grew")
	}
}

// TestAnotherTextReusesBlocks: a View given a text of its own (a chat's
// widgets serving another message) shows what a fresh View shows, with
// the paragraphs, headings and code blocks it had serving the new ones
// wherever they stand.
func TestAnotherTextReusesBlocks(t *testing.T) {
	test.NewTempApp(t)
	cases := []struct{ from, to string }{
		{"# Title\n\nfirst para\n\n- a list", "another para\n\n## Other\n\nand a last one"},
		{"para\n\n```go\nx := 1\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |", "| k |\n|---|\n| v |\n\n```go\ny\n```\n\nend"},
		{"a\n\nb\n\nc\n\nd", "> quote\n\n1. one"},
		{"> quote\n\n1. one", "a\n\nb\n\nc\n\nd"},
	}
	for _, c := range cases {
		v := NewView(Options{})
		v.SetText(c.from)
		had := map[fyne.CanvasObject]bool{}
		for _, b := range v.Blocks() {
			had[b] = true
		}
		v.SetText(c.to)
		fresh := NewView(Options{})
		fresh.SetText(c.to)
		if got, want := dump(v), dump(fresh); got != want {
			t.Fatalf("%q after %q:\n%s\nfresh:\n%s", c.to, c.from, got, want)
		}
		// Every paragraph, heading and code block of the new text that
		// an old one of its kind could serve did.
		kept, could := 0, 0
		spare := map[string]int{}
		for _, b := range blockKinds(c.from) {
			spare[b]++
		}
		for i, b := range blockKinds(c.to) {
			if b == "text" || b == "code" {
				if spare[b] > 0 {
					spare[b]--
					could++
					if had[v.Blocks()[i]] {
						kept++
					}
				}
			}
		}
		if kept != could {
			t.Errorf("%q after %q: %d of the %d blocks that old ones could serve were made anew", c.to, c.from, could-kept, could)
		}
	}
}

// blockKinds is what kind of widget each block of src is shown
// with: "text" (a RichText), "code", or "other".
func blockKinds(src string) []string {
	v := NewView(Options{})
	v.SetText(src)
	var out []string
	for _, b := range v.Blocks() {
		switch b.(type) {
		case *widget.RichText:
			out = append(out, "text")
		case *CodeBlock:
			out = append(out, "code")
		default:
			out = append(out, "other")
		}
	}
	return out
}

func BenchmarkStreamingUpdate(b *testing.B) {
	test.NewTempApp(b)
	var sb strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&sb, "Paragraph %d with some **bold** text and `code`.\n\n", i)
	}
	base := sb.String()
	v := NewView(Options{})
	v.SetText(base)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v.SetText(base + "growing tail " + strings.Repeat("x", i%50))
	}
}
