package export

import (
	"bytes"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	xhtml "golang.org/x/net/html"

	"github.com/churon/churon/app/store"
)

// outline renders Markdown as a CommonMark+GFM renderer would and returns
// the text of its level-1 and level-2 headings and the language and text
// of its code blocks, as a reader would see them.
func outline(src string) (headings []string, fences [][2]string) {
	var buf bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.GFM)).Convert([]byte(src), &buf); err != nil {
		panic(err)
	}
	doc, err := xhtml.Parse(&buf)
	if err != nil {
		panic(err)
	}
	var textOf func(n *xhtml.Node) string
	textOf = func(n *xhtml.Node) string {
		if n.Type == xhtml.TextNode {
			return n.Data
		}
		var b strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == xhtml.ElementNode && n.Data[0] == 'h' {
				b.WriteString("<" + c.Data + ">") // markup inside a heading shows as a tag
			}
			b.WriteString(textOf(c))
		}
		return b.String()
	}
	var walk func(n *xhtml.Node)
	walk = func(n *xhtml.Node) {
		if n.Type == xhtml.ElementNode {
			switch n.Data {
			case "h1", "h2":
				headings = append(headings, textOf(n))
				return
			case "pre":
				if c := n.FirstChild; c != nil && c.Data == "code" {
					lang := ""
					for _, a := range c.Attr {
						if a.Key == "class" {
							lang = strings.TrimPrefix(a.Val, "language-")
						}
					}
					fences = append(fences, [2]string{lang, textOf(c)})
				}
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return headings, fences
}

func TestMarkdownAcceptance(t *testing.T) {
	chat := acceptance(t)
	out := renderAcceptance(t, Markdown,
		"- Created: 2026-03-14 09:30 +00:00", "- Messages: 4", "- Model: qwen2.5-1.5b-instruct-q4_k_m.gguf (Q4_K_M)",
		"*412 tokens · first token 183 ms · 31.7 tok/s · prompt 58 tokens at 316.2 tok/s · finished (eos) · temperature 0.7, top-k 40, top-p 0.95, min-p 0.05, repeat penalty 1, repeat window 64, seed 1234, context 4096*",
	)
	headings, fences := outline(out)
	wantHeadings := []string{
		"김치찌개 레시피와 <script>alert(1)</script> 테스트", // the title, escaped so it reads literally
		"System prompt",
		"You · 2026-03-14 09:30 +00:00",
		"Assistant · qwen2.5-1.5b-instruct-q4_k_m.gguf (Q4_K_M) · 2026-03-14 09:30 +00:00",
		"김치찌개 만드는 법", // the answer's own heading
		"You · 2026-03-14 09:40 +00:00",
		"Assistant · qwen2.5-1.5b-instruct-q4_k_m.gguf (Q4_K_M) · 2026-03-14 09:40 +00:00",
	}
	if strings.Join(headings, "\n") != strings.Join(wantHeadings, "\n") {
		t.Errorf("headings:\n%s\nwant:\n%s", strings.Join(headings, "\n"), strings.Join(wantHeadings, "\n"))
	}
	if len(fences) != 2 || fences[0][0] != "python" || fences[1][0] != "go" ||
		!strings.HasPrefix(fences[0][1], "def simmer(") || !strings.Contains(fences[1][1], "fmt.Printf(\"%s: %d분\\n\"") {
		t.Errorf("code fences not intact: %q", fences)
	}
	writeGolden(t, "acceptance.md", out)

	opt := testOpt()
	opt.NoMetadata = true
	if quiet := render(t, Markdown, chat, opt); strings.Contains(quiet, "tok/s") || strings.Contains(quiet, "temperature") {
		t.Error("NoMetadata kept the metadata line")
	}
}

// An answer cut off inside a code block must not swallow the rest of the
// document: the export closes the fence, and the next message's heading
// is a heading.
func TestMarkdownClosesOpenFence(t *testing.T) {
	chat := Chat{Conversation: store.Conversation{Title: "cut"}, Messages: []store.Message{
		{Role: store.RoleAssistant, Content: "Here:\n\n````python\nprint('```')\nwhile True:", FinishReason: "length"},
		{Role: store.RoleUser, Content: "go on"},
	}}
	out := render(t, Markdown, chat, testOpt())
	headings, fences := outline(out)
	if len(headings) != 3 || headings[2] != "You" {
		t.Errorf("headings %q: the open fence swallowed the next message\n%s", headings, out)
	}
	if len(fences) != 1 || fences[0][1] != "print('```')\nwhile True:\n" {
		t.Errorf("fences %q", fences)
	}
	if !strings.Contains(out, "while True:\n````\n") {
		t.Errorf("no closing fence of four backticks:\n%s", out)
	}
}

func TestOpenFence(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"", ""},
		{"plain", ""},
		{"```\ncode\n```", ""},
		{"```go\ncode", "```"},
		{"~~~~\ncode\n~~~", "~~~~"},
		{"~~~~\ncode\n~~~~~", ""},
		{"````\n```\nstill code", "````"},
		{"```\ncode\n``` not a close", "```"},
		{"    ```\nindented code, not a fence", ""},
		{"   ```\nthree spaces is a fence", "```"},
		{"``` a`b\nnot a fence: backtick in info", ""},
		{"~~~ a`b\nis a fence", "~~~"},
		{"``\nnot a fence", ""},
		{"```\na\n```\n```js\nb", "```"},
		{"```\r\nwindows\r\n```\r\n", ""},
	} {
		if got := openFence(c.text); got != c.want {
			t.Errorf("openFence(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// Our own text (titles, model names) must read literally, whatever
// Markdown it contains.
func TestMarkdownEscapesOurText(t *testing.T) {
	for _, title := range []string{
		"# not a heading *or bold* [or a link](x) <b>or html</b>",
		"snake_case_title and _emphasis_ and R&D &amp; `code` | pipe ~~strike~~",
		"김치찌개 \\ backslash",
	} {
		out := render(t, Markdown, Chat{Conversation: store.Conversation{Title: title}}, testOpt())
		headings, _ := outline(out)
		if len(headings) == 0 || headings[0] != title {
			t.Errorf("title %q reads as %q", title, headings)
		}
	}
	if got := mdEscape("q4_k_m model_"); got != `q4_k_m model\_` {
		t.Errorf("mdEscape = %q", got)
	}
}

func TestText(t *testing.T) {
	out := renderAcceptance(t, Text,
		"김치찌개 레시피와 <script>alert(1)</script> 테스트\n===", "-- System prompt --\n당신은",
		"-- You · 2026-03-14 09:30 +00:00 --\n", "[412 tokens · first token 183 ms",
	)
	writeGolden(t, "acceptance.txt", out)
}

func TestFooter(t *testing.T) {
	m := store.Message{Role: store.RoleAssistant, GenTokens: 10, TTFT: 1500e6, GenTPS: 12.345, PromptTokens: 3,
		FinishReason: "cancelled", Sampler: `{"top_p":0.9,"temperature":0.5,"zeta":[1, 2],"stop":["</s>"],"max_tokens":0,"presence_penalty":0.5}`}
	got := footerOf(m).String()
	want := `10 tokens · first token 1.50 s · 12.3 tok/s · prompt 3 tokens · stopped by the user · temperature 0.5, top-p 0.9, presence penalty 0.5, stop ["</s>"], zeta [1,2]`
	if got != want {
		t.Errorf("footer\n got %s\nwant %s", got, want)
	}
	if f := footerOf(store.Message{Role: store.RoleUser, GenTokens: 5}); !f.empty() {
		t.Errorf("a user message has a footer: %v", f)
	}
	if s := samplerText("not json"); s != nil {
		t.Errorf("samplerText(not json) = %v", s)
	}
}

func TestFileNames(t *testing.T) {
	for _, c := range []struct {
		title string
		f     Format
		want  string
	}{
		{"김치찌개 레시피", Markdown, "김치찌개 레시피.md"},
		{"a/b\\c:d*e?f\"g<h>i|j", HTML, "a-b-c-d-e-f-g-h-i-j.html"},
		{"", JSON, "New chat.json"},
		{"...", Text, "chat.txt"},
		{"line\nbreak\ttab", Markdown, "line break tab.md"},
		{strings.Repeat("가", 100), Markdown, strings.Repeat("가", 80) + ".md"},
	} {
		if got := FileName(store.Conversation{Title: c.title}, c.f); got != c.want {
			t.Errorf("FileName(%q, %s) = %q, want %q", c.title, c.f, got, c.want)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"md": Markdown, "Markdown": Markdown, "HTML": HTML, "htm": HTML, ".json": JSON, "txt": Text, "text": Text} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseFormat("pdf"); err == nil {
		t.Error("ParseFormat(pdf) succeeded")
	}
}
