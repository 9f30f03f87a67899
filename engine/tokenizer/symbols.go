package tokenizer

// The chain of symbols both merge algorithms (BPE and SentencePiece's)
// work on: the text's UTF-8 characters at first, neighbours merged into
// one as the algorithm picks pairs.

// symbol is one span of the text in the chain.
type symbol struct {
	start, n   int32 // byte span in the text being tokenized
	prev, next int32 // neighbours in the chain, -1 at the ends
	id         int32 // token id of the span, -1 when it is not a token (BPE)
}

// splitSymbols appends text's characters to syms as a chain, each as
// long as its lead byte says (utf8Len) or as what is left of text. With
// ids, each symbol's id is its token's (-1 if none); without, 0.
func splitSymbols(syms []symbol, text string, ids map[string]int32) []symbol {
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		i := int32(len(syms))
		next := i + 1
		if off+n == len(text) {
			next = -1
		}
		var id int32
		if ids != nil {
			var ok bool
			if id, ok = ids[text[off:off+n]]; !ok {
				id = -1
			}
		}
		syms = append(syms, symbol{start: int32(off), n: int32(n), prev: i - 1, next: next, id: id})
		off += n
	}
	return syms
}

// mergeChain runs a merge algorithm over the chain: it queues every two
// neighbours that pair says form a candidate (with its key), then merges
// the best candidate, queues the pairs the merged symbol forms with its
// new neighbours, and so on until no candidate is left. merged, if not
// nil, updates each symbol that grew.
func mergeChain[K int32 | float32](syms []symbol, q *bigramQueue[K], pair func(l, r *symbol) (K, bool), merged func(s *symbol)) {
	push := func(left, right int32) {
		if left < 0 || right < 0 {
			return
		}
		if key, ok := pair(&syms[left], &syms[right]); ok {
			q.push(bigram[K]{left: left, right: right, key: key, size: syms[left].n + syms[right].n})
		}
	}
	for i := 1; i < len(syms); i++ {
		push(int32(i-1), int32(i))
	}
	for len(*q) > 0 {
		b := q.pop()
		if !mergeSymbols(syms, b.left, b.right, b.size) {
			continue
		}
		l := &syms[b.left]
		if merged != nil {
			merged(l)
		}
		push(l.prev, b.left)
		push(b.left, l.next)
	}
}

// mergeSymbols merges right into left, its neighbour, and reports whether
// it did: a pair queued when the two spans took size bytes together is
// stale once either side was merged away or grew. Both spans start where
// they did, so comparing sizes is enough.
func mergeSymbols(syms []symbol, left, right, size int32) bool {
	l, r := &syms[left], &syms[right]
	if l.n == 0 || r.n == 0 || l.n+r.n != size {
		return false
	}
	l.n += r.n
	r.n = 0
	l.next = r.next
	if r.next >= 0 {
		syms[r.next].prev = left
	}
	return true
}
