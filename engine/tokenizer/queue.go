package tokenizer

// bigram is a merge candidate: symbols left and right, size bytes
// together, with its key. The lowest key merges first, the leftmost on
// ties: BPE keys by merge rank, SentencePiece by its score negated (the
// highest score first; negation is exact).
type bigram[K int32 | float32] struct {
	left, right int32
	size        int32
	key         K
}

func (a bigram[K]) before(b bigram[K]) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.left < b.left
}

// bigramQueue is a binary min-heap of merge candidates, shared by the
// SentencePiece and BPE merge loops. It is hand-rolled rather than
// container/heap so that pushes and pops neither box values in interfaces
// nor allocate once the slice has grown.
type bigramQueue[K int32 | float32] []bigram[K]

func (h *bigramQueue[K]) push(b bigram[K]) {
	q := append(*h, b)
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !q[i].before(q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
	*h = q
}

func (h *bigramQueue[K]) pop() bigram[K] {
	q := *h
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q = q[:last]
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(q) {
			break
		}
		c := l
		if r := l + 1; r < len(q) && q[r].before(q[l]) {
			c = r
		}
		if !q[c].before(q[i]) {
			break
		}
		q[i], q[c] = q[c], q[i]
		i = c
	}
	*h = q
	return top
}
