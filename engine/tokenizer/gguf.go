package tokenizer

import (
	"fmt"
	"math"

	"github.com/churon/churon/engine/gguf"
)

// GGUF metadata keys read by VocabFromGGUF.
const (
	keyModel          = "tokenizer.ggml.model"
	keyPre            = "tokenizer.ggml.pre"
	keyTokens         = "tokenizer.ggml.tokens"
	keyScores         = "tokenizer.ggml.scores"
	keyTokenType      = "tokenizer.ggml.token_type"
	keyMerges         = "tokenizer.ggml.merges"
	keyBOS            = "tokenizer.ggml.bos_token_id"
	keyEOS            = "tokenizer.ggml.eos_token_id"
	keyUNK            = "tokenizer.ggml.unknown_token_id"
	keyPAD            = "tokenizer.ggml.padding_token_id"
	keyEOT            = "tokenizer.ggml.eot_token_id"
	keyEOM            = "tokenizer.ggml.eom_token_id"
	keyAddBOS         = "tokenizer.ggml.add_bos_token"
	keyAddEOS         = "tokenizer.ggml.add_eos_token"
	keyAddSpacePrefix = "tokenizer.ggml.add_space_prefix"
	keyName           = "general.name"
)

// FromGGUF builds the tokenizer of a GGUF file.
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	v, err := VocabFromGGUF(f)
	if err != nil {
		return nil, err
	}
	return New(v)
}

// VocabFromGGUF reads the tokenizer metadata of a GGUF file. The result
// does not refer to f, which may be closed afterwards.
func VocabFromGGUF(f *gguf.File) (Vocab, error) {
	if f == nil {
		return Vocab{}, fmt.Errorf("%w: nil gguf file", ErrInvalidVocab)
	}
	var v Vocab
	var ok bool
	if v.Model, ok = f.String(keyModel); !ok {
		return Vocab{}, fmt.Errorf("%w: %s is missing", ErrUnsupportedModel, keyModel)
	}
	v.Pre, _ = f.String(keyPre)
	v.Name, _ = f.String(keyName)
	if v.Tokens, ok = f.Strings(keyTokens); !ok {
		return Vocab{}, fmt.Errorf("%w: %s is missing or not a string array", ErrInvalidVocab, keyTokens)
	}
	if _, present := f.Lookup(keyScores); present {
		s, ok := f.Float32s(keyScores)
		if !ok {
			return Vocab{}, fmt.Errorf("%w: %s is not a numeric array", ErrInvalidVocab, keyScores)
		}
		v.Scores = append([]float32(nil), s...)
	}
	if _, present := f.Lookup(keyTokenType); present {
		tt, ok := f.Int32s(keyTokenType)
		if !ok {
			return Vocab{}, fmt.Errorf("%w: %s is not an integer array", ErrInvalidVocab, keyTokenType)
		}
		v.Types = make([]TokenType, len(tt))
		for i, x := range tt {
			v.Types[i] = TokenType(x)
		}
	}
	if _, present := f.Lookup(keyMerges); present {
		if v.Merges, ok = f.Strings(keyMerges); !ok {
			return Vocab{}, fmt.Errorf("%w: %s is not a string array", ErrInvalidVocab, keyMerges)
		}
	}
	id := func(key string) *int32 {
		u, ok := f.Uint(key)
		if !ok || u > math.MaxInt32 {
			return nil // absent or out of range: llama.cpp keeps the default
		}
		x := int32(u)
		return &x
	}
	v.BOS, v.EOS, v.UNK = id(keyBOS), id(keyEOS), id(keyUNK)
	v.PAD, v.EOT, v.EOM = id(keyPAD), id(keyEOT), id(keyEOM)
	flag := func(key string) *bool {
		b, ok := f.Bool(key)
		if !ok {
			return nil
		}
		return &b
	}
	v.AddBOS, v.AddEOS, v.AddSpacePrefix = flag(keyAddBOS), flag(keyAddEOS), flag(keyAddSpacePrefix)
	return v, nil
}
