package export

// A small syntax highlighter for the code blocks of the HTML export.
//
// Why not Chroma (github.com/alecthomas/chroma/v2, the usual Go choice,
// 250 languages)? It would add about 6 MB to the binary (measured: a
// program that highlights one line with it is 8.4 MB) and a second
// regular-expression engine (dlclark/regexp2), for a feature whose job is
// to make code in an exported chat easier to read. The code models write
// is mostly in two dozen languages, and colouring keywords, strings,
// comments, numbers, function names and types is most of the benefit.
// This file does that in one pass per block, with a table of languages;
// it never needs JavaScript because the colours are spans with classes
// that the page's CSS styles. Everything it writes is HTML-escaped: it
// only ever adds <span class="hl-…"> around escaped text.

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Token classes, styled by the page's CSS (hl-k, hl-s, …).
const (
	clsKeyword  = "k"
	clsType     = "t" // types, builtins, constants
	clsString   = "s"
	clsComment  = "c"
	clsNumber   = "n"
	clsFunc     = "f"
	clsMeta     = "m" // preprocessor, decorators, annotations, sections
	clsVar      = "v" // shell and PHP variables
	clsAttr     = "a" // keys (JSON, YAML, TOML), HTML attributes
	clsInserted = "gi"
	clsDeleted  = "gd"
	clsHeader   = "gh"
)

// langSpec describes a language to the generic scanner.
type langSpec struct {
	keywords, types map[string]bool
	fold            bool     // keywords ignore case (SQL, Dockerfile)
	lineComments    []string // "//", "#", "--"
	blockComments   [][2]string
	quotes          []string // string delimiters, longest first
	rawQuotes       string   // quotes inside which backslash does not escape
	multiline       string   // single-character quotes that may span lines
	charQuote       bool     // ' starts a character literal only when it closes soon (C, Rust lifetimes)
	preproc         bool     // # at the start of a line begins a directive (C family)
	decorators      bool     // @name is an annotation or decorator (or a CSS at-rule)
	vars            bool     // $name and ${…} are variables
	keyColon        bool     // a name or string followed by ':' is a key (JSON, YAML, CSS)
	keyEquals       bool     // a name at the start of a line followed by '=' is a key (TOML, INI)
	sections        bool     // a line starting with '[' is a section header (TOML, INI)
	upperTypes      bool     // Capitalised names are types (Java, Rust, Swift…)
	macros          bool     // name! is a macro call (Rust)
	identExtra      string   // characters allowed in names besides letters, digits and _
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

var (
	cComments    = [][2]string{{"/*", "*/"}}
	cLike        = []string{`"`, `'`}
	cKeywords    = `auto break case char const continue default do double else enum extern float for goto if inline int long register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while _Bool _Static_assert`
	cTypes       = `size_t ssize_t ptrdiff_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t uintptr_t bool true false NULL FILE printf malloc free memcpy strlen`
	jsKeywords   = `break case catch class const continue debugger default delete do else export extends finally for function if import in instanceof let new return super switch this throw try typeof var void while with yield async await of static get set from as`
	jsTypes      = `true false null undefined NaN Infinity console window document Promise Array Object String Number Boolean Math JSON Map Set Error Symbol BigInt Date RegExp require module exports`
	tsKeywords   = jsKeywords + ` interface type enum implements namespace declare readonly private public protected abstract keyof infer is satisfies`
	tsTypes      = jsTypes + ` string number boolean any unknown never object bigint symbol`
	shKeywords   = `if then else elif fi case esac for select while until do done in function time return exit local export readonly declare unset shift break continue source alias`
	shTypes      = `echo cd printf read set eval exec trap test true false pwd`
	shellQuotes  = []string{`"`, `'`}
	hashComments = []string{"#"}
)

var languages = map[string]*langSpec{
	"go": {
		keywords:     words(`break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var`),
		types:        words(`bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr any comparable true false iota nil append cap clear close complex copy delete imag len make max min new panic print println real recover`),
		lineComments: []string{"//"}, blockComments: cComments, quotes: []string{`"`, "`", `'`}, rawQuotes: "`", multiline: "`", charQuote: true,
	},
	"python": {
		keywords:     words(`False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case`),
		types:        words(`int float str bool list dict set tuple bytes object type print len range enumerate zip map filter sorted open isinstance super self cls Exception ValueError TypeError KeyError IndexError RuntimeError`),
		lineComments: hashComments, quotes: []string{`"""`, `'''`, `"`, `'`}, decorators: true,
	},
	"javascript": {
		keywords: words(jsKeywords), types: words(jsTypes),
		lineComments: []string{"//"}, blockComments: cComments, quotes: []string{`"`, `'`, "`"}, multiline: "`", identExtra: "$",
	},
	"typescript": {
		keywords: words(tsKeywords), types: words(tsTypes),
		lineComments: []string{"//"}, blockComments: cComments, quotes: []string{`"`, `'`, "`"}, multiline: "`", identExtra: "$",
		decorators: true, upperTypes: true,
	},
	"java": {
		keywords:     words(`abstract assert break case catch class const continue default do else enum extends final finally for goto if implements import instanceof interface native new package private protected public return static strictfp super switch synchronized this throw throws transient try volatile while var record yield sealed permits`),
		types:        words(`boolean byte char double float int long short void true false null`),
		lineComments: []string{"//"}, blockComments: cComments, quotes: []string{`"""`, `"`, `'`}, charQuote: true, decorators: true, upperTypes: true,
	},
	"kotlin": {
		keywords:     words(`as break class continue do else for fun if in interface is object package return super this throw try typealias val var when while by catch constructor data enum finally get import init internal open override private protected public sealed set suspend companion lateinit inline`),
		types:        words(`true false null`),
		lineComments: []string{"//"}, blockComments: cComments, quotes: []string{`"""`, `"`, `'`}, charQuote: true, decorators: true, upperTypes: true,
	},
	"c": {
		keywords: words(cKeywords), types: words(cTypes),
		lineComments: []string{"//"}, blockComments: cComments, quotes: cLike, charQuote: true, preproc: true,
	},
	"cpp": {
		keywords:     words(cKeywords + ` alignas alignof and asm catch class constexpr consteval constinit const_cast decltype delete dynamic_cast explicit export friend mutable namespace new noexcept not nullptr operator or private protected public reinterpret_cast static_assert static_cast template this thread_local throw try typeid typename using virtual co_await co_return co_yield concept requires override final`),
		types:        words(cTypes + ` bool wchar_t char8_t char16_t char32_t std string vector map unordered_map set array unique_ptr shared_ptr cout cin endl`),
		lineComments: []string{"//"}, blockComments: cComments, quotes: cLike, charQuote: true, preproc: true,
	},
	"csharp": {
		keywords:     words(`abstract as base break case catch checked class const continue default delegate do else enum event explicit extern finally fixed for foreach goto if implicit in interface internal is lock namespace new operator out override params private protected public readonly ref return sealed sizeof stackalloc static struct switch this throw try typeof unchecked unsafe using virtual volatile while var async await get set record init yield nameof when where`),
		types:        words(`bool byte char decimal double float int long object sbyte short string uint ulong ushort void dynamic true false null`),
		lineComments: []string{"//"}, blockComments: cComments, quotes: cLike, charQuote: true, preproc: true, upperTypes: true,
	},
	"rust": {
		keywords:     words(`as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait type unsafe use where while`),
		types:        words(`i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 bool char str true false Some None Ok Err`),
		lineComments: []string{"//"}, blockComments: cComments, quotes: cLike, charQuote: true, upperTypes: true, macros: true,
	},
	"swift": {
		keywords:     words(`associatedtype class deinit enum extension fileprivate func import init inout internal let open operator private protocol public rethrows static struct subscript typealias var break case continue default defer do else fallthrough for guard if in repeat return switch where while as catch is self Self super throw throws try async await some any`),
		types:        words(`true false nil`),
		lineComments: []string{"//"}, blockComments: cComments, quotes: []string{`"""`, `"`}, decorators: true, upperTypes: true,
	},
	"bash": {
		keywords: words(shKeywords), types: words(shTypes),
		lineComments: hashComments, quotes: shellQuotes, rawQuotes: `'`, multiline: `"'`, vars: true, identExtra: "-",
	},
	"sql": {
		keywords:     words(`select from where and or not insert into values update set delete create table drop alter add index view primary key foreign references join inner left right outer full cross on as group by order having limit offset union all distinct case when then else end is in exists between like begin commit rollback transaction if with returning default unique check constraint asc desc trigger replace`),
		types:        words(`int integer bigint smallint tinyint text varchar char boolean bool real float double numeric decimal date time timestamp datetime blob serial true false null count sum avg min max coalesce now`),
		fold:         true,
		lineComments: []string{"--"}, blockComments: cComments, quotes: []string{`'`, `"`}, rawQuotes: `'"`,
	},
	"lua": {
		keywords:     words(`and break do else elseif end false for function goto if in local nil not or repeat return then true until while`),
		types:        words(`print pairs ipairs require table string math type tostring tonumber setmetatable getmetatable`),
		lineComments: []string{"--"}, blockComments: [][2]string{{"--[[", "]]"}}, quotes: []string{`"`, `'`},
	},
	"ruby": {
		keywords:     words(`BEGIN END alias and begin break case class def defined? do else elsif end ensure false for if in module next nil not or redo rescue retry return self super then true undef unless until when while yield`),
		types:        words(`require require_relative puts print attr_accessor attr_reader attr_writer include extend raise lambda proc`),
		lineComments: hashComments, quotes: []string{`"`, `'`}, upperTypes: true,
	},
	"php": {
		keywords:     words(`abstract and array as break callable case catch class clone const continue declare default do echo else elseif empty extends final finally fn for foreach function global goto if implements include include_once instanceof insteadof interface isset list match namespace new or print private protected public readonly require require_once return static switch throw trait try unset use var while xor yield`),
		types:        words(`true false null TRUE FALSE NULL int float string bool void mixed`),
		lineComments: []string{"//", "#"}, blockComments: cComments, quotes: []string{`"`, `'`}, rawQuotes: `'`, vars: true,
	},
	"json": {
		types:        words(`true false null`),
		lineComments: []string{"//"}, blockComments: cComments, quotes: []string{`"`}, keyColon: true,
	},
	"yaml": {
		types:        words(`true false null yes no on off True False Null ~`),
		lineComments: hashComments, quotes: []string{`"`, `'`}, rawQuotes: `'`, keyColon: true, identExtra: "-.",
	},
	"toml": {
		types:        words(`true false`),
		lineComments: []string{"#", ";"}, quotes: []string{`"""`, `'''`, `"`, `'`}, rawQuotes: `'`, keyEquals: true, sections: true, identExtra: "-.",
	},
	"css": {
		lineComments: []string{"//"}, blockComments: cComments, quotes: []string{`"`, `'`}, decorators: true, keyColon: true, identExtra: "-",
		types: words(`important inherit initial unset none auto`),
	},
	"dockerfile": {
		keywords:     words(`from run cmd label expose env add copy entrypoint volume user workdir arg onbuild stopsignal healthcheck shell as`),
		fold:         true,
		lineComments: hashComments, quotes: shellQuotes, vars: true,
	},
	// html, xml and diff have their own scanners.
}

// aliases map a fence's info string to a language.
var aliases = map[string]string{
	"golang": "go", "py": "python", "python3": "python", "py3": "python", "ipython": "python",
	"js": "javascript", "jsx": "javascript", "mjs": "javascript", "cjs": "javascript", "node": "javascript",
	"ts": "typescript", "tsx": "typescript",
	"kt": "kotlin", "kts": "kotlin",
	"h": "c", "c++": "cpp", "cc": "cpp", "cxx": "cpp", "hpp": "cpp", "hh": "cpp", "cuda": "cpp", "cu": "cpp",
	"cs": "csharp", "c#": "csharp",
	"rs": "rust",
	"sh": "bash", "shell": "bash", "zsh": "bash", "console": "bash", "shell-session": "bash", "shellsession": "bash", "fish": "bash",
	"mysql": "sql", "postgresql": "sql", "postgres": "sql", "psql": "sql", "sqlite": "sql", "plsql": "sql",
	"rb":    "ruby",
	"jsonc": "json", "json5": "json",
	"yml": "yaml",
	"ini": "toml", "cfg": "toml", "conf": "toml",
	"scss": "css", "less": "css",
	"docker": "dockerfile",
	"htm":    "html", "xhtml": "html", "svg": "xml", "vue": "html", "svelte": "html",
	"patch": "diff", "udiff": "diff",
}

// langName normalises a fence's info string ("Python {linenos}" → "python").
func langName(info string) string {
	l := strings.ToLower(strings.TrimSpace(info))
	if i := strings.IndexAny(l, " \t{,"); i >= 0 {
		l = l[:i]
	}
	if a, ok := aliases[l]; ok {
		return a
	}
	return l
}

// highlight writes code as HTML-escaped text with spans for its tokens
// in the language named by info; an unknown language is only escaped.
func highlight(b *strings.Builder, info, code string) {
	switch l := langName(info); l {
	case "diff":
		highlightDiff(b, code)
	case "html", "xml":
		highlightMarkup(b, code)
	default:
		if spec := languages[l]; spec != nil {
			spec.highlight(b, code)
			return
		}
		b.WriteString(html.EscapeString(code))
	}
}

func span(b *strings.Builder, cls, text string) {
	if text == "" {
		return
	}
	if cls == "" {
		b.WriteString(html.EscapeString(text))
		return
	}
	b.WriteString(`<span class="hl-`)
	b.WriteString(cls)
	b.WriteString(`">`)
	b.WriteString(html.EscapeString(text))
	b.WriteString(`</span>`)
}

func (l *langSpec) identStart(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || (r < utf8.RuneSelf && strings.ContainsRune(l.identExtra, r) && r != '-' && r != '.')
}

func (l *langSpec) identPart(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || (r < utf8.RuneSelf && strings.ContainsRune(l.identExtra, r))
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// highlight is the generic scanner: comments, strings, numbers, names.
func (l *langSpec) highlight(b *strings.Builder, src string) {
	i := 0
	lineStart := true // only spaces since the last newline
	plain := 0        // start of the pending plain text
	flush := func(end int) {
		span(b, "", src[plain:end])
	}
	emit := func(start, end int, cls string) {
		flush(start)
		span(b, cls, src[start:end])
		plain = end
	}
	for i < len(src) {
		c := src[i]
		rest := src[i:]
		switch {
		case c == '\n':
			lineStart = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		}
		start := i
		wasLineStart := lineStart
		lineStart = false

		if wasLineStart && ((l.preproc && c == '#') || (l.sections && c == '[')) {
			end := lineEnd(src, i)
			emit(i, end, clsMeta)
			i = end
			continue
		}
		if end, ok := l.comment(src, i); ok {
			emit(start, end, clsComment)
			i = end
			continue
		}
		if q := l.quoteAt(src, i); q != "" {
			end := l.stringEnd(src, i, q)
			cls := clsString
			if l.keyColon && followedBy(src, end, ':') {
				cls = clsAttr
			}
			emit(start, end, cls)
			i = end
			continue
		}
		if isDigit(c) || (c == '.' && len(rest) > 1 && isDigit(rest[1])) {
			if i > 0 && l.identPart(rune(src[i-1])) && src[i-1] < utf8.RuneSelf {
				i++ // a digit inside a name, e.g. x1 split by a multi-byte rune
				continue
			}
			end := numberEnd(src, i)
			emit(start, end, clsNumber)
			i = end
			continue
		}
		if l.decorators && c == '@' && len(rest) > 1 {
			if r, _ := utf8.DecodeRuneInString(rest[1:]); l.identStart(r) || r == '-' {
				end := l.identEnd(src, i+1)
				for end < len(src) && src[end] == '.' {
					end = l.identEnd(src, end+1)
				}
				emit(start, end, clsMeta)
				i = end
				continue
			}
		}
		if l.vars && c == '$' && len(rest) > 1 {
			end := i + 1
			switch r, size := utf8.DecodeRuneInString(rest[1:]); {
			case r == '{':
				if j := strings.IndexByte(rest, '}'); j > 0 && !strings.Contains(rest[:j], "\n") {
					end = i + j + 1
				}
			case l.identStart(r):
				end = l.identEnd(src, i+1)
			case strings.ContainsRune("0123456789#?@*$!-", r):
				end = i + 1 + size
			}
			if end > i+1 {
				emit(start, end, clsVar)
				i = end
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(rest)
		if l.identStart(r) {
			end := l.identEnd(src, i)
			word := src[i:end]
			key := word
			if l.fold {
				key = strings.ToLower(word)
			}
			cls := ""
			switch {
			case l.keyEquals && wasLineStart && followedBy(src, end, '='):
				cls = clsAttr
			case l.keyColon && followedBy(src, end, ':') && !followedByString(src, end, "::"):
				cls = clsAttr
			case l.keywords[key]:
				cls = clsKeyword
			case l.types[key] || l.types[word]:
				cls = clsType
			case l.macros && end < len(src) && src[end] == '!':
				end++
				cls = clsFunc
			case followedBy(src, end, '('):
				cls = clsFunc
			case l.upperTypes && unicode.IsUpper(r):
				cls = clsType
			}
			if cls != "" {
				emit(start, end, cls)
			}
			i = end
			continue
		}
		i += size
	}
	flush(len(src))
}

func lineEnd(src string, i int) int {
	if j := strings.IndexByte(src[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(src)
}

func (l *langSpec) identEnd(src string, i int) int {
	for i < len(src) {
		r, size := utf8.DecodeRuneInString(src[i:])
		if !l.identPart(r) {
			break
		}
		i += size
	}
	// "foo-" and "a." end before the trailing punctuation.
	for i > 0 && (src[i-1] == '-' || src[i-1] == '.') && strings.ContainsRune(l.identExtra, rune(src[i-1])) {
		i--
	}
	return i
}

// followedBy reports whether the first non-blank byte at or after i (on
// the same line) is c.
func followedBy(src string, i int, c byte) bool {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return i < len(src) && src[i] == c
}

func followedByString(src string, i int, s string) bool {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return strings.HasPrefix(src[i:], s)
}

// comment reports whether a comment starts at i, and where it ends.
func (l *langSpec) comment(src string, i int) (int, bool) {
	rest := src[i:]
	for _, bc := range l.blockComments {
		if strings.HasPrefix(rest, bc[0]) {
			if j := strings.Index(rest[len(bc[0]):], bc[1]); j >= 0 {
				return i + len(bc[0]) + j + len(bc[1]), true
			}
			return len(src), true
		}
	}
	for _, lc := range l.lineComments {
		if !strings.HasPrefix(rest, lc) {
			continue
		}
		// '#' starts a comment only at the start of a word: not in $#,
		// a#b, or a URL's fragment.
		if lc == "#" && i > 0 {
			p := src[i-1]
			if !(p == ' ' || p == '\t' || p == '\n' || p == ';' || p == '(') {
				continue
			}
		}
		return lineEnd(src, i), true
	}
	return 0, false
}

// quoteAt returns the string delimiter that starts at i, if any.
func (l *langSpec) quoteAt(src string, i int) string {
	rest := src[i:]
	for _, q := range l.quotes {
		if !strings.HasPrefix(rest, q) {
			continue
		}
		if q == `'` && l.charQuote {
			// A character literal closes within a few bytes ('a',
			// '\n', '\u00e9', '한'); otherwise ' is a Rust lifetime
			// or a stray apostrophe.
			if !charLiteral(rest) {
				return ""
			}
		}
		return q
	}
	return ""
}

// charLiteral reports whether s (starting with ') opens a character
// literal: one character or an escape, then the closing quote.
func charLiteral(s string) bool {
	if len(s) < 3 {
		return false
	}
	if s[1] == '\\' {
		// The escaped character may itself be a quote: '\''.
		k := strings.IndexByte(s[3:], '\'')
		return k >= 0 && k <= 10 && !strings.Contains(s[3:3+k], "\n")
	}
	_, size := utf8.DecodeRuneInString(s[1:])
	return 1+size < len(s) && s[1+size] == '\''
}

// stringEnd finds the end of the string that starts at i with quote q.
// A single-character quote ends at the end of its line unless the
// language lets it span lines; an unterminated string runs to the end of
// the line (or of the block, for one that may span lines).
func (l *langSpec) stringEnd(src string, i int, q string) int {
	raw := len(q) == 1 && strings.Contains(l.rawQuotes, q)
	multi := len(q) > 1 || strings.Contains(l.multiline, q)
	j := i + len(q)
	for j < len(src) {
		switch {
		case !raw && src[j] == '\\':
			j += 2
			continue
		case strings.HasPrefix(src[j:], q):
			return j + len(q)
		case src[j] == '\n' && !multi:
			return j
		}
		j++
	}
	return len(src)
}

// numberEnd consumes a number: digits, hex, a fraction, an exponent with
// its sign, _ separators and suffixes (1_000u64, 0x1F, 1.5e-3f, 10px).
func numberEnd(src string, i int) int {
	j := i
	hex := strings.HasPrefix(src[i:], "0x") || strings.HasPrefix(src[i:], "0X")
	for j < len(src) {
		c := src[j]
		switch {
		case isDigit(c) || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			j++
		case c == '.' && j+1 < len(src) && isDigit(src[j+1]):
			j++
		case (c == '+' || c == '-') && !hex && j > i && (src[j-1] == 'e' || src[j-1] == 'E'):
			j++
		case c == '%':
			j++
			return j
		default:
			return j
		}
	}
	return j
}

// highlightDiff colours a unified diff line by line.
func highlightDiff(b *strings.Builder, src string) {
	for line := range strings.Lines(src) {
		body := strings.TrimSuffix(line, "\n")
		cls := ""
		switch {
		case strings.HasPrefix(body, "+++"), strings.HasPrefix(body, "---"),
			strings.HasPrefix(body, "diff "), strings.HasPrefix(body, "index "):
			cls = clsHeader
		case strings.HasPrefix(body, "@@"):
			cls = clsMeta
		case strings.HasPrefix(body, "+"):
			cls = clsInserted
		case strings.HasPrefix(body, "-"):
			cls = clsDeleted
		}
		span(b, cls, body)
		b.WriteString(line[len(body):])
	}
}

// highlightMarkup colours HTML and XML: comments, tag names, attribute
// names and values.
func highlightMarkup(b *strings.Builder, src string) {
	i, plain := 0, 0
	emit := func(start, end int, cls string) {
		span(b, "", src[plain:start])
		span(b, cls, src[start:end])
		plain = end
	}
	for i < len(src) {
		rest := src[i:]
		switch {
		case strings.HasPrefix(rest, "<!--"):
			end := len(src)
			if j := strings.Index(rest[4:], "-->"); j >= 0 {
				end = i + 4 + j + 3
			}
			emit(i, end, clsComment)
			i = end
		case rest[0] == '<' && len(rest) > 1 && (rest[1] == '/' || rest[1] == '!' || rest[1] == '?' || isNameByte(rest[1])):
			j := i + 1
			if src[j] == '/' || src[j] == '!' || src[j] == '?' {
				j++
			}
			k := j
			for k < len(src) && (isNameByte(src[k]) || src[k] == ':' || src[k] == '-' || isDigit(src[k])) {
				k++
			}
			emit(j, k, clsKeyword)
			i = k
			// Attributes up to the end of the tag.
			for i < len(src) && src[i] != '>' && src[i] != '<' {
				c := src[i]
				switch {
				case c == '"' || c == '\'':
					end := strings.IndexByte(src[i+1:], c)
					if end < 0 {
						end = len(src)
					} else {
						end = i + 1 + end + 1
					}
					emit(i, end, clsString)
					i = end
				case isNameByte(c):
					k := i
					for k < len(src) && (isNameByte(src[k]) || src[k] == ':' || src[k] == '-' || src[k] == '.' || isDigit(src[k])) {
						k++
					}
					emit(i, k, clsAttr)
					i = k
				default:
					i++
				}
			}
		default:
			i++
		}
	}
	span(b, "", src[plain:])
}

func isNameByte(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
