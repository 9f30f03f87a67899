package tokenizer

// Byte-level BPE (llama.cpp's llm_tokenizer_bpe): pre-tokenize into words,
// show each byte of a word as its GPT-2 code point, then repeatedly merge
// the adjacent pair with the lowest merge rank (leftmost on ties). Each
// word is merged on its own, so the work is linear in the text length for
// any realistic word length.

type bpeBigram struct {
	left, right int32
	rank        int32
	size        int32
}

// before orders the queue: lower rank first, then leftmost.
func (a bpeBigram) before(b bpeBigram) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.left < b.left
}

// bpeState holds buffers reused across the words of one Encode call.
type bpeState struct {
	pt   ptext
	offs [2][]int
	utf  []byte
	word []byte
	syms []symbol
	heap bigramQueue[bpeBigram]
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

// mergeWord runs the BPE merges over one byte-encoded word.
func (t *Tokenizer) mergeWord(st *bpeState, word string, out []int32) []int32 {
	if t.ignoreMerges {
		if id, ok := t.ids[word]; ok {
			return append(out, id)
		}
	}
	syms := st.syms[:0]
	for off := 0; off < len(word); {
		n := min(utf8Len(word[off]), len(word)-off)
		i := int32(len(syms))
		next := i + 1
		if off+n == len(word) {
			next = -1
		}
		id, ok := t.ids[word[off:off+n]]
		if !ok {
			id = -1
		}
		syms = append(syms, symbol{start: int32(off), n: int32(n), prev: i - 1, next: next, id: id})
		off += n
	}
	st.syms = syms
	st.heap = st.heap[:0]

	add := func(left, right int32) {
		if left < 0 || right < 0 {
			return
		}
		r := t.rank(word, &syms[left], &syms[right])
		if r < 0 {
			return
		}
		st.heap.push(bpeBigram{left: left, right: right, rank: r, size: syms[left].n + syms[right].n})
	}
	for i := 1; i < len(syms); i++ {
		add(int32(i-1), int32(i))
	}
	for len(st.heap) > 0 {
		b := st.heap.pop()
		l, r := &syms[b.left], &syms[b.right]
		// A pair is stale when either side was merged away or grew; both
		// spans start where they did, so comparing sizes is enough.
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		if id, ok := t.ids[word[l.start:l.start+l.n]]; ok {
			l.id = id
		} else {
			l.id = -1
		}
		add(l.prev, b.left)
		add(b.left, l.next)
	}

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
