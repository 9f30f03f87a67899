package sample

import "errors"

var (
	// ErrInvalidParams is wrapped by every error from [Params.Validate].
	ErrInvalidParams = errors.New("sample: invalid parameters")
	// ErrVocabSize is returned by [New] for a vocabulary it cannot serve.
	ErrVocabSize = errors.New("sample: invalid vocabulary size")
)
