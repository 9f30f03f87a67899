package tokenizer

import "sort"

// Pre-tokenization splits text into words before BPE merges run, following
// llama.cpp's unicode_regex_split: a model has a list of regular
// expressions; each one splits every current piece further, the matches and
// the gaps between them both becoming pieces.
//
// llama.cpp runs most of these expressions through std::regex on a
// "collapsed" copy of the text in which every non-ASCII code point is
// replaced by one byte standing for its category (0x0B for whitespace, 0xD1
// number, 0xD2 letter, 0xD3 punctuation, 0xD4 mark, 0xD5 symbol, 0xD0 other),
// and expressions without \p{..} through std::wregex on the code points with
// non-ASCII whitespace replaced by 0x0B. The hand-written matchers below
// reproduce what those engines match, quirks included (for instance '~' is
// not \p{S} in the collapsed form).

// ptext is a piece of text as code points with their flags.
type ptext struct {
	cps []rune
	fl  []uint8
}

func (t *ptext) reset(s string) {
	t.cps = decodeCpts(t.cps[:0], s)
	if cap(t.fl) < len(t.cps) {
		t.fl = make([]uint8, len(t.cps))
	}
	t.fl = t.fl[:len(t.cps)]
	for i, r := range t.cps {
		t.fl[i] = cptFlags(r)
	}
}

// collapsed is the byte llama.cpp's collapsed text holds at position i.
func (t *ptext) collapsed(i int) byte {
	r := t.cps[i]
	if r < 128 {
		return byte(r)
	}
	return collapsedByFlags[t.fl[i]]
}

// collapsedByFlags is the byte llama.cpp's collapsed text holds for a
// code point above ASCII with the given flags: that of its first class
// of space, number, letter, punctuation, mark and symbol, or 0xD0.
var collapsedByFlags = func() (b [256]byte) {
	classes := [...]struct {
		flag uint8
		b    byte
	}{{fSpace, 0x0B}, {fNumber, 0xD1}, {fLetter, 0xD2}, {fPunct, 0xD3}, {fMark, 0xD4}, {fSymbol, 0xD5}}
	for f := range b {
		b[f] = 0xD0
		for _, c := range classes {
			if uint8(f)&c.flag != 0 {
				b[f] = c.b
				break
			}
		}
	}
	return b
}()

// wide is the code point std::wregex sees at position i.
func (t *ptext) wide(i int) rune {
	r := t.cps[i]
	if r > 0x7F && t.fl[i]&fSpace != 0 {
		return 0x0B
	}
	return r
}

// splitter splits the piece [start, end) of t and appends the lengths of
// the resulting pieces (which cover the piece exactly) to out.
type splitter interface {
	split(t *ptext, start, end int, out []int) []int
}

// pretokenize splits t with every splitter in turn and returns the piece
// lengths in code points. bufs are two scratch buffers, kept for reuse.
func pretokenize(t *ptext, sp []splitter, bufs *[2][]int) []int {
	cur := append(bufs[0][:0], len(t.cps))
	next := bufs[1][:0]
	if len(t.cps) == 0 {
		bufs[0], bufs[1] = cur, next
		return cur[:0]
	}
	for _, s := range sp {
		next = next[:0]
		start := 0
		for _, n := range cur {
			next = s.split(t, start, start+n, next)
			start += n
		}
		cur, next = next, cur
	}
	bufs[0], bufs[1] = cur, next
	return cur
}

// --- llama.cpp's hand-written splitters --------------------------------------

// splitSpan is the range [start, end) of t that one of the hand-written
// splitters cuts into pieces, appended to out as lengths.
type splitSpan struct {
	t          *ptext
	start, end int
	prev       int // where the next piece starts
	out        []int
}

// cpt is the code point at i, -1 outside the span (llama.cpp's _get_cpt).
func (s *splitSpan) cpt(i int) rune {
	if i >= s.start && i < s.end {
		return s.t.cps[i]
	}
	return -1
}

// flags are the code point's flags at i, 0 outside the span.
func (s *splitSpan) flags(i int) uint8 {
	if i >= s.start && i < s.end {
		return s.t.fl[i]
	}
	return 0
}

// add ends a piece at e (none if it would be empty) and returns its
// length.
func (s *splitSpan) add(e int) int {
	n := e - s.prev
	if n > 0 {
		s.out = append(s.out, n)
	}
	s.prev = e
	return n
}

// flagClass is a class of code points by their flags: those with one of
// mask, or (not) those inside the span with none of mask.
type flagClass struct {
	mask uint8
	not  bool
}

func (c flagClass) has(f uint8) bool {
	if c.not {
		return f&c.mask == 0 && f != 0
	}
	return f&c.mask != 0
}

// The classes of the GPT-2 expression's runs.
var (
	letters = flagClass{mask: fLetter}                               // \p{L}
	numbers = flagClass{mask: fNumber}                               // \p{N}
	others  = flagClass{mask: fSpace | fLetter | fNumber, not: true} // [^\s\p{L}\p{N}]
)

// gpt2Class is the class of the run a code point with flags f starts in
// the GPT-2 expression, if any.
func gpt2Class(f uint8) (flagClass, bool) {
	switch {
	case letters.has(f):
		return letters, true
	case numbers.has(f):
		return numbers, true
	case others.has(f):
		return others, true
	}
	return flagClass{}, false
}

// run ends the piece ` ?C+` at pos, for the class C (space: a space comes
// first), and returns where the next piece starts.
func (s *splitSpan) run(pos int, space bool, c flagClass) int {
	if space {
		pos++
	}
	for c.has(s.flags(pos)) {
		pos++
	}
	s.add(pos)
	return pos
}

// spaces ends the piece at pos, where nws whitespace code points start,
// as the expressions' last alternatives do: \s+(?!\S) (the run but its
// last code point, when more follows), \s+, or else the one code point at
// pos. It returns where the next piece starts.
func (s *splitSpan) spaces(pos, nws int) int {
	switch {
	case nws > 1 && s.cpt(pos+nws) != -1:
		pos += nws - 1
	case nws > 0:
		pos += nws
	default:
		pos++
	}
	s.add(pos)
	return pos
}

// gpt2Splitter implements
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// as llama.cpp's unicode_regex_split_custom_gpt2 does.
type gpt2Splitter struct{}

func (gpt2Splitter) split(t *ptext, start, end int, out []int) []int {
	sp := splitSpan{t: t, start: start, end: end, prev: start, out: out}
	for pos := start; pos < end; {
		c := sp.cpt(pos)
		f := sp.flags(pos)
		if c == '\'' && pos+1 < end {
			n1 := sp.cpt(pos + 1)
			if n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd' {
				pos += sp.add(pos + 2)
				continue
			}
			if pos+2 < end {
				n2 := sp.cpt(pos + 2)
				if (n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') || (n1 == 'l' && n2 == 'l') {
					pos += sp.add(pos + 3)
					continue
				}
			}
		}
		f2 := f
		if c == ' ' {
			f2 = sp.flags(pos + 1)
		}
		// ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`
		if cl, ok := gpt2Class(f2); ok {
			pos = sp.run(pos, c == ' ', cl)
			continue
		}
		nws := 0
		for sp.flags(pos+nws)&fSpace != 0 {
			nws++
		}
		pos = sp.spaces(pos, nws)
	}
	return sp.out
}

// llama3Splitter implements
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,D}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// as llama.cpp's unicode_regex_split_custom_llama3 does, with D = 3 for
// Llama 3. Qwen2's expression is the same with \p{N} alone (D = 1); llama.cpp
// runs that one through std::regex, which matches the same pieces.
// llama3Splitter is llama.cpp's llama3 expression with digits in runs
// of maxDigits; with marks (Qwen 3.5's), combining marks count as letters
// ([\p{L}\p{M}]+, [^\s\p{L}\p{M}\p{N}]).
type llama3Splitter struct {
	maxDigits int
	marks     bool
}

func (s llama3Splitter) split(t *ptext, start, end int, out []int) []int {
	sp := splitSpan{t: t, start: start, end: end, prev: start, out: out}
	fLetter := fLetter
	if s.marks {
		fLetter |= fMark
	}
	lower := func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	for pos := start; pos < end; {
		c := sp.cpt(pos)
		f := sp.flags(pos)
		if c == '\'' && pos+1 < end {
			n1 := lower(sp.cpt(pos + 1))
			if n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd' {
				pos += sp.add(pos + 2)
				continue
			}
			if pos+2 < end {
				n2 := lower(sp.cpt(pos + 2))
				if (n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') || (n1 == 'l' && n2 == 'l') {
					pos += sp.add(pos + 3)
					continue
				}
			}
		}
		// [^\r\n\p{L}\p{N}]?\p{L}+
		if !(c == '\r' || c == '\n' || f&fNumber != 0) {
			if f&fLetter != 0 || sp.flags(pos+1)&fLetter != 0 {
				pos++
				for sp.flags(pos)&fLetter != 0 {
					pos++
				}
				sp.add(pos)
				continue
			}
		}
		// \p{N}{1,D}
		if f&fNumber != 0 {
			ini := pos
			for sp.flags(pos)&fNumber != 0 {
				pos++
				if pos-ini >= s.maxDigits {
					sp.add(pos)
					ini = pos
				}
			}
			sp.add(pos)
			continue
		}
		// <space>?[^\s\p{L}\p{N}]+[\r\n]*
		f2 := f
		if c == ' ' {
			f2 = sp.flags(pos + 1)
		}
		if f2&(fSpace|fLetter|fNumber) == 0 && f != 0 {
			if c == ' ' {
				pos++
			}
			for g := sp.flags(pos); g&(fSpace|fLetter|fNumber) == 0 && g != 0; g = sp.flags(pos) {
				pos++
			}
			for c2 := sp.cpt(pos); c2 == '\r' || c2 == '\n'; c2 = sp.cpt(pos) {
				pos++
			}
			sp.add(pos)
			continue
		}
		nws := 0
		lastNL := 0
		for sp.flags(pos+nws)&fSpace != 0 {
			if c2 := sp.cpt(pos + nws); c2 == '\r' || c2 == '\n' {
				lastNL = pos + nws + 1
			}
			nws++
		}
		// \s*[\r\n]+
		if lastNL > 0 {
			pos = lastNL
			sp.add(pos)
			continue
		}
		// \s+(?!\S)|\s+|.
		pos = sp.spaces(pos, nws)
	}
	return sp.out
}

// --- small matchers for the std::regex / std::wregex expressions -------------

// finder finds the leftmost match at or after pos within [pos, end) and
// returns its start and length; ok is false when there is none. None of the
// expressions can match the empty string.
type finder interface {
	find(t *ptext, pos, end int) (ms, ml int, ok bool)
}

// regexSplitter turns a finder into a splitter with std::regex_iterator's
// behaviour: matches and the gaps between them become pieces.
type regexSplitter struct{ f finder }

func (s regexSplitter) split(t *ptext, start, end int, out []int) []int {
	pos := start
	for pos < end {
		ms, ml, ok := s.f.find(t, pos, end)
		if !ok {
			break
		}
		if ms > pos {
			out = append(out, ms-pos)
		}
		out = append(out, ml)
		pos = ms + ml
	}
	if pos < end {
		out = append(out, end-pos)
	}
	return out
}

// charPred tells whether position i of t belongs to a character class, on
// the collapsed bytes or the wide code points as the expression requires.
type charPred func(t *ptext, i int) bool

// run matches one or more characters of a class: "[...]+" or "\p{X}+".
type run struct{ in charPred }

func (m run) find(t *ptext, pos, end int) (int, int, bool) {
	for i := pos; i < end; i++ {
		if m.in(t, i) {
			j := i + 1
			for j < end && m.in(t, j) {
				j++
			}
			return i, j - i, true
		}
	}
	return 0, 0, false
}

// one matches exactly one character of a class: "[\r\n]" or "\p{N}".
type one struct{ in charPred }

func (m one) find(t *ptext, pos, end int) (int, int, bool) {
	for i := pos; i < end; i++ {
		if m.in(t, i) {
			return i, 1, true
		}
	}
	return 0, 0, false
}

// spaceRun matches "\s?X+" with ECMAScript backtracking: the optional
// whitespace is taken only when a run of X follows it.
type spaceRun struct {
	space charPred
	in    charPred
}

func (m spaceRun) find(t *ptext, pos, end int) (int, int, bool) {
	for i := pos; i < end; i++ {
		s := i
		if m.space(t, i) && i+1 < end && m.in(t, i+1) {
			s = i + 1
		} else if !m.in(t, i) {
			continue
		}
		j := s + 1
		for j < end && m.in(t, j) {
			j++
		}
		return i, j - i, true
	}
	return 0, 0, false
}

// threeDigits matches "[0-9][0-9][0-9]".
type threeDigits struct{}

func (threeDigits) find(t *ptext, pos, end int) (int, int, bool) {
	n := 0
	for i := pos; i < end; i++ {
		if r := t.cps[i]; r >= '0' && r <= '9' {
			n++
			if n == 3 {
				return i - 2, 3, true
			}
		} else {
			n = 0
		}
	}
	return 0, 0, false
}

// trailingSpace matches "\s+$": the whitespace that ends the piece.
type trailingSpace struct{}

func (trailingSpace) find(t *ptext, pos, end int) (int, int, bool) {
	j := end
	for j > pos && wSpace(t, j-1) {
		j--
	}
	if j == end {
		return 0, 0, false
	}
	return j, end - j, true
}

// Class predicates on the collapsed text (expressions that use \p{..}).

func cSpace(t *ptext, i int) bool { return isCSpace(rune(t.collapsed(i))) }

func cLetter(t *ptext, i int) bool {
	c := t.collapsed(i)
	return c == 0xD2 || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
}

func cNumber(t *ptext, i int) bool {
	c := t.collapsed(i)
	return c == 0xD1 || (c >= '0' && c <= '9')
}

// asciiPunct is llama.cpp's ASCII part of \p{P}: !-#%-*,-/:-;?-@[-]_{}
func asciiPunct(c byte) bool {
	switch {
	case c >= 0x21 && c <= 0x23, c >= 0x25 && c <= 0x2A, c >= 0x2C && c <= 0x2F,
		c >= 0x3A && c <= 0x3B, c >= 0x3F && c <= 0x40, c >= 0x5B && c <= 0x5D,
		c == 0x5F, c == 0x7B, c == 0x7D:
		return true
	}
	return false
}

func cPunct(t *ptext, i int) bool {
	c := t.collapsed(i)
	return c == 0xD3 || asciiPunct(c)
}

// cPunctDefault is [\p{P}\$\+<=>\^~\|] and cPunctFalcon adds the backtick.
func cPunctDefault(t *ptext, i int) bool {
	c := t.collapsed(i)
	if c == 0xD3 || asciiPunct(c) {
		return true
	}
	switch c {
	case '$', '+', '<', '=', '>', '^', '~', '|':
		return true
	}
	return false
}

func cPunctFalcon(t *ptext, i int) bool {
	return cPunctDefault(t, i) || t.collapsed(i) == '`'
}

// Class predicates on the wide text (expressions without \p{..}).

func wSpace(t *ptext, i int) bool { return isCSpace(t.wide(i)) }

func wCRLF(t *ptext, i int) bool {
	r := t.wide(i)
	return r == '\r' || r == '\n'
}

// runeClass is a bracket expression as sorted, non-overlapping ranges.
type runeClass [][2]rune

func (c runeClass) has(r rune) bool {
	k := sort.Search(len(c), func(k int) bool { return c[k][1] >= r })
	return k < len(c) && c[k][0] <= r
}

// parseClass reads the inside of a bracket expression made of single
// characters and a-b ranges, as written in llama.cpp's expression lists.
func parseClass(s string) runeClass {
	rs := []rune(s)
	var c runeClass
	for i := 0; i < len(rs); i++ {
		lo, hi := rs[i], rs[i]
		if i+2 < len(rs) && rs[i+1] == '-' {
			hi = rs[i+2]
			i += 2
		}
		c = append(c, [2]rune{lo, hi})
	}
	sort.Slice(c, func(a, b int) bool { return c[a][0] < c[b][0] })
	// Merge overlapping or touching ranges so that has() can binary search.
	m := c[:0]
	for _, r := range c {
		if n := len(m); n > 0 && r[0] <= m[n-1][1]+1 {
			if r[1] > m[n-1][1] {
				m[n-1][1] = r[1]
			}
			continue
		}
		m = append(m, r)
	}
	return m
}

func (c runeClass) wide(t *ptext, i int) bool { return c.has(t.wide(i)) }

// Classes used by the DeepSeek pre-tokenizers (from their tokenizer.json,
// as llama.cpp lists them).
var (
	// [一-龥ࠀ-一가-퟿]
	classCJK = parseClass("\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff")

	// [A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]
	classDeepseekLetters = parseClass("A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af" +
		"\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481" +
		"\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b" +
		"\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d" +
		"\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec" +
		"\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d" +
		"\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee" +
		"\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06" +
		"\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb" +
		"\U00010c80-\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943")

	// [!-/:-~！-／：-～‘-‟　-。]
	classDeepseekPunct = parseClass("!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002")
)

// Splitter lists per pre-tokenizer, in llama.cpp's order.
var (
	splitGPT2 = []splitter{gpt2Splitter{}}

	splitDefault = []splitter{
		regexSplitter{run{cPunctDefault}},
		gpt2Splitter{},
		regexSplitter{run{cNumber}},
		regexSplitter{threeDigits{}},
	}

	splitFalcon = []splitter{
		regexSplitter{run{cPunctFalcon}},
		gpt2Splitter{},
		regexSplitter{threeDigits{}},
	}

	splitStarcoder = []splitter{
		regexSplitter{one{cNumber}},
		gpt2Splitter{},
	}

	splitLlama3 = []splitter{llama3Splitter{maxDigits: 3}}
	splitQwen2  = []splitter{llama3Splitter{maxDigits: 1}}
	splitQwen35 = []splitter{llama3Splitter{maxDigits: 1, marks: true}}

	splitDeepseekCoder = []splitter{
		regexSplitter{one{wCRLF}},
		regexSplitter{spaceRun{cSpace, cLetter}},
		regexSplitter{spaceRun{cSpace, cPunct}},
		regexSplitter{run{classCJK.wide}},
		regexSplitter{one{cNumber}},
	}

	splitDeepseekLLM = []splitter{
		regexSplitter{one{wCRLF}},
		regexSplitter{spaceRun{wSpace, classDeepseekLetters.wide}},
		regexSplitter{spaceRun{wSpace, classDeepseekPunct.wide}},
		regexSplitter{trailingSpace{}},
		regexSplitter{run{classCJK.wide}},
		regexSplitter{run{cNumber}},
	}
)
