package tokenizer

// Byte-level BPE (llama.cpp's llm_tokenizer_bpe): pre-tokenize into words,
// show each byte of a word as its GPT-2 code point, then repeatedly merge
// the adjacent pair with the lowest merge rank (leftmost on ties). Each
// word is merged on its own, so the work is linear in the text length for
// any realistic word length.

// bpeState holds buffers reused across the words of one Encode call.
type bpeState struct {
	pt   ptext
	offs [2][]int
	utf  []byte
	word []byte
	syms []symbol
	heap bigramQueue[int32] // keyed by merge rank
}

// encodeBPE tokenizes one piece of raw text (no special tokens in it).
func (t *Tokenizer) encodeBPE(st *bpeState, text string, out []int32) []int32 {
	st.pt.reset(text)
	lens := pretokenize(&st.pt, t.split, &st.offs)
	start := 0
	for _, n := range lens {
		st.utf = st.utf[:0]
		for _, r := range st.pt.cps[start : start+n] {
			st.utf = appendCpt(st.utf, r)
		}
		start += n
		st.word = st.word[:0]
		for _, b := range st.utf {
			st.word = append(st.word, byteToUTF8[b]...)
		}
		out = t.mergeWord(st, string(st.word), out)
	}
	return out
}

// rank returns the merge rank of the pair (a, b), or -1.
func (t *Tokenizer) rank(word string, a, b *symbol) int32 {
	if a.id >= 0 && b.id >= 0 {
		if r, ok := t.rankID[uint64(uint32(a.id))<<32|uint64(uint32(b.id))]; ok {
			return r
		}
		return -1
	}
	if t.rankStr == nil {
		return -1
	}
	k := [2]string{word[a.start : a.start+a.n], word[b.start : b.start+b.n]}
	if r, ok := t.rankStr[k]; ok {
		return r
	}
	return -1
}

// tokenID is the id of the token s spans in word, -1 if it is none.
func (t *Tokenizer) tokenID(word string, s *symbol) int32 {
	if id, ok := t.ids[word[s.start:s.start+s.n]]; ok {
		return id
	}
	return -1
}

// mergeWord runs the BPE merges over one byte-encoded word.
func (t *Tokenizer) mergeWord(st *bpeState, word string, out []int32) []int32 {
	if t.ignoreMerges {
		if id, ok := t.ids[word]; ok {
			return append(out, id)
		}
	}
	syms := splitSymbols(st.syms[:0], word, t.ids)
	st.syms = syms
	st.heap = st.heap[:0]

	mergeChain(syms, &st.heap, func(l, r *symbol) (int32, bool) {
		rank := t.rank(word, l, r)
		return rank, rank >= 0
	}, func(s *symbol) { s.id = t.tokenID(word, s) })

	if len(syms) == 0 {
		return out
	}
	for i := int32(0); i != -1; i = syms[i].next {
		s := syms[i]
		if s.id >= 0 {
			out = append(out, s.id)
			continue
		}
		// Not a token: llama.cpp looks each byte of the encoded text up as
		// a one-byte token and drops those that are not.
		piece := word[s.start : s.start+s.n]
		for j := 0; j < len(piece); j++ {
			if id, ok := t.ids[piece[j:j+1]]; ok {
				out = append(out, id)
			}
		}
	}
	return out
}
