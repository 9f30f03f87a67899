package tokenizer

// SentencePiece (llama.cpp's llm_tokenizer_spm): start from single UTF-8
// characters and repeatedly merge the adjacent pair whose concatenation is
// the highest-scoring token (leftmost on ties). A final symbol that is not
// a token becomes byte tokens (<0xNN>).

type symbol struct {
	start, n   int32 // byte span in the text being tokenized
	prev, next int32 // neighbours in the chain, -1 at the ends
	id         int32 // token id of the span, -1 when it is not a token (BPE)
}

type spmBigram struct {
	left, right int32
	score       float32
	size        int32
}

// before orders the queue: higher score first, then leftmost.
func (a spmBigram) before(b spmBigram) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.left < b.left
}

// spmState holds buffers reused across the pieces of one Encode call.
type spmState struct {
	syms []symbol
	heap bigramQueue[spmBigram]
}

// encodeSPM tokenizes one piece whose spaces are already escaped to U+2581.
func (t *Tokenizer) encodeSPM(st *spmState, text string, out []int32) []int32 {
	syms := st.syms[:0]
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		i := int32(len(syms))
		next := i + 1
		if off+n == len(text) {
			next = -1
		}
		syms = append(syms, symbol{start: int32(off), n: int32(n), prev: i - 1, next: next})
		off += n
	}
	st.syms = syms
	st.heap = st.heap[:0]

	tryAdd := func(left, right int32) {
		if left < 0 || right < 0 {
			return
		}
		l := syms[left]
		size := l.n + syms[right].n
		id, ok := t.ids[text[l.start:l.start+size]]
		if !ok {
			return
		}
		var score float32
		if t.scores != nil {
			score = t.scores[id]
		}
		st.heap.push(spmBigram{left: left, right: right, score: score, size: size})
	}
	for i := 1; i < len(syms); i++ {
		tryAdd(int32(i-1), int32(i))
	}
	for len(st.heap) > 0 {
		b := st.heap.pop()
		l, r := &syms[b.left], &syms[b.right]
		// Skip pairs made stale by an earlier merge.
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		tryAdd(l.prev, b.left)
		tryAdd(b.left, l.next)
	}

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
