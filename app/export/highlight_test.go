package export

import (
	"html"
	"regexp"
	"strings"
	"testing"
)

func hl(lang, code string) string {
	var b strings.Builder
	highlight(&b, lang, code)
	return b.String()
}

func TestHighlight(t *testing.T) {
	for _, c := range []struct{ lang, code, want string }{
		{"go", "func f(s string) error { return fmt.Errorf(`x\\n%d`, 0x1F) } // hi",
			`<span class="hl-k">func</span> <span class="hl-f">f</span>(s <span class="hl-t">string</span>) <span class="hl-t">error</span> { <span class="hl-k">return</span> fmt.<span class="hl-f">Errorf</span>(<span class="hl-s">` + "`x\\n%d`" + `</span>, <span class="hl-n">0x1F</span>) } <span class="hl-c">// hi</span>`},
		{"golang", "q := '\\''", `q := <span class="hl-s">&#39;\&#39;&#39;</span>`},
		// Rust lifetimes are not character literals; macros are calls.
		{"rs", "fn f<'a>(x: &'a str) { println!(\"{}\", 'x'); 1_000u64 }",
			`<span class="hl-k">fn</span> f&lt;&#39;a&gt;(x: &amp;&#39;a <span class="hl-t">str</span>) { <span class="hl-f">println!</span>(<span class="hl-s">&#34;{}&#34;</span>, <span class="hl-s">&#39;x&#39;</span>); <span class="hl-n">1_000u64</span> }`},
		{"Python", "@dataclass\nclass A:\n    s = '''doc\nstring'''  # c\n    x = 1.5e-3",
			"<span class=\"hl-m\">@dataclass</span>\n<span class=\"hl-k\">class</span> A:\n    s = <span class=\"hl-s\">&#39;&#39;&#39;doc\nstring&#39;&#39;&#39;</span>  <span class=\"hl-c\"># c</span>\n    x = <span class=\"hl-n\">1.5e-3</span>"},
		{"sh", "echo \"$HOME\" ${PATH} $1 # comment\nls a#b 'raw \\'",
			"<span class=\"hl-t\">echo</span> <span class=\"hl-s\">&#34;$HOME&#34;</span> <span class=\"hl-v\">${PATH}</span> <span class=\"hl-v\">$1</span> <span class=\"hl-c\"># comment</span>\nls a#b <span class=\"hl-s\">&#39;raw \\&#39;</span>"},
		{"SQL", "select 1 -- c", `<span class="hl-k">select</span> <span class="hl-n">1</span> <span class="hl-c">-- c</span>`},
		{"json", `{"key": "value", "ok": true}`,
			`{<span class="hl-a">&#34;key&#34;</span>: <span class="hl-s">&#34;value&#34;</span>, <span class="hl-a">&#34;ok&#34;</span>: <span class="hl-t">true</span>}`},
		{"yml", "runs-on: ubuntu # c", `<span class="hl-a">runs-on</span>: ubuntu <span class="hl-c"># c</span>`},
		{"toml", "[server]\nport = 8080", "<span class=\"hl-m\">[server]</span>\n<span class=\"hl-a\">port</span> = <span class=\"hl-n\">8080</span>"},
		{"html", `<!-- c --><a href="x">t</a>`,
			`<span class="hl-c">&lt;!-- c --&gt;</span>&lt;<span class="hl-k">a</span> <span class="hl-a">href</span>=<span class="hl-s">&#34;x&#34;</span>&gt;t&lt;/<span class="hl-k">a</span>&gt;`},
		{"diff", "--- a\n@@ -1 +1 @@\n-old\n+new\n same\n",
			"<span class=\"hl-gh\">--- a</span>\n<span class=\"hl-m\">@@ -1 +1 @@</span>\n<span class=\"hl-gd\">-old</span>\n<span class=\"hl-gi\">+new</span>\n same\n"},
		{"c", "#include <stdio.h>\nint x;", "<span class=\"hl-m\">#include &lt;stdio.h&gt;</span>\n<span class=\"hl-k\">int</span> x;"},
		{"ts", "class A implements B {}", `<span class="hl-k">class</span> <span class="hl-t">A</span> <span class="hl-k">implements</span> <span class="hl-t">B</span> {}`},
		{"brainfuck", "<b>&</b>", "&lt;b&gt;&amp;&lt;/b&gt;"},
		{"", "<script>", "&lt;script&gt;"},
		// Unterminated constructs run to the end without losing text.
		{"go", "s := \"open\nnext", "s := <span class=\"hl-s\">&#34;open</span>\nnext"},
		{"c", "/* open", `<span class="hl-c">/* open</span>`},
		{"python", "'''open", `<span class="hl-s">&#39;&#39;&#39;open</span>`},
		{"go", "x := \"\\", `x := <span class="hl-s">&#34;\</span>`},
		{"go", "변수 := 1", `변수 := <span class="hl-n">1</span>`},
	} {
		if got := hl(c.lang, c.code); got != c.want {
			t.Errorf("highlight(%q, %q)\n got %s\nwant %s", c.lang, c.code, got, c.want)
		}
	}
}

var tags = regexp.MustCompile(`<span class="hl-[a-z]+">|</span>`)

// Whatever the input, the highlighter only adds spans: removing them and
// unescaping gives the code back, and no other markup appears.
func TestHighlightKeepsText(t *testing.T) {
	inputs := []string{
		"", "\x00", "'", "\"", "`", "\\", "/*", "<!--", "<", "<a", "<a b", "<a b='", "@", "$", "${", "#", "0x", "1e+",
		"fn main() { let s = r#\"raw\"#; }", "<script>alert(1)</script>", "\xff\xfe invalid utf-8 '\xff'",
		"한국어 '가' \"문자열\" // 주석", "a = b ? 'c' : \"d\" /* e */ -- f # g",
	}
	for l := range languages {
		for _, in := range inputs {
			checkRoundTrip(t, l, in)
		}
	}
	for _, l := range []string{"html", "diff", "none"} {
		for _, in := range inputs {
			checkRoundTrip(t, l, in)
		}
	}
}

func checkRoundTrip(t *testing.T, lang, in string) {
	t.Helper()
	out := hl(lang, in)
	bare := tags.ReplaceAllString(out, "")
	if strings.ContainsAny(bare, "<>") {
		t.Errorf("%s: %q: markup besides spans: %s", lang, in, out)
	}
	if got := html.UnescapeString(bare); got != strings.ToValidUTF8(in, "\uFFFD") && got != in {
		t.Errorf("%s: %q: text changed to %q", lang, in, got)
	}
}

func FuzzHighlight(f *testing.F) {
	f.Add("go", "func main() { fmt.Println(\"hi\") }")
	f.Add("python", "def f(x): return '''x'''")
	f.Add("html", "<a href='x'>y</a>")
	f.Add("rust", "fn f<'a>() {}")
	f.Fuzz(func(t *testing.T, lang, code string) {
		checkRoundTrip(t, lang, code)
	})
}

func TestLangName(t *testing.T) {
	for in, want := range map[string]string{"Python {linenos}": "python", "js": "javascript", " C++ ": "cpp", "go,ignore": "go", "": ""} {
		if got := langName(in); got != want {
			t.Errorf("langName(%q) = %q, want %q", in, got, want)
		}
	}
}
