package tokenizer

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// DecodeOptions control Decode and StreamDecoder.
//
// The zero value gives llama.cpp's detokenizer without its space clean-up:
// control tokens are not shown, and for SentencePiece vocabularies with a
// space prefix the first token's leading space is dropped, so that
// Decode(Encode(s)) == s.
type DecodeOptions struct {
	// Special renders control and unknown tokens as their text (llama.cpp's
	// unparse_special / special). User-defined tokens are always rendered.
	Special bool
	// RemoveSpecial drops a leading BOS and a trailing EOS when the
	// vocabulary adds them (llama.cpp's remove_special). As in llama.cpp,
	// dropping the BOS also keeps the next token's leading space.
	// StreamDecoder drops only the leading BOS.
	RemoveSpecial bool
	// KeepLeadingSpace keeps the leading space of the first token that the
	// SentencePiece space prefix would otherwise have removed. Use it when
	// decoding a continuation, such as generated tokens after a prompt.
	KeepLeadingSpace bool
	// CleanSpaces applies llama.cpp's clean-up for vocabularies that ask
	// for it (GPT-2 style: " ," becomes ","). Together with the other
	// fields left false it makes Decode equal llama_detokenize. It breaks
	// round trips, and StreamDecoder ignores it.
	CleanSpaces bool
}

// appendPiece appends the text of token id, as llama.cpp's
// llama_token_to_piece with the given lstrip (number of leading spaces to
// drop) and special flag.
func (t *Tokenizer) appendPiece(dst []byte, id int32, lstrip int, special bool) []byte {
	if !t.valid(id) {
		return dst
	}
	a := t.attrs[id]
	if !special && a&(attrUnknown|attrControl) != 0 {
		return dst
	}
	start := len(dst)
	text := t.tokens[id]
	switch {
	case a&(attrUnknown|attrControl|attrUserDefined) != 0:
		dst = append(dst, text...)
	case a&attrNormal != 0:
		if t.kind == kindSPM {
			dst = append(dst, strings.ReplaceAll(text, "\u2581", " ")...)
		} else {
			dst = appendByteDecoded(dst, text)
		}
	case a&attrByte != 0:
		dst = append(dst, tokenByte(text))
	default:
		return dst
	}
	if lstrip > 0 {
		n := 0
		for n < lstrip && start+n < len(dst) && dst[start+n] == ' ' {
			n++
		}
		if n > 0 {
			dst = append(dst[:start], dst[start+n:]...)
		}
	}
	return dst
}

// appendByteDecoded maps a byte-level BPE token back to its bytes, writing
// llama.cpp's "[UNK_BYTE_0x..]" marker for code points outside the map.
func appendByteDecoded(dst []byte, text string) []byte {
	for i := 0; i < len(text); {
		r, n := decodeCpt(text, i)
		i += n
		if b, ok := runeToByte[r]; ok {
			dst = append(dst, b)
			continue
		}
		dst = append(dst, "[UNK_BYTE_0x"...)
		var enc [4]byte
		for _, c := range appendCpt(enc[:0], r) {
			if c < 0x10 {
				dst = append(dst, '0')
			}
			dst = strconv.AppendUint(dst, uint64(c), 16)
		}
		dst = append(dst, text...)
		dst = append(dst, ']')
	}
	return dst
}

// tokenByte reads the byte of a "<0xNN>" token as llama.cpp does (strtol
// of the two characters after "<0x"; garbage reads as 0).
func tokenByte(text string) byte {
	if len(text) < 5 {
		return 0
	}
	v, err := strconv.ParseUint(text[3:5], 16, 8)
	if err != nil {
		return 0
	}
	return byte(v)
}

// Piece returns the bytes token id stands for in text: byte tokens give
// their byte, SentencePiece's ▁ gives a space, byte-level BPE code points
// give their bytes. Control and unknown tokens give their text only when
// special is true; other unused tokens give nothing. A piece may be an
// incomplete UTF-8 sequence.
func (t *Tokenizer) Piece(id int32, special bool) []byte {
	return t.appendPiece(nil, id, 0, special)
}

// TokenBytes is Piece(id, false).
func (t *Tokenizer) TokenBytes(id int32) []byte {
	return t.appendPiece(nil, id, 0, false)
}

// Decode turns token ids back into text, following llama.cpp's
// llama_detokenize (see DecodeOptions). The result can hold invalid UTF-8
// when ids split a character.
func (t *Tokenizer) Decode(ids []int32, opt DecodeOptions) string {
	removeSpace := t.addSpacePrefix && !opt.KeepLeadingSpace
	if opt.RemoveSpecial && t.addBOS && len(ids) > 0 && ids[0] == t.bos {
		removeSpace = false
		ids = ids[1:]
	}
	if opt.RemoveSpecial && t.addEOS && len(ids) > 0 && ids[len(ids)-1] == t.eos {
		ids = ids[:len(ids)-1]
	}
	var buf []byte
	for i, id := range ids {
		lstrip := 0
		if i == 0 && removeSpace {
			lstrip = 1
		}
		buf = t.appendPiece(buf, id, lstrip, opt.Special)
	}
	if opt.CleanSpaces && t.cleanSpaces {
		buf = cleanSpaces(buf)
	}
	return string(buf)
}

// cleanSpaces is llama.cpp's detokenizer clean-up, three passes in place.
func cleanSpaces(text []byte) []byte {
	// 1: " ?", " !", " .", " ," lose the space.
	text = cleanPass(text, func(i int, x byte) (bool, bool) {
		return text[i-1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ','), false
	})
	// 2: a lone apostrophe " ' " loses both spaces.
	text = cleanPass(text, func(i int, x byte) (bool, bool) {
		lone := x == '\'' && i+1 < len(text) && text[i-1] == ' ' && text[i+1] == ' '
		return lone, lone
	})
	// 3: " 's", " 'm", " 're", " 've" lose the space.
	text = cleanPass(text, func(i int, x byte) (bool, bool) {
		if text[i-1] != ' ' || x != '\'' || i+1 >= len(text) {
			return false, false
		}
		x1 := text[i+1]
		if x1 == 's' || x1 == 'm' {
			return true, false
		}
		if i+2 < len(text) {
			x2 := text[i+2]
			return (x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e'), false
		}
		return false, false
	})
	return text
}

// cleanPass is one pass of cleanSpaces: it copies text down over the
// bytes it drops and returns what is left. For each byte x at i ≥ 1,
// drop reports whether the byte before it goes and whether the byte after
// it does too (which is zeroed, so that the next test does not see it).
func cleanPass(text []byte, drop func(i int, x byte) (before, after bool)) []byte {
	n := len(text)
	total := min(n, 1)
	for i := 1; i < n; i++ {
		x := text[i]
		before, after := drop(i, x)
		if before {
			total--
		}
		if after {
			i++
			text[i] = 0
		}
		text[total] = x
		total++
	}
	return text[:total]
}

// StreamDecoder turns tokens into text one at a time for display, emitting
// only whole UTF-8 characters: bytes of a character split across tokens
// (common for Korean with byte-fallback tokens) are held back until it
// completes. A StreamDecoder is not safe for concurrent use; each stream
// needs its own.
type StreamDecoder struct {
	t       *Tokenizer
	opt     DecodeOptions
	pending []byte
	first   bool
	strip   bool
}

// NewDecoder returns a StreamDecoder with the given options (CleanSpaces is
// ignored). For generated text that continues a prompt, set
// KeepLeadingSpace so that the first word keeps its space.
func (t *Tokenizer) NewDecoder(opt DecodeOptions) *StreamDecoder {
	return &StreamDecoder{t: t, opt: opt, first: true, strip: t.addSpacePrefix && !opt.KeepLeadingSpace}
}

// Push adds one token and returns the text that is now complete (possibly
// empty). Bytes that can never form a character come out as U+FFFD.
func (d *StreamDecoder) Push(id int32) string {
	t := d.t
	lstrip := 0
	if d.first {
		d.first = false
		if d.opt.RemoveSpecial && t.addBOS && id == t.bos {
			d.strip = false
			return ""
		}
		if d.strip {
			lstrip = 1
		}
	}
	d.pending = t.appendPiece(d.pending, id, lstrip, d.opt.Special)
	return d.emit(false)
}

// Pending reports whether bytes are held back for a character that a
// later token may complete.
func (d *StreamDecoder) Pending() bool { return len(d.pending) > 0 }

// Flush returns whatever is held back, incomplete characters as U+FFFD, and
// resets the decoder for a new stream.
func (d *StreamDecoder) Flush() string {
	s := d.emit(true)
	d.first = true
	d.strip = d.t.addSpacePrefix && !d.opt.KeepLeadingSpace
	return s
}

// emit returns the complete characters of pending (all of it when final)
// and keeps an incomplete tail.
func (d *StreamDecoder) emit(final bool) string {
	p := d.pending
	var sb strings.Builder
	i := 0
	for i < len(p) {
		if !final && !utf8.FullRune(p[i:]) {
			break
		}
		r, n := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && n <= 1 {
			sb.WriteRune(utf8.RuneError)
			i++
			continue
		}
		sb.Write(p[i : i+n])
		i += n
	}
	d.pending = append(d.pending[:0], p[i:]...)
	return sb.String()
}
