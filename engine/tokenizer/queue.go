package tokenizer

// bigramQueue is a binary min-heap of merge candidates, shared by the
// SentencePiece and BPE merge loops; T says which candidate goes first.
// It is hand-rolled rather than container/heap so that pushes and pops
// neither box values in interfaces nor allocate once the slice has grown.
type bigramQueue[T interface{ before(T) bool }] []T

func (h *bigramQueue[T]) push(b T) {
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

func (h *bigramQueue[T]) pop() T {
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
