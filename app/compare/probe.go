package compare

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strconv"

	api "github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/tokenizer"
	"github.com/churon/churon/models/header"
)

// ProbeFile reads a model's header and vocabulary without loading its
// weights (the file is mapped, not read).
func ProbeFile(path string) (api.Probe, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return api.Probe{}, fmt.Errorf("compare: %w", err)
	}
	defer f.Close()
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		return api.Probe{}, fmt.Errorf("compare: %s: %w", path, err)
	}
	// The same header reading as the Models page's memory check.
	meta := header.Describe(f)
	p := api.Probe{File: path, Name: meta.Name, Type: meta.Quant, FileBytes: meta.FileBytes, VocabSize: tok.VocabSize(),
		WeightBytes: meta.WeightBytes, Params: meta.Parameters}
	if p.Name == "" {
		p.Name = filepath.Base(path)
	}
	if p.Params > 0 {
		p.BPW = 8 * float64(p.WeightBytes) / float64(p.Params)
	}
	p.VocabSHA256, p.Tokens = hashVocab(tok)
	return p, nil
}

// hashVocab hashes the token list: each token's text (length-prefixed, so
// no two lists collide by concatenation) and type, in id order. Two models
// with the same hash give their logits over the same tokens.
func hashVocab(tok *tokenizer.Tokenizer) (string, []string) {
	h := sha256.New()
	n := tok.VocabSize()
	tokens := make([]string, n)
	var b [8]byte
	for id := range n {
		s := tok.Token(int32(id))
		tokens[id] = s
		binary.LittleEndian.PutUint32(b[:4], uint32(len(s)))
		binary.LittleEndian.PutUint32(b[4:], uint32(tok.TokenType(int32(id))))
		h.Write(b[:])
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil)), tokens
}

// CheckVocabs returns a *VocabError when the probed models do not all
// share the first one's vocabulary (Run refuses such a set; a view can
// check a pick before starting).
func CheckVocabs(ps []api.Probe) error {
	if len(ps) == 0 {
		return nil
	}
	a := ps[0]
	for _, b := range ps[1:] {
		if b.VocabSHA256 == a.VocabSHA256 {
			continue
		}
		e := &api.VocabError{A: a.File, B: b.File}
		switch {
		case a.VocabSize != b.VocabSize:
			e.Detail = fmt.Sprintf("%d tokens vs %d", a.VocabSize, b.VocabSize)
		case a.Tokens == nil || b.Tokens == nil:
			e.Detail = "their token lists differ"
		default:
			e.Detail = "same tokens, different token types"
			for i := range a.Tokens {
				if a.Tokens[i] != b.Tokens[i] {
					e.Detail = fmt.Sprintf("token %d is %s vs %s", i, strconv.Quote(a.Tokens[i]), strconv.Quote(b.Tokens[i]))
					break
				}
			}
		}
		return e
	}
	return nil
}
