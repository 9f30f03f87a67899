package tokenizer

// gpt4oFinder matches llama.cpp's GPT-4o (o200k) expression, which
// gpt-oss, Llama 4 and a few others use:
//
//	[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?
//	|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*(?:'[sS]|…)?
//	|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// llama.cpp has no hand-written splitter for it: std::regex runs it on
// the collapsed text, where every letter above ASCII is the one byte
// 0xD2. "A letter but not a-z" is then A–Z or 0xD2 (upper), "a letter but
// not A–Z" a–z or 0xD2 (lower), so a run of Hangul or of accented
// capitals is both; the matcher below reproduces the ECMAScript
// backtracking over those classes. Every code point starts some
// alternative, so the pieces are the consecutive matches.
type gpt4oFinder struct{}

var splitGPT4o = []splitter{regexSplitter{gpt4oFinder{}}}

func g4Letter(c byte) bool { return c == 0xD2 || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func g4Number(c byte) bool { return c == 0xD1 || (c >= '0' && c <= '9') }
func g4Upper(c byte) bool  { return c == 0xD2 || (c >= 'A' && c <= 'Z') }
func g4Lower(c byte) bool  { return c == 0xD2 || (c >= 'a' && c <= 'z') }
func g4Space(c byte) bool  { return isCSpace(rune(c)) }

func (gpt4oFinder) find(t *ptext, pos, end int) (int, int, bool) {
	at := func(i int) byte {
		if i >= end {
			return 0 // a NUL is none of the classes tested on it
		}
		return t.collapsed(i)
	}
	c := at(pos)

	// The two letter alternatives, after the optional prefix (which the
	// letters after it must justify: without it the match would have to
	// start with a letter, and the prefix is never one).
	s := pos
	if c != '\r' && c != '\n' && !g4Letter(c) && !g4Number(c) && pos+1 < end {
		s = pos + 1
	}
	if g4Letter(at(s)) {
		u := s
		for u < end && g4Upper(at(u)) {
			u++
		}
		// Alternative 1: upper* lower+. The greedy upper* gives back one
		// code point at a time until a lower one can follow.
		k := -1
		if u < end && g4Lower(at(u)) {
			k = u
		} else {
			for j := u - 1; j >= s; j-- {
				if at(j) == 0xD2 {
					k = j
					break
				}
			}
		}
		var e int
		if k >= 0 {
			e = k
			for e < end && g4Lower(at(e)) {
				e++
			}
		} else {
			// Alternative 2: upper+ lower*; here the upper run is plain
			// A–Z and what follows is not lower.
			e = u
		}
		e = contraction(at, e)
		return pos, e - pos, true
	}

	// \p{N}{1,3}
	if g4Number(c) {
		e := pos + 1
		for e < end && e-pos < 3 && g4Number(at(e)) {
			e++
		}
		return pos, e - pos, true
	}

	// ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
	other := func(b byte) bool { return !g4Space(b) && !g4Letter(b) && !g4Number(b) }
	s = pos
	if c == ' ' && pos+1 < end && other(at(pos+1)) {
		s = pos + 1
	}
	if s < end && other(at(s)) {
		e := s + 1
		for e < end && other(at(e)) {
			e++
		}
		for e < end && (at(e) == '\r' || at(e) == '\n' || at(e) == '/') {
			e++
		}
		return pos, e - pos, true
	}

	// What is left starts with whitespace.
	w := pos
	for w < end && g4Space(at(w)) {
		w++
	}
	// \s*[\r\n]+: through the run's last line break.
	for j := w - 1; j >= pos; j-- {
		if b := at(j); b == '\r' || b == '\n' {
			return pos, j + 1 - pos, true
		}
	}
	// \s+(?!\S): the run, or all of it but the space before a non-space.
	if w == end || w-pos == 1 {
		return pos, w - pos, true // \s+ when only one
	}
	return pos, w - 1 - pos, true
}

// contraction extends a letter match at e by an English contraction
// ('s 't 're 've 'm 'll 'd, either case), as the optional group does.
func contraction(at func(int) byte, e int) int {
	if at(e) != '\'' {
		return e
	}
	switch at(e+1) | 0x20 {
	case 's', 't', 'm', 'd':
		return e + 2
	case 'r', 'v':
		if at(e+2)|0x20 == 'e' {
			return e + 3
		}
	case 'l':
		if at(e+2)|0x20 == 'l' {
			return e + 3
		}
	}
	return e
}
