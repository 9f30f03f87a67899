package export

import (
	"bufio"
	"bytes"
	"fmt"
	"html"
	"io"
	"strings"
	"time"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"

	"github.com/churon/churon/app/store"
)

// md renders answers: CommonMark with GitHub's tables, task lists,
// strikethrough and autolinks. It never passes raw HTML through (no
// html.WithUnsafe), and safeHTML below replaces the renderers of every
// node that could carry markup, a URL or a request.
var md = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithRendererOptions(
		renderer.WithNodeRenderers(util.Prioritized(safeHTML{}, 100)),
		// Column alignment as align="…", not style="…": the page has no
		// style attributes at all, which is simpler to check.
		extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute),
	),
)

// safeHTML renders the nodes whose default rendering is unsafe or unfit
// for a self-contained page. Its priority (100) is ahead of goldmark's own
// HTML renderer (1000), so these functions replace the defaults.
type safeHTML struct{}

func (safeHTML) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, renderRawHTML)
	reg.Register(ast.KindHTMLBlock, renderHTMLBlock)
	reg.Register(ast.KindLink, renderLink)
	reg.Register(ast.KindAutoLink, renderAutoLink)
	reg.Register(ast.KindImage, renderImage)
	reg.Register(ast.KindFencedCodeBlock, renderCode)
	reg.Register(ast.KindCodeBlock, renderCode)
}

// renderRawHTML shows inline HTML (<img onerror=…>, <b>) as the text the
// model wrote, escaped: the reader sees it, the browser does not run it.
func renderRawHTML(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		n := node.(*ast.RawHTML)
		for i := range n.Segments.Len() {
			seg := n.Segments.At(i)
			w.WriteString(html.EscapeString(string(seg.Value(src))))
		}
	}
	return ast.WalkSkipChildren, nil
}

// renderHTMLBlock shows a block of HTML (<script>…</script> on its own
// lines) as escaped text, line breaks kept.
func renderHTMLBlock(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.HTMLBlock)
	var b strings.Builder
	for i := range n.Lines().Len() {
		seg := n.Lines().At(i)
		b.Write(seg.Value(src))
	}
	if n.HasClosure() {
		b.Write(n.ClosureLine.Value(src))
	}
	w.WriteString(`<p class="raw">`)
	w.WriteString(html.EscapeString(strings.TrimRight(b.String(), "\n")))
	w.WriteString("</p>\n")
	return ast.WalkSkipChildren, nil
}

// safeURL returns the href to write for a link target, or "" when the
// link must not be one: only http, https and mailto, and targets without
// a scheme (#fragment, relative paths), are kept. The target is read the
// way a browser reads it: character references resolved (goldmark keeps
// them in the destination), tabs and newlines removed anywhere, spaces and
// control characters trimmed at the ends — so "java&#9;script:" and
// " JavaScript:" are javascript: and are dropped. Anything before the
// first ':' that is not one of the three schemes drops the link, even
// when a browser would read it as a relative path.
func safeURL(dest []byte) string {
	s := html.UnescapeString(string(dest))
	s = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f })
	if s == "" {
		return ""
	}
	if i := strings.IndexAny(s, ":/?#"); i >= 0 && s[i] == ':' {
		switch strings.ToLower(s[:i]) {
		case "http", "https", "mailto":
		default:
			return ""
		}
	}
	return string(util.URLEscape([]byte(s), false))
}

// writeLinkStart opens a link; class "auto" marks a link whose text is its
// URL (printing then does not repeat the URL after it).
func writeLinkStart(w util.BufWriter, href string, title []byte, class string) {
	w.WriteString(`<a `)
	if class != "" {
		w.WriteString(`class="` + class + `" `)
	}
	w.WriteString(`href="`)
	w.WriteString(html.EscapeString(href))
	w.WriteString(`"`)
	if len(title) > 0 {
		w.WriteString(` title="`)
		w.WriteString(html.EscapeString(string(title)))
		w.WriteString(`"`)
	}
	w.WriteString(` rel="noopener noreferrer nofollow">`)
}

// renderLink writes a link, or only its text when the target is unsafe.
func renderLink(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	href := safeURL(n.Destination)
	if href == "" {
		if entering {
			w.WriteString(`<span class="link">`)
		} else {
			w.WriteString(`</span>`)
		}
		return ast.WalkContinue, nil
	}
	if entering {
		writeLinkStart(w, href, n.Title, "")
	} else {
		w.WriteString("</a>")
	}
	return ast.WalkContinue, nil
}

func renderAutoLink(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.AutoLink)
	label := string(n.Label(src))
	dest := n.URL(src)
	if n.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(dest), []byte("mailto:")) {
		dest = append([]byte("mailto:"), dest...)
	}
	href := safeURL(dest)
	if href == "" {
		w.WriteString(html.EscapeString(label))
		return ast.WalkContinue, nil
	}
	writeLinkStart(w, href, nil, "auto")
	w.WriteString(html.EscapeString(label))
	w.WriteString("</a>")
	return ast.WalkContinue, nil
}

// renderImage writes an image as a link to it: a self-contained page
// makes no requests, and an image from the web would be one (and would
// tell its server the page was opened).
func renderImage(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Image)
	href := safeURL(n.Destination)
	if entering {
		if href != "" {
			writeLinkStart(w, href, n.Title, "")
		}
		w.WriteString(`<span class="img">image: `)
	} else {
		w.WriteString(`</span>`)
		if href != "" {
			w.WriteString("</a>")
		}
	}
	return ast.WalkContinue, nil
}

// renderCode writes a code block with its language's colours (highlight.go)
// and a label naming the language.
func renderCode(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	var info string
	if fc, ok := node.(*ast.FencedCodeBlock); ok && fc.Info != nil {
		info = string(fc.Language(src))
	}
	var code strings.Builder
	lines := node.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		code.Write(seg.Value(src))
	}
	var b strings.Builder
	b.WriteString(`<div class="code">`)
	if info != "" {
		b.WriteString(`<div class="lang">`)
		b.WriteString(html.EscapeString(info))
		b.WriteString(`</div>`)
	}
	b.WriteString(`<pre><code`)
	if cls := classToken(langName(info)); cls != "" {
		b.WriteString(` class="language-`)
		b.WriteString(cls)
		b.WriteString(`"`)
	}
	b.WriteString(`>`)
	highlight(&b, info, code.String())
	b.WriteString("</code></pre></div>\n")
	w.WriteString(b.String())
	return ast.WalkSkipChildren, nil
}

// classToken keeps the characters of a language name that are safe and
// meaningful in a class attribute.
func classToken(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '+') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// renderMarkdown renders an answer's Markdown to safe HTML.
func renderMarkdown(text string) (string, error) {
	var buf bytes.Buffer
	if err := md.Convert([]byte(text), &buf); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// WriteHTML writes one chat as a self-contained HTML page: inline CSS
// with light and dark schemes and print styles, answers rendered from
// Markdown with coloured code, everyone else's text as written. It has no
// script and makes no requests (see the package's Safety section).
func WriteHTML(w io.Writer, chat Chat, opt Options) error {
	bw := bufio.NewWriter(w)
	c := chat.Conversation
	t := oneLine(title(c))
	writeHTMLHead(bw, t, docLang(chat))
	fmt.Fprintf(bw, "<header>\n<h1>%s</h1>\n<dl class=\"meta\">\n", html.EscapeString(t))
	for _, it := range headerItems(chat, opt) {
		fmt.Fprintf(bw, "<div><dt>%s</dt><dd>%s</dd></div>\n", it.label, html.EscapeString(it.value))
	}
	bw.WriteString("</dl>\n")
	if c.SystemPrompt != "" {
		fmt.Fprintf(bw, "<section class=\"system\"><h2>System prompt</h2><div class=\"plain\">%s</div></section>\n",
			html.EscapeString(c.SystemPrompt))
	}
	bw.WriteString("</header>\n<main>\n")
	for i, m := range chat.Messages {
		role := classToken(string(m.Role))
		fmt.Fprintf(bw, "<article class=\"msg %s\" id=\"m%d\">\n<div class=\"who\"><span class=\"role\">%s</span>",
			role, i+1, html.EscapeString(roleName(m)))
		if m.Role == store.RoleAssistant && m.Model != "" {
			fmt.Fprintf(bw, "<span class=\"model\">%s</span>", html.EscapeString(modelLabel(m.Model, m.Quant)))
		}
		if !m.Created.IsZero() {
			fmt.Fprintf(bw, "<time datetime=\"%s\">%s</time>", m.Created.UTC().Format(time.RFC3339), html.EscapeString(showTime(m.Created, opt)))
		}
		if v := versionNote(m); v != "" {
			fmt.Fprintf(bw, "<span class=\"version\">%s</span>", html.EscapeString(v))
		}
		bw.WriteString("</div>\n")
		if m.Reasoning != "" {
			writeHTMLThinking(bw, m)
		}
		if m.Role == store.RoleAssistant {
			body, err := renderMarkdown(m.Content)
			if err != nil {
				return fmt.Errorf("export: html: message %d: %w", i+1, err)
			}
			fmt.Fprintf(bw, "<div class=\"body md\">\n%s</div>\n", body)
		} else {
			fmt.Fprintf(bw, "<div class=\"body plain\">%s</div>\n", html.EscapeString(m.Content))
		}
		if f := footerOf(m); !opt.NoMetadata && !f.empty() {
			bw.WriteString(`<p class="stats">`)
			bw.WriteString(html.EscapeString(strings.Join(f.Stats, " · ")))
			if len(f.Sampler) > 0 {
				fmt.Fprintf(bw, `<br><span class="sampler">%s</span>`, html.EscapeString(strings.Join(f.Sampler, ", ")))
			}
			bw.WriteString("</p>\n")
		}
		bw.WriteString("</article>\n")
	}
	fmt.Fprintf(bw, "</main>\n<footer>Exported from Churon, %s</footer>\n</body>\n</html>\n",
		html.EscapeString(opt.now().In(opt.loc()).Format(dateFmt)))
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("export: html: %w", err)
	}
	return nil
}

// csp forbids every script and every fetch: styles come inline, images
// may only be data: URIs (there are none today). Even if something in a
// chat slipped past the escaping, the page could not run it or phone home.
const csp = `default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'`

func writeHTMLHead(w *bufio.Writer, title, lang string) {
	w.WriteString("<!DOCTYPE html>\n<html")
	if lang != "" {
		fmt.Fprintf(w, ` lang="%s"`, lang)
	}
	w.WriteString(">\n<head>\n<meta charset=\"utf-8\">\n")
	fmt.Fprintf(w, "<meta http-equiv=\"Content-Security-Policy\" content=\"%s\">\n", html.EscapeString(csp))
	w.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	w.WriteString("<meta name=\"color-scheme\" content=\"light dark\">\n<meta name=\"generator\" content=\"Churon\">\n")
	fmt.Fprintf(w, "<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n", html.EscapeString(title), pageCSS)
}

// docLang guesses the page's language from its text, so that the
// browser picks the right CJK glyphs and a screen reader the right voice.
func docLang(chat Chat) string {
	var hangul, kana, han bool
	scan := func(s string) {
		for _, r := range s {
			switch {
			case unicode.Is(unicode.Hangul, r):
				hangul = true
			case unicode.Is(unicode.Hiragana, r), unicode.Is(unicode.Katakana, r):
				kana = true
			case unicode.Is(unicode.Han, r):
				han = true
			}
		}
	}
	scan(chat.Conversation.Title)
	for _, m := range chat.Messages {
		scan(m.Content)
	}
	switch {
	case hangul:
		return "ko"
	case kana:
		return "ja"
	case han:
		return "zh"
	}
	return "en"
}
