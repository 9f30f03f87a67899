package tokenizer

import (
	"slices"
	"strings"
)

// Tokenizer turns text into token ids and back, exactly as llama.cpp does
// for the same vocabulary. It is immutable after New or FromGGUF and safe
// for concurrent use.
type Tokenizer struct {
	kind  vocabKind
	model string
	pre   string

	tokens []string
	scores []float32
	types  []TokenType
	attrs  []attr
	ids    map[string]int32

	bos, eos, unk, pad, eot, eom int32
	addBOS, addEOS               bool
	addSpacePrefix               bool
	cleanSpaces                  bool
	ignoreMerges                 bool
	eog                          map[int32]bool

	// specials are the control, user-defined and unknown tokens, longest
	// text first: the order in which they are cut out of input text.
	specials []int32

	// SPM: the token for each byte when a character has no token.
	byteTok [256]int32

	// BPE.
	split   []splitter
	rankID  map[uint64]int32    // (left id, right id) -> merge rank
	rankStr map[[2]string]int32 // merges naming a non-token
}

// EncodeOptions control Encode.
type EncodeOptions struct {
	// AddSpecial adds BOS and/or EOS as the vocabulary's metadata asks
	// (tokenizer.ggml.add_bos_token / add_eos_token).
	AddSpecial bool
	// ParseSpecial turns the text of control tokens (such as
	// "<|im_start|>") into those tokens. User-defined tokens are always
	// recognised, as in llama.cpp; control and unknown tokens only with
	// ParseSpecial. Leave it off for text typed by a person.
	ParseSpecial bool
	// Continue tokenizes text that continues text already tokenized: no
	// space prefix before its first piece (SentencePiece), as the
	// continuation of a sentence has none.
	Continue bool
}

// fragment is a piece of input: raw text [s, e), or a special token.
type fragment struct {
	tok  int32 // -1 for raw text
	s, e int
}

// Encode tokenizes text. It matches llama.cpp's llama_tokenize with
// add_special = opt.AddSpecial and parse_special = opt.ParseSpecial.
func (t *Tokenizer) Encode(text string, opt EncodeOptions) []int32 {
	var frags []fragment
	if text != "" {
		frags = t.partition(text, opt.ParseSpecial)
	}
	out := make([]int32, 0, len(text)/3+4)
	if opt.AddSpecial && t.addBOS && t.bos >= 0 {
		out = append(out, t.bos)
	}
	switch t.kind {
	case kindSPM:
		var st spmState
		prevSpecial := !opt.Continue // the first piece gets the space prefix too
		for _, f := range frags {
			if f.tok >= 0 {
				out = append(out, f.tok)
				prevSpecial = true
				continue
			}
			s := text[f.s:f.e]
			if t.addSpacePrefix && prevSpecial {
				s = " " + s
			}
			out = t.encodeSPM(&st, strings.ReplaceAll(s, " ", "\u2581"), out)
			prevSpecial = false
		}
	case kindBPE:
		var st bpeState
		for _, f := range frags {
			if f.tok >= 0 {
				out = append(out, f.tok)
				continue
			}
			out = t.encodeBPE(&st, text[f.s:f.e], out)
		}
	}
	if opt.AddSpecial && t.addEOS && t.eos >= 0 {
		out = append(out, t.eos)
	}
	return out
}

// partition cuts special tokens out of text, following llama.cpp's
// tokenizer_st_partition: each special token in turn, longest first, is
// searched in every remaining raw piece; lstrip/rstrip tokens swallow the
// whitespace beside them.
func (t *Tokenizer) partition(text string, parseSpecial bool) []fragment {
	frags := []fragment{{tok: -1, s: 0, e: len(text)}}
	var next []fragment
	for _, id := range t.specials {
		a := t.attrs[id]
		if !parseSpecial && a&(attrControl|attrUnknown) != 0 {
			continue
		}
		tt := t.tokens[id]
		if !strings.Contains(text, tt) {
			continue
		}
		next = next[:0]
		for _, f := range frags {
			if f.tok >= 0 {
				next = append(next, f)
				continue
			}
			off, end := f.s, f.e
			for {
				i := strings.Index(text[off:end], tt)
				if i < 0 {
					break
				}
				m := off + i
				if m > off {
					l := m
					if a&attrLStrip != 0 {
						for l > off && isCSpace(rune(text[l-1])) {
							l--
						}
					}
					if l > off {
						next = append(next, fragment{tok: -1, s: off, e: l})
					}
				}
				next = append(next, fragment{tok: id})
				r := m + len(tt)
				if r >= end {
					off = end
					break
				}
				if a&attrRStrip != 0 {
					for r < end && isCSpace(rune(text[r])) {
						r++
					}
				}
				off = r
			}
			if off < end {
				next = append(next, fragment{tok: -1, s: off, e: end})
			}
		}
		frags, next = next, frags
	}
	return frags
}

// BOS returns the beginning-of-sequence token, or -1 if there is none.
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS returns the end-of-sequence token, or -1 if there is none.
func (t *Tokenizer) EOS() int32 { return t.eos }

// EOT returns the end-of-turn token (from metadata or detected by its
// text, such as "<|eot_id|>" or "<|im_end|>"), or -1 if there is none.
func (t *Tokenizer) EOT() int32 { return t.eot }

// EOM returns the end-of-message token ("<|eom_id|>"), or -1.
func (t *Tokenizer) EOM() int32 { return t.eom }

// UNK returns the unknown token, or -1.
func (t *Tokenizer) UNK() int32 { return t.unk }

// PAD returns the padding token, or -1.
func (t *Tokenizer) PAD() int32 { return t.pad }

// IsEOG reports whether id ends generation: EOS, EOT, EOM and the other
// tokens llama.cpp recognises by their text.
func (t *Tokenizer) IsEOG(id int32) bool { return id >= 0 && t.eog[id] }

// EOG returns the end-of-generation tokens in increasing order.
func (t *Tokenizer) EOG() []int32 {
	out := make([]int32, 0, len(t.eog))
	for id := range t.eog {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// VocabSize is the number of tokens.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// AddBOS reports whether Encode with AddSpecial puts BOS first.
func (t *Tokenizer) AddBOS() bool { return t.addBOS && t.bos >= 0 }

// AddEOS reports whether Encode with AddSpecial puts EOS last.
func (t *Tokenizer) AddEOS() bool { return t.addEOS && t.eos >= 0 }

// Model is tokenizer.ggml.model: "llama" or "gpt2".
func (t *Tokenizer) Model() string { return t.model }

// Pre is tokenizer.ggml.pre as given (empty when the file has none).
func (t *Tokenizer) Pre() string { return t.pre }

func (t *Tokenizer) valid(id int32) bool { return id >= 0 && int(id) < len(t.tokens) }

// Token returns the vocabulary text of id ("" when out of range).
func (t *Tokenizer) Token(id int32) string {
	if !t.valid(id) {
		return ""
	}
	return t.tokens[id]
}

// TokenType returns the type of id. Tokens that llama.cpp treats as control
// tokens because of their text (such as "<|im_end|>") report
// TokenControl; out-of-range ids report TokenUndefined.
func (t *Tokenizer) TokenType(id int32) TokenType {
	if !t.valid(id) {
		return TokenUndefined
	}
	for _, ta := range typeAttrs {
		if t.attrs[id]&ta.attr != 0 {
			return ta.typ
		}
	}
	return t.types[id]
}

// Score returns the SentencePiece score of id (0 when the vocabulary has
// none).
func (t *Tokenizer) Score(id int32) float32 {
	if !t.valid(id) || t.scores == nil {
		return 0
	}
	return t.scores[id]
}

// Lookup returns the id of the token whose vocabulary text is piece.
func (t *Tokenizer) Lookup(piece string) (int32, bool) {
	id, ok := t.ids[piece]
	return id, ok
}
