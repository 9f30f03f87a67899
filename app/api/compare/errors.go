package compare

import (
	"errors"
	"fmt"
)

var (
	// ErrModelCount is returned when a comparison is not given 2 to 4
	// models.
	ErrModelCount = errors.New("compare: give 2 to 4 models")
	// ErrReference is returned when the reference asked for is not one of
	// the models.
	ErrReference = errors.New("compare: the reference must be one of the models")
	// ErrVocabMismatch is returned (inside a *VocabError) when two models
	// do not share one vocabulary: their logits are not over the same
	// tokens, so KL divergence between them means nothing.
	ErrVocabMismatch = errors.New("compare: the models' vocabularies differ")
	// ErrBadLogits is returned when a model produced NaN or infinite
	// logits, which no divergence can be computed from.
	ErrBadLogits = errors.New("compare: non-finite logits")
)

// VocabError says which two models' vocabularies differ and how.
type VocabError struct {
	A, B   string // the model files
	Detail string // e.g. "32000 tokens vs 32001", "token 17: "a" vs "b""
}

func (e *VocabError) Error() string {
	return fmt.Sprintf("compare: %s and %s have different vocabularies (%s): quality can only be compared between models that share a tokenizer",
		e.A, e.B, e.Detail)
}

func (e *VocabError) Unwrap() error { return ErrVocabMismatch }

// ErrEmptyPrompt is returned when there is no prompt to compare on.
var ErrEmptyPrompt = errors.New("compare: the prompt is empty")

// ErrOption is returned for an option Run cannot use (an unknown KV cache
// type, sampler settings out of range).
var ErrOption = errors.New("compare: invalid option")
