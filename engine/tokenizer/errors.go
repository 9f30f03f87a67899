package tokenizer

import "errors"

var (
	// ErrUnsupportedModel is returned for a tokenizer.ggml.model other than
	// "llama" (SentencePiece) and "gpt2" (byte-level BPE).
	ErrUnsupportedModel = errors.New("tokenizer: unsupported tokenizer model")

	// ErrUnsupportedPre is returned for a BPE pre-tokenizer
	// (tokenizer.ggml.pre) this package does not implement.
	ErrUnsupportedPre = errors.New("tokenizer: unsupported pre-tokenizer")

	// ErrInvalidVocab is returned when the vocabulary metadata is missing or
	// inconsistent (no tokens, arrays of the wrong length, duplicate tokens).
	ErrInvalidVocab = errors.New("tokenizer: invalid vocabulary")
)
