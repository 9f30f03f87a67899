package tokenizer

import "testing"

// TestQwen35PreVectors compares the qwen35 pre-tokenizer with llama.cpp's
// on Qwen3's vocabulary under that pre-tokenizer
// (ggml-vocab-qwen35pre.gguf: no package carries Qwen 3.5's own 248k
// vocabulary yet): the texts of the gpt-oss vectors plus ones where qwen35
// joins combining marks to letters (Hangul jamo, Indic, Thai, Arabic
// harakat, decomposed accents, marks after digits, punctuation and
// spaces, keycaps) and <think>/<tool_call>, which Qwen's vocabulary has as
// added tokens matched in plain text; then Qwen 3.5 chat prompts from
// engine/chat's golden with their special tokens parsed. The reference is
// testdata/qwen35pre.tokens.json, recorded by
// tools/llamacpp-bench/tokenize.mjs --set qwen35 from llama.cpp v0.5.0.
func TestQwen35PreVectors(t *testing.T) {
	checkTokensFile(t, "testdata/qwen35pre.tokens.json", "qwen35pre", 90)
}
