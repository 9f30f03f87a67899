// Package sample turns a row of logits into the next token, and finds stop
// strings in the streamed text.
//
// # The sampler chain
//
// A [Sampler] applies llama.cpp's default chain (common_sampler with its
// default sampler order, minus the samplers Churon does not offer: DRY,
// top-n-sigma, typical and XTC):
//
//	penalties → top-k → top-p → min-p → temperature → draw
//
// With Temperature <= 0 the chain is penalties → argmax: greedy decoding,
// where among equal logits the lowest token id wins (llama.cpp's "first
// maximum wins"). Truncation runs before temperature, exactly as in
// llama.cpp: top-p and min-p see the untempered probabilities, and the
// temperature only reshapes the distribution over the survivors. So
// temperature never changes which tokens are possible, only how likely
// they are.
//
// Every step is deterministic: ties in logits are broken by the lower id,
// the random stream is a fixed SplitMix64, and the floating-point work uses
// an exp written here with explicit rounding, so the same seed and the
// same logits give the same tokens on every platform and Go version.
//
// Typical use, one Sampler per sequence:
//
//	s, err := sample.New(sample.DefaultParams(), vocabSize)
//	if err != nil { ... }
//	for _, t := range promptTokens {
//		s.Accept(t) // the prompt counts for the repetition penalties
//	}
//	for {
//		tok := s.Sample(logits)
//		s.Accept(tok)
//		...
//	}
//
// # Stop strings
//
// A [StopMatcher] is fed decoded pieces and returns only text that cannot
// turn out to be the start of a stop string, never splitting a UTF-8 rune.
package sample
