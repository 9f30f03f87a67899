package export

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xhtml "golang.org/x/net/html"

	"github.com/churon/churon/app/store"
)

// inertReport parses page as a browser would and lists everything that
// could run script or fetch: script/iframe/img/… elements, on* attributes,
// src-like attributes, hrefs with a non-web scheme, <base>, <link>, and
// meta tags other than the CSP, charset, viewport, color-scheme and
// generator ones. It also returns the page's visible text.
func inertReport(t *testing.T, page string) (problems []string, text string) {
	t.Helper()
	doc, err := xhtml.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var txt strings.Builder
	styles := 0
	var walk func(n *xhtml.Node)
	walk = func(n *xhtml.Node) {
		switch n.Type {
		case xhtml.TextNode:
			if p := n.Parent; p == nil || (p.Data != "style" && p.Data != "title") {
				txt.WriteString(n.Data)
			}
		case xhtml.ElementNode:
			switch n.Data {
			case "script", "iframe", "img", "svg", "math", "object", "embed", "video", "audio", "source",
				"link", "base", "form", "frame", "frameset", "applet", "picture", "track", "noscript", "template":
				problems = append(problems, "element <"+n.Data+">")
			case "style":
				styles++
			case "meta":
				ok := false
				for _, a := range n.Attr {
					if a.Key == "charset" || (a.Key == "name" && (a.Val == "viewport" || a.Val == "color-scheme" || a.Val == "generator")) ||
						(a.Key == "http-equiv" && strings.EqualFold(a.Val, "Content-Security-Policy")) {
						ok = true
					}
				}
				if !ok {
					problems = append(problems, "unexpected <meta>")
				}
			}
			for _, a := range n.Attr {
				key := strings.ToLower(a.Key)
				val := strings.ToLower(strings.Map(func(r rune) rune {
					if r <= ' ' {
						return -1
					}
					return r
				}, a.Val))
				switch {
				case strings.HasPrefix(key, "on"):
					problems = append(problems, "attribute "+a.Key+" on <"+n.Data+">")
				case key == "src" || key == "srcset" || key == "srcdoc" || key == "poster" || key == "data" ||
					key == "action" || key == "formaction" || key == "background" || key == "style":
					problems = append(problems, "attribute "+a.Key+" on <"+n.Data+">")
				case key == "href":
					if n.Data != "a" {
						problems = append(problems, "href on <"+n.Data+">")
					}
					if i := strings.IndexAny(val, ":/?#"); i >= 0 && val[i] == ':' &&
						!strings.HasPrefix(val, "http:") && !strings.HasPrefix(val, "https:") && !strings.HasPrefix(val, "mailto:") {
						problems = append(problems, "href "+a.Val)
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if styles != 1 {
		problems = append(problems, "style elements: "+string(rune('0'+styles)))
	}
	if strings.Contains(page, "@import") || strings.Contains(page, "url(") {
		problems = append(problems, "CSS that loads something")
	}
	return problems, txt.String()
}

// TestHTMLInjectionIsInert feeds the HTML writer every way a chat might
// try to run script or load something, in every place text reaches the
// page, and checks the result is inert and shows the text literally.
func TestHTMLInjectionIsInert(t *testing.T) {
	payloads := []struct {
		name, text string
		literal    string // text the reader must see, "" = not checked
	}{
		{"script inline", "Look: <script>alert(1)</script> done", "<script>alert(1)</script>"},
		{"script block", "<script>\nalert(1)\n</script>", "<script>\nalert(1)\n</script>"},
		{"img onerror", `<img src=x onerror=alert(1)>`, `<img src=x onerror=alert(1)>`},
		{"svg onload", `<svg onload=alert(1)></svg>`, `<svg onload=alert(1)>`},
		{"iframe", `<iframe src="https://evil.example"></iframe>`, `<iframe`},
		{"anchor javascript", `<a href="javascript:alert(1)">x</a>`, `<a href="javascript:alert(1)">`},
		{"style block", "<style>body{display:none}</style>", "<style>body{display:none}</style>"},
		{"closing tags", "</div></article></main><script>alert(1)</script>", "</div></article></main>"},
		{"md javascript link", "[click](javascript:alert(1))", "click"},
		{"md javascript upper", "[click](JavaScript:alert(1))", ""},
		{"md javascript tab", "[click](java&#9;script:alert(1))", ""},
		{"md javascript entity", "[click](&#106;avascript:alert(1))", ""},
		{"md vbscript", "[click](vbscript:msgbox(1))", ""},
		{"md data html", "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)", ""},
		{"md link title", `[x](https://example.com "a\" onmouseover=\"alert(1)")`, ""},
		{"autolink javascript", "<javascript:alert(1)>", ""},
		{"md image remote", "![tracker](https://evil.example/pixel.png)", "tracker"},
		{"md image javascript", "![x](javascript:alert(1))", ""},
		{"md image data", "![x](data:image/png;base64,iVBORw0KGgo=)", ""},
		{"fence info", "```\"><script>alert(1)</script>\nx\n```", ""},
		{"fence html", "```html\n<script>alert(1)</script>\n<img src=x onerror=alert(1)>\n```", "<script>alert(1)</script>"},
		{"inline code", "`<script>alert(1)</script>`", "<script>alert(1)</script>"},
		{"html comment", "<!-- <script>alert(1)</script> -->", ""},
		{"cdata", "<![CDATA[<script>alert(1)</script>]]>", ""},
		{"processing", "<?php echo 1; ?>", "<?php"},
		{"table cell", "| a |\n|---|\n| <script>alert(1)</script> |", "<script>alert(1)</script>"},
	}
	places := []struct {
		name string
		make func(text string) Chat
	}{
		{"assistant", func(s string) Chat {
			return Chat{Conversation: store.Conversation{Title: "t"}, Messages: []store.Message{{Role: store.RoleAssistant, Content: s}}}
		}},
		{"user", func(s string) Chat {
			return Chat{Conversation: store.Conversation{Title: "t"}, Messages: []store.Message{{Role: store.RoleUser, Content: s}}}
		}},
		{"title", func(s string) Chat { return Chat{Conversation: store.Conversation{Title: s}} }},
		{"system prompt", func(s string) Chat {
			return Chat{Conversation: store.Conversation{Title: "t", SystemPrompt: s}}
		}},
		{"model and sampler", func(s string) Chat {
			return Chat{Conversation: store.Conversation{Title: "t"}, Messages: []store.Message{{Role: store.RoleAssistant,
				Content: "ok", Model: s, Quant: s, FinishReason: s, Sampler: `{"stop":["` + strings.NewReplacer(`"`, `\"`, "\n", `\n`).Replace(s) + `"]}`}}}
		}},
	}
	for _, p := range payloads {
		for _, pl := range places {
			page := render(t, HTML, pl.make(p.text), testOpt())
			problems, text := inertReport(t, page)
			if len(problems) > 0 {
				t.Errorf("%s in %s: %v\n%s", p.name, pl.name, problems, page[strings.Index(page, "<body>"):])
			}
			if p.literal != "" && pl.name != "title" && pl.name != "model and sampler" && !strings.Contains(text, p.literal) {
				t.Errorf("%s in %s: the page does not show %q literally; text:\n%s", p.name, pl.name, p.literal, text)
			}
		}
	}
}

// TestHTMLAcceptance is the check: a chat with Korean, a table,
// code and <script>alert(1)</script> exports to HTML that shows the text
// literally, renders table and code, and has no <script> element and no
// on* attribute. With CHURON_EXPORT_HTML=path it also writes the page
// there (docs/screenshots/export-html.png is a screenshot of it).
func TestHTMLAcceptance(t *testing.T) {
	chat := acceptance(t)
	page := render(t, HTML, chat, testOpt())
	if out := os.Getenv("CHURON_EXPORT_HTML"); out != "" {
		if err := os.WriteFile(out, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	problems, text := inertReport(t, page)
	if len(problems) > 0 {
		t.Fatalf("page is not inert: %v", problems)
	}
	lower := strings.ToLower(page)
	if strings.Contains(lower, "<script") {
		t.Error("the page contains a <script tag")
	}
	for _, want := range []string{
		"김치찌개 만드는 법", "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "눌러 보세요",
		"잘 익은 김치", "def simmer", "fmt.Printf",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	for _, want := range []string{
		`<html lang="ko">`, "<table>", "<th", "<td", "<del>오래</del>", `type="checkbox"`,
		`<div class="lang">python</div>`, `<code class="language-python">`, `<span class="hl-k">def</span>`,
		`<span class="hl-c"># 국물이 졸아들지 않게 중불을 유지합니다</span>`, `<span class="hl-k">package</span>`,
		`<span class="hl-f">Printf</span>`, `<a class="auto" href="https://example.com/kimchi" rel="noopener noreferrer nofollow">`,
		"Content-Security-Policy", "prefers-color-scheme: dark", "@media print",
		"412 tokens", "first token 183 ms", "31.7 tok/s", "temperature 0.7", "seed 1234",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, `href="javascript`) || strings.Contains(lower, "onerror=\"") {
		t.Error("a javascript: link or an onerror attribute survived")
	}
}

func TestHTMLTableAlignmentHasNoStyleAttribute(t *testing.T) {
	// GFM tables align columns; goldmark writes that as align="…" by
	// default, never as a style attribute (which inertReport would flag
	// anyway). Pin it, since a style attribute could carry url().
	page := render(t, HTML, Chat{Messages: []store.Message{{Role: store.RoleAssistant, Content: "| a | b |\n|:-:|--:|\n| 1 | 2 |"}}}, testOpt())
	if strings.Contains(page, "style=") {
		t.Errorf("style attribute in %s", page[strings.Index(page, "<main>"):])
	}
	if !strings.Contains(page, `<th align="center">a</th>`) {
		t.Errorf("no centred header: %s", page[strings.Index(page, "<main>"):])
	}
}

func TestHTMLNoMetadata(t *testing.T) {
	chat := acceptance(t)
	opt := testOpt()
	opt.NoMetadata = true
	page := render(t, HTML, chat, opt)
	if strings.Contains(page, `<p class="stats">`) || strings.Contains(page, "412 tokens") {
		t.Error("NoMetadata kept the statistics")
	}
	if !strings.Contains(page, "qwen2.5-1.5b-instruct-q4_k_m.gguf (Q4_K_M)") {
		t.Error("the model should still be named")
	}
}

func TestSafeURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://example.com/a?b=1#c", "https://example.com/a?b=1#c"},
		{"HTTP://EXAMPLE.COM", "HTTP://EXAMPLE.COM"},
		{"mailto:a@b.c", "mailto:a@b.c"},
		{"#section", "#section"},
		{"docs/readme.md", "docs/readme.md"},
		{"/abs/path", "/abs/path"},
		{"a b", "a%20b"},
		{"javascript:alert(1)", ""},
		{"JAVASCRIPT:alert(1)", ""},
		{" javascript:alert(1)", ""},
		{"java\tscript:alert(1)", ""},
		{"java\nscript:alert(1)", ""},
		{"\x01javascript:alert(1)", ""},
		{"vbscript:x", ""},
		{"data:text/html,<script>", ""},
		{"file:///etc/passwd", ""},
		{"ftp://example.com", ""},
		{"", ""},
	} {
		if got := safeURL([]byte(c.in)); got != c.want {
			t.Errorf("safeURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDocLang(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"hello", "en"}, {"안녕하세요", "ko"}, {"漢字と かな", "ja"}, {"汉字", "zh"}, {"韓國語 한국어", "ko"},
	} {
		if got := docLang(Chat{Messages: []store.Message{{Content: c.text}}}); got != c.want {
			t.Errorf("docLang(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestHTMLDates(t *testing.T) {
	seoul := time.FixedZone("KST", 9*3600)
	chat := Chat{Conversation: store.Conversation{Title: "t", Created: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)}}
	opt := testOpt()
	opt.Location = seoul
	if page := render(t, HTML, chat, opt); !strings.Contains(page, "2026-01-02 12:04 +09:00") {
		t.Error("dates are not shown in the chosen time zone")
	}
}

// writeGolden compares got with testdata/name, or rewrites it when
// CHURON_UPDATE_GOLDEN is set.
func writeGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("CHURON_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with CHURON_UPDATE_GOLDEN=1 to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (CHURON_UPDATE_GOLDEN=1 rewrites it); got:\n%s", name, got)
	}
}

func TestHTMLLinksAndImages(t *testing.T) {
	page := render(t, HTML, Chat{Messages: []store.Message{{Role: store.RoleAssistant,
		Content: "[spec](https://example.com/gguf \"GGUF\") and ![a cat](https://example.com/cat.png) and <mail@example.com> and [bad](javascript:x)"}}}, testOpt())
	for _, want := range []string{
		`<a href="https://example.com/gguf" title="GGUF" rel="noopener noreferrer nofollow">spec</a>`,
		`<a href="https://example.com/cat.png" rel="noopener noreferrer nofollow"><span class="img">image: a cat</span></a>`,
		`<a class="auto" href="mailto:mail@example.com" rel="noopener noreferrer nofollow">mail@example.com</a>`,
		`<span class="link">bad</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s\n%s", want, page[strings.Index(page, "<main>"):])
		}
	}
}
