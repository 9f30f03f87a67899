// Package kvring says how many KV rows a sliding-window attention layer
// keeps: the one rule the engine's caches (engine/backend) and the memory
// fit check (models/fit) share, so that what the fit check counts is what
// a sequence allocates.
package kvring

// Margin is how many rows a sliding-window layer's ring keeps beyond its
// window. It bounds two things alike: the positions one pass may add (a
// pass stores all its keys before any of its queries attends, so its
// first query's window and the pass must fit the ring together), and how
// far back a sequence can be cut — an edit, a regenerated answer — and go
// on without running its tokens again. 512 is twice the engine's prompt
// chunk (256), so an answer of up to 512 tokens is regenerated from the
// cache; llama.cpp sizes its sliding-window cache the same way (window +
// its micro-batch of 512).
const Margin = 512

// align is the granularity of a ring: the CPU's attention walks the cache
// in blocks of 64 positions aligned to multiples of 64, so in a ring of
// whole blocks a block is never split by the wrap.
const align = 64

// Rows is the rows a sliding-window layer of the given window keeps for
// a sequence of context positions: window − 1 + Margin, rounded up to a
// multiple of 64; 0 (a row per position) when that would not be less
// than the context, or when there is no window.
func Rows(window, context int) int {
	if window <= 0 {
		return 0
	}
	r := (window - 1 + Margin + align - 1) / align * align
	if r >= context {
		return 0
	}
	return r
}
