package chat

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The lexer splits a template into text and tags the way Python's Jinja2
// lexer does with trim_blocks=True and lstrip_blocks=True (Hugging Face's
// setup). Whitespace control is resolved here, completely: the text segments
// it returns are the exact bytes Jinja2 would output, so the engine below is
// never asked to trim anything. That matters because ardanlabs/jinja applies
// trim markers to the nearest text segment even when another tag stands in
// between ("{% if x %}{{ y }}\n" loses the newline after y there, not in
// Jinja2).

type segKind uint8

const (
	segText segKind = iota
	segExpr         // {{ ... }}
	segStmt         // {% ... %}
)

type segment struct {
	kind segKind
	text string  // segText: output bytes; tags: raw content between the delimiters
	line int     // 1-based line where the segment starts
	toks []token // tags only: the content's tokens, whitespace dropped
}

type tokKind uint8

const (
	tName tokKind = iota
	tString
	tInt
	tFloat
	tOp
)

type token struct {
	kind tokKind
	s    string // names, operators and numbers: the source text; strings: the decoded value
	line int
}

func (t token) is(kind tokKind, s string) bool { return t.kind == kind && t.s == s }

// normalizeNewlines turns \r\n and \r into \n and drops one trailing
// newline, as Jinja2 does with keep_trailing_newline=False.
func normalizeNewlines(src string) string {
	if strings.IndexByte(src, '\r') >= 0 {
		src = strings.ReplaceAll(src, "\r\n", "\n")
		src = strings.ReplaceAll(src, "\r", "\n")
	}
	return strings.TrimSuffix(src, "\n")
}

// isPySpace reports whether Python's str.isspace (and the re module's \s)
// holds for r. Go's unicode.IsSpace lacks the four separators U+001C..U+001F.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

func pyRstrip(s string) string { return strings.TrimRightFunc(s, isPySpace) }

// skipPySpace returns the index just past the run of whitespace at s[i:].
func skipPySpace(s string, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isPySpace(r) {
			break
		}
		i += n
	}
	return i
}

// allPySpace reports whether s is non-empty and made only of whitespace
// (Python's re.fullmatch(r"\s+", s)).
func allPySpace(s string) bool {
	return s != "" && strings.TrimLeftFunc(s, isPySpace) == ""
}

type lexer struct {
	src          string
	pos          int
	line         int
	lineStarting bool // the last consumed match ended with a newline
	segs         []segment
}

// lex splits src into segments. Comments are dropped; raw blocks become text.
func lex(src string) ([]segment, error) {
	l := &lexer{src: normalizeNewlines(src), line: 1, lineStarting: true}
	if err := l.run(); err != nil {
		return nil, err
	}
	return l.segs, nil
}

func (l *lexer) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("line %d: %w", line, fmt.Errorf(format, args...))
}

func (l *lexer) emitText(s string, line int) {
	if s != "" {
		l.segs = append(l.segs, segment{kind: segText, text: s, line: line})
	}
}

// advance moves pos to end, counting lines, and records whether the
// consumed match ended a line (Jinja2's line_starting).
func (l *lexer) advance(end int) {
	l.line += strings.Count(l.src[l.pos:end], "\n")
	l.lineStarting = end > l.pos && l.src[end-1] == '\n'
	l.pos = end
}

// stripBefore applies the opener's whitespace sign to the text before a tag
// (Jinja2's OptionalLStrip): "-" strips all whitespace, no sign on a block
// or comment tag strips the indentation of its line (lstrip_blocks).
func (l *lexer) stripBefore(text string, sign byte, isVar bool) string {
	switch {
	case sign == '-':
		return pyRstrip(text)
	case sign != '+' && !isVar:
		lpos := strings.LastIndexByte(text, '\n') + 1
		if (lpos > 0 || l.lineStarting) && allPySpace(text[lpos:]) {
			return text[:lpos]
		}
	}
	return text
}

func (l *lexer) run() error {
	src := l.src
	for l.pos < len(src) {
		start := l.pos
		idx := findOpener(src, start)
		if idx < 0 {
			l.emitText(src[start:], l.line)
			l.advance(len(src))
			return nil
		}
		text := src[start:idx]
		textLine := l.line
		open := src[idx+1] // '{', '%' or '#'
		var sign byte
		after := idx + 2
		if after < len(src) && (src[after] == '-' || src[after] == '+') {
			sign = src[after]
			after++
		}
		if open == '%' {
			if end, ok := matchRawBegin(src, after); ok {
				l.emitText(l.stripBefore(text, sign, false), textLine)
				l.advance(end)
				if err := l.raw(); err != nil {
					return err
				}
				continue
			}
		}
		l.emitText(l.stripBefore(text, sign, open == '{'), textLine)
		// The root match ends with the opener, so it never ends a line.
		l.line += strings.Count(src[start:after], "\n")
		l.pos = after
		l.lineStarting = false
		var err error
		switch open {
		case '#':
			err = l.comment()
		case '%':
			err = l.tag(segStmt)
		default:
			err = l.tag(segExpr)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// findOpener returns the index of the first "{{", "{%" or "{#" at or after i.
func findOpener(s string, i int) int {
	for {
		j := strings.IndexByte(s[i:], '{')
		if j < 0 {
			return -1
		}
		j += i
		if j+1 < len(s) && (s[j+1] == '{' || s[j+1] == '%' || s[j+1] == '#') {
			return j
		}
		i = j + 1
	}
}

// matchRawBegin matches `\s*raw\s*(-%}\s*|%})` at i (after "{%" and its sign).
func matchRawBegin(s string, i int) (int, bool) {
	i = skipPySpace(s, i)
	if !strings.HasPrefix(s[i:], "raw") {
		return 0, false
	}
	i = skipPySpace(s, i+3)
	switch {
	case strings.HasPrefix(s[i:], "-%}"):
		return skipPySpace(s, i+3), true
	case strings.HasPrefix(s[i:], "%}"):
		return i + 2, true
	}
	return 0, false
}

// blockEnd matches a block closer at i: "+%}", "-%}\s*" or "%}\n?".
func blockEnd(s string, i int) (int, bool) {
	switch {
	case strings.HasPrefix(s[i:], "+%}"):
		return i + 3, true
	case strings.HasPrefix(s[i:], "-%}"):
		return skipPySpace(s, i+3), true
	case strings.HasPrefix(s[i:], "%}"):
		i += 2
		if i < len(s) && s[i] == '\n' {
			i++
		}
		return i, true
	}
	return 0, false
}

// raw consumes a raw block's body up to and including its endraw tag.
func (l *lexer) raw() error {
	src := l.src
	line := l.line
	for i := l.pos; ; {
		j := strings.Index(src[i:], "{%")
		if j < 0 {
			return l.errorf(line, "missing end of raw directive")
		}
		j += i
		k := j + 2
		var sign byte
		if k < len(src) && (src[k] == '-' || src[k] == '+') {
			sign = src[k]
			k++
		}
		k = skipPySpace(src, k)
		if !strings.HasPrefix(src[k:], "endraw") {
			i = j + 2
			continue
		}
		k = skipPySpace(src, k+len("endraw"))
		end, ok := blockEnd(src, k)
		if !ok {
			i = j + 2
			continue
		}
		l.emitText(l.stripBefore(src[l.pos:j], sign, false), line)
		l.advance(end)
		return nil
	}
}

// comment skips a comment: its body ends at the first "#}", whatever it holds.
func (l *lexer) comment() error {
	src := l.src
	j := strings.Index(src[l.pos:], "#}")
	if j < 0 {
		return l.errorf(l.line, "missing end of comment tag")
	}
	j += l.pos
	var end int
	switch {
	case j > l.pos && src[j-1] == '+':
		end = j + 2
	case j > l.pos && src[j-1] == '-':
		end = skipPySpace(src, j+2)
	default:
		end = j + 2
		if end < len(src) && src[end] == '\n' {
			end++
		}
	}
	l.advance(end)
	return nil
}

// tag tokenizes a {% %} or {{ }} tag. Like Jinja2, a closer only counts
// outside brackets, so "}}" inside a dict literal does not end the tag.
func (l *lexer) tag(kind segKind) error {
	src := l.src
	startLine := l.line
	contentStart := l.pos
	var toks []token
	var stack []byte
	i := l.pos
	line := l.line
	for {
		if i >= len(src) {
			return l.errorf(startLine, "unexpected end of template: unclosed tag")
		}
		if len(stack) == 0 {
			if kind == segStmt {
				if end, ok := blockEnd(src, i); ok {
					l.finishTag(kind, src[contentStart:i], startLine, toks, end)
					return nil
				}
			} else {
				switch {
				case strings.HasPrefix(src[i:], "-}}"):
					l.finishTag(kind, src[contentStart:i], startLine, toks, skipPySpace(src, i+3))
					return nil
				case strings.HasPrefix(src[i:], "}}"):
					l.finishTag(kind, src[contentStart:i], startLine, toks, i+2)
					return nil
				}
			}
		}
		r, _ := utf8.DecodeRuneInString(src[i:])
		if isPySpace(r) {
			j := skipPySpace(src, i)
			line += strings.Count(src[i:j], "\n")
			i = j
			continue
		}
		tok, n, err := scanToken(src, i)
		if err != nil {
			return l.errorf(line, "%v", err)
		}
		if n == 0 {
			return l.errorf(line, "unexpected character %q", string(r))
		}
		tok.line = line
		if tok.kind == tOp {
			switch tok.s {
			case "(":
				stack = append(stack, ')')
			case "[":
				stack = append(stack, ']')
			case "{":
				stack = append(stack, '}')
			case ")", "]", "}":
				if len(stack) == 0 {
					return l.errorf(line, "unexpected %q", tok.s)
				}
				if want := stack[len(stack)-1]; want != tok.s[0] {
					return l.errorf(line, "unexpected %q, expected %q", tok.s, string(want))
				}
				stack = stack[:len(stack)-1]
			}
			if len(stack) > maxNesting {
				return l.errorf(line, "brackets nested deeper than %d", maxNesting)
			}
		}
		line += strings.Count(src[i:i+n], "\n")
		toks = append(toks, tok)
		i += n
	}
}

func (l *lexer) finishTag(kind segKind, content string, line int, toks []token, end int) {
	l.segs = append(l.segs, segment{kind: kind, text: content, line: line, toks: toks})
	l.advance(end)
}

// Operators, longest first, as in Jinja2's operator_re.
var operators = []string{"//", "**", "==", "!=", ">=", "<=",
	"+", "-", "/", "*", "%", "~", "[", "]", "(", ")", "{", "}", ">", "<", "=", ".", ":", "|", ",", ";"}

// scanToken reads one token at s[i:] (not whitespace). It follows Jinja2's
// rule order: float, integer, name, string, operator.
func scanToken(s string, i int) (token, int, error) {
	if n := scanFloat(s, i); n > 0 {
		return token{kind: tFloat, s: s[i : i+n]}, n, nil
	}
	if n := scanInt(s, i); n > 0 {
		return token{kind: tInt, s: s[i : i+n]}, n, nil
	}
	if n := scanName(s, i); n > 0 {
		return token{kind: tName, s: s[i : i+n]}, n, nil
	}
	if c := s[i]; c == '\'' || c == '"' {
		j := i + 1
		for j < len(s) && s[j] != c {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(s) {
			return token{}, 0, fmt.Errorf("unterminated string literal")
		}
		v, err := unquotePy(s[i+1 : j])
		if err != nil {
			return token{}, 0, err
		}
		return token{kind: tString, s: v}, j + 1 - i, nil
	}
	for _, op := range operators {
		if strings.HasPrefix(s[i:], op) {
			return token{kind: tOp, s: op}, len(op), nil
		}
	}
	return token{}, 0, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// digitsUnderscore matches (\d+_)*\d+ at i and returns its length.
func digitsUnderscore(s string, i int) int {
	j := i
	for {
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k == j {
			return j - i // j is after a '_' or at i: back off the '_'
		}
		if k < len(s) && s[k] == '_' && k+1 < len(s) && isDigit(s[k+1]) {
			j = k + 1
			continue
		}
		return k - i
	}
}

// scanFloat matches Jinja2's float_re: digits followed by a fraction, an
// exponent or both; never right after a '.'.
func scanFloat(s string, i int) int {
	if i > 0 && s[i-1] == '.' {
		return 0
	}
	n := digitsUnderscore(s, i)
	if n == 0 {
		return 0
	}
	j := i + n
	frac := false
	if j < len(s) && s[j] == '.' {
		if m := digitsUnderscore(s, j+1); m > 0 {
			j += 1 + m
			frac = true
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if m := digitsUnderscore(s, k); m > 0 {
			return k + m - i
		}
	}
	if frac {
		return j - i
	}
	return 0
}

// scanInt matches Jinja2's integer_re: 0b/0o/0x forms, decimals without a
// leading zero, or zeros.
func scanInt(s string, i int) int {
	if i >= len(s) || !isDigit(s[i]) {
		return 0
	}
	if s[i] == '0' && i+1 < len(s) {
		var ok func(byte) bool
		switch s[i+1] {
		case 'b', 'B':
			ok = func(c byte) bool { return c == '0' || c == '1' }
		case 'o', 'O':
			ok = func(c byte) bool { return c >= '0' && c <= '7' }
		case 'x', 'X':
			ok = func(c byte) bool {
				return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
			}
		}
		if ok != nil {
			j := i + 2
			for j < len(s) {
				if ok(s[j]) {
					j++
				} else if s[j] == '_' && j+1 < len(s) && ok(s[j+1]) {
					j += 2
				} else {
					break
				}
			}
			if j > i+2 {
				return j - i
			}
		}
	}
	if s[i] == '0' {
		j := i + 1
		for j < len(s) {
			if s[j] == '0' {
				j++
			} else if s[j] == '_' && j+1 < len(s) && s[j+1] == '0' {
				j += 2
			} else {
				break
			}
		}
		return j - i
	}
	return digitsUnderscore(s, i)
}

func isNameRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) ||
		unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Pc, r)
}

func scanName(s string, i int) int {
	j := i
	for j < len(s) {
		r, n := utf8.DecodeRuneInString(s[j:])
		if !isNameRune(r) {
			break
		}
		j += n
	}
	return j - i
}

// unquotePy decodes a string literal's body the way Jinja2 does (Python's
// "unicode-escape" codec): unknown escapes are kept with their backslash.
func unquotePy(s string) (string, error) {
	if strings.IndexByte(s, '\\') < 0 {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case '\n':
			// A backslash-newline continues the line.
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := 0
			j := i
			for ; j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7'; j++ {
				v = v*8 + int(s[j]-'0')
			}
			b.WriteRune(rune(v))
			i = j - 1
		case 'x', 'u', 'U':
			n := 2
			switch e {
			case 'u':
				n = 4
			case 'U':
				n = 8
			}
			if i+1+n > len(s) {
				return "", fmt.Errorf("truncated \\%c escape in string literal", e)
			}
			v := 0
			for _, h := range s[i+1 : i+1+n] {
				d := hexVal(h)
				if d < 0 {
					return "", fmt.Errorf("invalid \\%c escape in string literal", e)
				}
				v = v*16 + d
			}
			if v > unicode.MaxRune {
				return "", fmt.Errorf("\\U escape out of range in string literal")
			}
			b.WriteRune(rune(v))
			i += n
		case 'N':
			return "", fmt.Errorf("\\N{...} escapes are not supported in string literals")
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String(), nil
}

func hexVal(r rune) int {
	switch {
	case r >= '0' && r <= '9':
		return int(r - '0')
	case r >= 'a' && r <= 'f':
		return int(r-'a') + 10
	case r >= 'A' && r <= 'F':
		return int(r-'A') + 10
	}
	return -1
}
