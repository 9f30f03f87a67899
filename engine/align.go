package engine

import (
	"strings"

	"github.com/churon/churon/engine/tokenizer"
)

// AlignPrompt lets a sequence that holds cached reuse it for prompt even
// where the two tokenize the same text differently, and returns the
// prompt to feed and how many of its first tokens the cache already holds.
//
// The tokens a model generates are often not the ones its tokenizer makes
// of their text: re-tokenized for the next turn, an answer turns into
// other ids, and a cache kept by token ids matches only up to the
// answer's first such difference — so a follow-up would process the
// whole answer again. llama-server keeps the generated ids for this
// reason. AlignPrompt keeps them too: where cached and prompt spell the
// same bytes up to a point at which both have a token boundary, it
// returns cached's tokens up to there followed by prompt's from there.
// The result spells exactly the prompt's text; special tokens (control,
// user-defined, unknown) must stand at the same place in both, because
// their text is not what they mean. The cache's tokens can be more than
// the prompt's for the same bytes: a result longer than maxLen is not
// made, and the prompt is returned as it is.
func (m *Model) AlignPrompt(cached, prompt []int32, maxLen int) (ids []int32, reused int) {
	n := CommonPrefix(cached, prompt)
	if n == len(cached) || n == len(prompt) {
		return prompt, n
	}
	a := spell(m.tok, cached[n:])
	b := spell(m.tok, prompt[n:])
	ka, kb := a.agree(b)
	if ka == 0 || len(prompt)+ka-kb > maxLen {
		return prompt, n
	}
	ids = make([]int32, 0, n+ka+len(prompt)-n-kb)
	ids = append(ids, cached[:n+ka]...)
	ids = append(ids, prompt[n+kb:]...)
	return ids, n + ka
}

// spelling is a run of tokens as the bytes they stand for.
type spelling struct {
	text    []byte
	ends    []int  // ends[i]: the byte offset just after token i
	special []bool // special[i]: token i means more than its text
	ids     []int32
}

func spell(tok *tokenizer.Tokenizer, ids []int32) spelling {
	s := spelling{ends: make([]int, len(ids)), special: make([]bool, len(ids)), ids: ids}
	for i, id := range ids {
		s.text = append(s.text, tok.Piece(id, true)...)
		s.ends[i] = len(s.text)
		s.special[i] = isSpecial(tok, id)
	}
	return s
}

// isSpecial reports whether id means more than its text: a control,
// user-defined or unknown token.
func isSpecial(tok *tokenizer.Tokenizer, id int32) bool {
	switch tok.TokenType(id) {
	case tokenizer.TokenNormal, tokenizer.TokenByte:
		return false
	}
	return true
}

// agree returns how many tokens of s and of t spell the same bytes and end
// at the same offset, as far as the two agree: the latest common boundary
// within their common byte prefix, where every special token before it
// stands in both at the same place.
func (s spelling) agree(t spelling) (ks, kt int) {
	limit := 0
	for limit < len(s.text) && limit < len(t.text) && s.text[limit] == t.text[limit] {
		limit++
	}
	i, j := 0, 0
	for i < len(s.ends) && j < len(t.ends) {
		es, et := s.ends[i], t.ends[j]
		switch {
		case es > limit || et > limit:
			return ks, kt
		case es == et:
			if (s.special[i] || t.special[j]) && s.ids[i] != t.ids[j] {
				return ks, kt
			}
			i, j = i+1, j+1
			ks, kt = i, j
		case es < et:
			if s.special[i] {
				return ks, kt // a special token inside one of t's
			}
			i++
		default:
			if t.special[j] {
				return ks, kt
			}
			j++
		}
	}
	return ks, kt
}

// CommonPrefix is the length of the longest common prefix of two token
// sequences: how much of b a sequence that holds a can keep. The KV
// cache's store and the session's slots ask it too.
func CommonPrefix(a, b []int32) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// FollowUp builds the prompt for a conversation's next answer keeping the
// ids the model generated for its last one, as AlignPrompt cannot when
// the answer's text is not what those ids spell: the text a person sees
// is decoded for display (an incomplete character becomes U+FFFD, control
// tokens vanish, a stop string is cut), so tokenizing it again can differ
// from the generated ids anywhere, and a synthetic model's random output
// differs at once.
//
// cached holds the last answer's prompt — its first prompt tokens, which
// the caller knows to be the ones that answer was generated from (before
// is their text: the rendered conversation up to the answer) — followed
// by the generated tokens of the answer that the sequence holds (the
// first generated of them are the answer's, the rest are ignored); answer is the
// answer as shown (generated without RenderSpecial); full is the new
// prompt's text, which starts with before+answer. FollowUp keeps as many
// generated tokens as display as the start of answer, and tokenizes the
// rest of full after them. It reports false when full does not continue
// before+answer (an edited history, a dropped turn).
func (m *Model) FollowUp(cached []int32, prompt, generated int, before, answer, full string) ([]int32, bool) {
	if prompt > len(cached) || !strings.HasPrefix(full, before+answer) {
		return nil, false
	}
	tok := m.tok
	// The answer's own tokens: the cache may hold more (a later turn, since
	// gone), and the answer's end of generation is the template's to say,
	// once, after it.
	gen := cached[prompt:min(len(cached), prompt+max(0, generated))]
	for len(gen) > 0 && isSpecial(tok, gen[len(gen)-1]) {
		gen = gen[:len(gen)-1]
	}
	dec := tok.NewDecoder(tokenizer.DecodeOptions{KeepLeadingSpace: true})
	shown := make([]int, len(gen)+1) // bytes of answer shown after g tokens; -1: mid-character
	var text []byte
	for i, id := range gen {
		text = append(text, dec.Push(id)...)
		shown[i+1] = len(text)
		if dec.Pending() {
			shown[i+1] = -1
		}
	}
	// All of them, the decoder flushed, are the whole answer as it was
	// shown when the cache holds every token generated (an answer that
	// ended, or the session fed its last token): nothing to tokenize again
	// even where the answer ends mid-character.
	if end := append(text, dec.Flush()...); len(end) >= len(text) && shown[len(gen)] < 0 {
		shown[len(gen)] = len(end)
		text = end
	}
	for g := len(gen); g >= 0; g-- {
		n := shown[g]
		if n < 0 || n > len(answer) || string(text[:n]) != answer[:n] {
			continue
		}
		// What follows — the rest of the answer's text, if the cache lacks
		// its last tokens, then the template's next turn — is tokenized
		// as text that continues, not as a prompt's start.
		rest := tok.Encode(full[len(before)+n:], tokenizer.EncodeOptions{ParseSpecial: true, Continue: true})
		ids := make([]int32, 0, prompt+g+len(rest))
		ids = append(ids, cached[:prompt+g]...)
		return append(ids, rest...), true
	}
	return nil, false
}
