package testutil

import "math/rand/v2"

// Tokens returns n token ids from 1 to vocab-1 (0 is often a special
// token), the same ones for the same seed: input for tests that need
// some text, not a particular one.
func Tokens(n, vocab int, seed uint64) []int32 {
	r := rand.New(rand.NewPCG(seed, 3))
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(1 + r.IntN(vocab-1))
	}
	return ids
}
