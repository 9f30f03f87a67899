package tokenizer

import (
	"sync"
	"unicode"
)

// Code point handling that mirrors llama.cpp's unicode.cpp rather than Go's
// unicode/utf8: llama.cpp accepts overlong forms and surrogates, and turns
// every byte it cannot decode into U+FFFD, and token ids depend on exactly
// that behaviour.

// utf8Len is the sequence length implied by a lead byte, judged by its high
// nibble only (continuation bytes count as 1), as llama.cpp's
// unicode_len_utf8 does. SPM and BPE symbol splitting both use it.
func utf8Len(b byte) int {
	switch b >> 4 {
	case 0xC, 0xD:
		return 2
	case 0xE:
		return 3
	case 0xF:
		return 4
	}
	return 1
}

// decodeCpt decodes the code point at s[i]. It returns U+FFFD and 1 for a
// byte that does not start a structurally valid sequence.
func decodeCpt(s string, i int) (rune, int) {
	b0 := s[i]
	switch {
	case b0&0x80 == 0:
		return rune(b0), 1
	case b0&0x40 == 0:
		return 0xFFFD, 1
	case b0&0x20 == 0:
		if i+1 >= len(s) || s[i+1]&0xC0 != 0x80 {
			return 0xFFFD, 1
		}
		return rune(b0&0x1F)<<6 | rune(s[i+1]&0x3F), 2
	case b0&0x10 == 0:
		if i+2 >= len(s) || s[i+1]&0xC0 != 0x80 || s[i+2]&0xC0 != 0x80 {
			return 0xFFFD, 1
		}
		return rune(b0&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), 3
	case b0&0x08 == 0:
		if i+3 >= len(s) || s[i+1]&0xC0 != 0x80 || s[i+2]&0xC0 != 0x80 || s[i+3]&0xC0 != 0x80 {
			return 0xFFFD, 1
		}
		r := rune(b0&0x07)<<18 | rune(s[i+1]&0x3F)<<12 | rune(s[i+2]&0x3F)<<6 | rune(s[i+3]&0x3F)
		if r > 0x10FFFF {
			// llama.cpp throws when it re-encodes such a value; we
			// degrade to the replacement character instead.
			return 0xFFFD, 4
		}
		return r, 4
	}
	return 0xFFFD, 1
}

// decodeCpts appends the code points of s to dst.
func decodeCpts(dst []rune, s string) []rune {
	for i := 0; i < len(s); {
		r, n := decodeCpt(s, i)
		dst = append(dst, r)
		i += n
	}
	return dst
}

// appendCpt encodes r the way llama.cpp's unicode_cpt_to_utf8 does, which
// (unlike utf8.AppendRune) keeps surrogate code points as three bytes.
func appendCpt(dst []byte, r rune) []byte {
	switch {
	case r < 0:
		return append(dst, 0xEF, 0xBF, 0xBD)
	case r <= 0x7F:
		return append(dst, byte(r))
	case r <= 0x7FF:
		return append(dst, 0xC0|byte(r>>6), 0x80|byte(r&0x3F))
	case r <= 0xFFFF:
		return append(dst, 0xE0|byte(r>>12), 0x80|byte(r>>6&0x3F), 0x80|byte(r&0x3F))
	case r <= 0x10FFFF:
		return append(dst, 0xF0|byte(r>>18), 0x80|byte(r>>12&0x3F), 0x80|byte(r>>6&0x3F), 0x80|byte(r&0x3F))
	}
	return append(dst, 0xEF, 0xBF, 0xBD)
}

// Code point flags, the subset of llama.cpp's unicode_cpt_flags that the
// pre-tokenizers look at. fIn marks a position inside the current fragment,
// so that "no flags" means "out of range" as in llama.cpp's splitters.
const (
	fNumber uint8 = 1 << iota // \p{N}
	fLetter                   // \p{L}
	fMark                     // \p{M}
	fPunct                    // \p{P}
	fSymbol                   // \p{S}
	fSpace                    // White_Space property
	fIn                       // any code point within range
)

var (
	bmpFlagsOnce sync.Once
	bmpFlags     []uint8 // flags of U+0000..U+FFFF, built on first use
)

func buildBMPFlags() {
	t := make([]uint8, 0x10000)
	for i := range t {
		t[i] = fIn
	}
	mark := func(rt *unicode.RangeTable, f uint8) {
		for _, r := range rt.R16 {
			for c := uint32(r.Lo); c <= uint32(r.Hi); c += uint32(r.Stride) {
				t[c] |= f
			}
		}
		for _, r := range rt.R32 {
			for c := r.Lo; c <= r.Hi && c <= 0xFFFF; c += r.Stride {
				t[c] |= f
			}
		}
	}
	mark(unicode.N, fNumber)
	mark(unicode.L, fLetter)
	mark(unicode.M, fMark)
	mark(unicode.P, fPunct)
	mark(unicode.S, fSymbol)
	mark(unicode.White_Space, fSpace)
	bmpFlags = t
}

// cptFlags returns the flags of one code point (always including fIn).
func cptFlags(r rune) uint8 {
	if r >= 0 && r <= 0xFFFF {
		bmpFlagsOnce.Do(buildBMPFlags)
		return bmpFlags[r]
	}
	f := fIn
	switch {
	case r < 0 || r > unicode.MaxRune:
	case unicode.Is(unicode.L, r):
		f |= fLetter
	case unicode.Is(unicode.N, r):
		f |= fNumber
	case unicode.Is(unicode.M, r):
		f |= fMark
	case unicode.Is(unicode.P, r):
		f |= fPunct
	case unicode.Is(unicode.S, r):
		f |= fSymbol
	}
	return f
}

// Byte-level BPE (GPT-2): every byte is shown as a printable code point.
// Printable Latin-1 bytes stand for themselves; the rest are numbered from
// U+0100 upwards in byte order.
var (
	byteToRune [256]rune
	byteToUTF8 [256]string
	runeToByte map[rune]byte
)

func init() {
	runeToByte = make(map[rune]byte, 256)
	n := rune(0)
	for b := 0; b < 256; b++ {
		if (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = 256 + n
			n++
		}
		byteToUTF8[b] = string(byteToRune[b])
		runeToByte[byteToRune[b]] = byte(b)
	}
}

// isCSpace is C's isspace in the "C" locale, which llama.cpp uses for the
// lstrip/rstrip rules and which std::regex uses for \s.
func isCSpace(c rune) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}
