package tokenizer

// SentencePiece (llama.cpp's llm_tokenizer_spm): start from single UTF-8
// characters and repeatedly merge the adjacent pair whose concatenation is
// the highest-scoring token (leftmost on ties). A final symbol that is not
// a token becomes byte tokens (<0xNN>).

// spmState holds buffers reused across the pieces of one Encode call.
type spmState struct {
	syms []symbol
	heap bigramQueue[float32] // keyed by the negated score
}

// encodeSPM tokenizes one piece whose spaces are already escaped to U+2581.
func (t *Tokenizer) encodeSPM(st *spmState, text string, out []int32) []int32 {
	syms := splitSymbols(st.syms[:0], text, nil)
	st.syms = syms
	st.heap = st.heap[:0]

	mergeChain(syms, &st.heap, func(l, r *symbol) (float32, bool) {
		id, ok := t.ids[text[l.start:l.start+l.n+r.n]]
		if !ok {
			return 0, false
		}
		var score float32
		if t.scores != nil {
			score = t.scores[id]
		}
		return -score, true
	}, nil)

	if len(syms) == 0 {
		return out
	}
	for i := int32(0); i != -1; i = syms[i].next {
		s := syms[i]
		piece := text[s.start : s.start+s.n]
		if id, ok := t.ids[piece]; ok {
			out = append(out, id)
			continue
		}
		for j := 0; j < len(piece); j++ {
			if id := t.byteTok[piece[j]]; id >= 0 {
				out = append(out, id)
			} else if t.unk >= 0 {
				out = append(out, t.unk)
			}
		}
	}
	return out
}
