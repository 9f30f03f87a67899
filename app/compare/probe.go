package compare

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/tokenizer"
	"github.com/churon/churon/models/fit"
)

// Probe is what a model file says about itself before it is loaded: enough
// to pick the reference, refuse mismatched vocabularies and fill the
// columns of a comparison before any model runs.
type Probe struct {
	File        string  `json:"file"`
	Name        string  `json:"name"`
	Type        string  `json:"type"` // file type, e.g. "Q4_0", "F16"
	FileBytes   int64   `json:"file_bytes"`
	WeightBytes int64   `json:"weights_bytes"` // tensor data
	Params      int64   `json:"params"`
	BPW         float64 `json:"bpw"` // bits per weight: 8 × weight bytes / parameters
	VocabSize   int     `json:"vocab_size"`
	VocabSHA256 string  `json:"vocab_sha256"`

	tokens []string // kept to say where two vocabularies differ
}

// ProbeFile reads a model's header and vocabulary without loading its
// weights (the file is mapped, not read).
func ProbeFile(path string) (Probe, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return Probe{}, fmt.Errorf("compare: %w", err)
	}
	defer f.Close()
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		return Probe{}, fmt.Errorf("compare: %s: %w", path, err)
	}
	// The same header reading as the Models page's memory check.
	meta := fit.Describe(f)
	p := Probe{File: path, Name: meta.Name, Type: meta.Quant, FileBytes: meta.FileBytes, VocabSize: tok.VocabSize(),
		WeightBytes: meta.WeightBytes, Params: meta.Parameters}
	if p.Name == "" {
		p.Name = filepath.Base(path)
	}
	if p.Params > 0 {
		p.BPW = 8 * float64(p.WeightBytes) / float64(p.Params)
	}
	p.VocabSHA256, p.tokens = hashVocab(tok)
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
func CheckVocabs(ps []Probe) error {
	if len(ps) == 0 {
		return nil
	}
	a := ps[0]
	for _, b := range ps[1:] {
		if b.VocabSHA256 == a.VocabSHA256 {
			continue
		}
		e := &VocabError{A: a.File, B: b.File}
		switch {
		case a.VocabSize != b.VocabSize:
			e.Detail = fmt.Sprintf("%d tokens vs %d", a.VocabSize, b.VocabSize)
		case a.tokens == nil || b.tokens == nil:
			e.Detail = "their token lists differ"
		default:
			e.Detail = "same tokens, different token types"
			for i := range a.tokens {
				if a.tokens[i] != b.tokens[i] {
					e.Detail = fmt.Sprintf("token %d is %s vs %s", i, strconv.Quote(a.tokens[i]), strconv.Quote(b.tokens[i]))
					break
				}
			}
		}
		return e
	}
	return nil
}
