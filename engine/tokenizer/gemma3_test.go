package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/internal/testdata"
)

// gemma3Vocab finds the Gemma 3 vocabulary GGUF that tools/vocab/gemma3.mjs
// builds (262,144 tokens, too large to commit): $CHURON_GEMMA3_VOCAB, the
// shared test data's vocab/ggml-vocab-gemma3.gguf, or the script's usual
// output under ~/.cache/churon/gemma3-tokenizer. It skips loudly without.
func gemma3Vocab(t *testing.T) *Tokenizer {
	t.Helper()
	var cands []string
	if p := os.Getenv("CHURON_GEMMA3_VOCAB"); p != "" {
		cands = append(cands, p)
	}
	if d := os.Getenv(testdata.EnvVar); d != "" {
		cands = append(cands, filepath.Join(d, "vocab", "ggml-vocab-gemma3.gguf"))
	}
	if h, err := os.UserHomeDir(); err == nil {
		cands = append(cands, filepath.Join(h, ".cache", "churon", "gemma3-tokenizer", "ggml-vocab-gemma3.gguf"))
	}
	for _, p := range cands {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		return mustLoadFile(t, p)
	}
	t.Skipf("SKIP: no Gemma 3 vocabulary (looked in %v); build it with node tools/vocab/gemma3.mjs --vocab FILE and set CHURON_GEMMA3_VOCAB", cands)
	return nil
}

// gemma3SubsetVocab builds the Gemma 3 vocabulary as far as the test's
// strings reach it (testdata/gemma3.vocab.json, written by
// tools/vocab/gemma3.mjs --subset): every piece that occurs in one of
// them, as typed or with ▁ for its spaces, the byte pieces and the
// special tokens, each at its own id with its score and type. The other
// ids hold pieces that no string contains (a private-use character and the
// id), so that SentencePiece's merges, byte fallback and the matching of
// special and user-defined tokens — which only ever look up pieces that
// occur in the text — see the same vocabulary as the whole one.
func gemma3SubsetVocab(t *testing.T) *Tokenizer {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "gemma3.vocab.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sub struct {
		NTokens            int     `json:"n_tokens"`
		BOS, EOS, UNK, PAD uint32  // the keys bos, eos, unk, pad
		AddBOS             bool    `json:"add_bos"`
		AddEOS             bool    `json:"add_eos"`
		AddSpacePrefix     bool    `json:"add_space_prefix"`
		Tokens             [][]any `json:"tokens"` // [id, piece, score, type]
	}
	if err := json.Unmarshal(data, &sub); err != nil {
		t.Fatal(err)
	}
	tokens := make([]string, sub.NTokens)
	scores := make([]float32, sub.NTokens)
	types := make([]int32, sub.NTokens)
	for i := range tokens {
		tokens[i], types[i] = fmt.Sprintf("\uE000%d", i), 1
	}
	for _, row := range sub.Tokens {
		id, okID := row[0].(float64)
		piece, okPiece := row[1].(string)
		score, okScore := row[2].(float64)
		typ, okType := row[3].(float64)
		if len(row) != 4 || !okID || !okPiece || !okScore || !okType || id < 0 || int(id) >= sub.NTokens {
			t.Fatalf("testdata/gemma3.vocab.json: bad row %v", row)
		}
		tokens[int(id)], scores[int(id)], types[int(id)] = piece, float32(score), int32(typ)
	}
	w := gguf.NewWriter()
	for _, kv := range []struct {
		k string
		v any
	}{
		{"general.architecture", "gemma3"},
		{"tokenizer.ggml.model", "llama"},
		{"tokenizer.ggml.pre", "default"},
		{"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.scores", scores},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.bos_token_id", sub.BOS},
		{"tokenizer.ggml.eos_token_id", sub.EOS},
		{"tokenizer.ggml.unknown_token_id", sub.UNK},
		{"tokenizer.ggml.padding_token_id", sub.PAD},
		{"tokenizer.ggml.add_bos_token", sub.AddBOS},
		{"tokenizer.ggml.add_eos_token", sub.AddEOS},
		{"tokenizer.ggml.add_space_prefix", sub.AddSpacePrefix},
	} {
		if err := w.SetKV(kv.k, kv.v); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	tk, err := FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// TestGemma3Vectors compares Gemma 3 tokenization with llama.cpp v0.5.0's
// on English, code, emoji, whitespace runs, Gemma's turn markers, Korean
// and mixed scripts (testdata/gemma3.json, recorded by
// tools/vocab/gemma3.mjs), with and without special-token parsing: what
// differs from Llama's SentencePiece is no space prefix and Gemma's
// user-defined tokens (newline and space runs, HTML tags) cut out of raw
// text before SentencePiece runs.
func TestGemma3Vectors(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "gemma3.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		NTokens int          `json:"n_tokens"`
		Cases   []gemma3Case `json:"cases"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) < 50 {
		t.Fatalf("%d cases in testdata/gemma3.json", len(ref.Cases))
	}
	t.Run("whole vocabulary", func(t *testing.T) { gemma3Check(t, gemma3Vocab(t), ref.NTokens, ref.Cases) })
	t.Run("the entries the strings reach", func(t *testing.T) {
		gemma3Check(t, gemma3SubsetVocab(t), ref.NTokens, ref.Cases)
	})
}

// gemma3Case is one string of testdata/gemma3.json and llama.cpp's ids.
type gemma3Case struct {
	Text    string  `json:"text"`
	IDs     []int32 `json:"ids"`
	Special []int32 `json:"ids_parse_special"`
}

func gemma3Check(t *testing.T, tk *Tokenizer, nTokens int, cases []gemma3Case) {
	if tk.VocabSize() != nTokens {
		t.Fatalf("vocabulary of %d tokens, the reference's has %d", tk.VocabSize(), nTokens)
	}
	if tk.AddBOS() != true || tk.BOS() != 2 || tk.EOS() != 1 {
		t.Errorf("BOS %d (add %v), EOS %d: want Gemma's 2 (added) and 1", tk.BOS(), tk.AddBOS(), tk.EOS())
	}
	if id, ok := tk.Lookup("<end_of_turn>"); !ok || !tk.IsEOG(id) {
		t.Errorf("<end_of_turn> (%d, %v) does not end generation", id, ok)
	}
	for i, c := range cases {
		if got := tk.Encode(c.Text, EncodeOptions{}); !slices.Equal(got, c.IDs) {
			t.Errorf("case %d %q:\n got %v\nwant %v", i, c.Text, got, c.IDs)
		}
		if got := tk.Encode(c.Text, EncodeOptions{ParseSpecial: true}); !slices.Equal(got, c.Special) {
			t.Errorf("case %d %q, specials parsed:\n got %v\nwant %v", i, c.Text, got, c.Special)
		}
		// Without a space prefix, text comes back as it went in (but for
		// a ▁ typed as text, which SentencePiece reads as a space).
		if got := tk.Decode(c.Special, DecodeOptions{Special: true}); got != c.Text && !strings.Contains(c.Text, "\u2581") {
			t.Errorf("case %d: decodes to %q, want %q", i, got, c.Text)
		}
	}
	if got := tk.Encode("Hi", EncodeOptions{AddSpecial: true}); !slices.Equal(got, []int32{2, 10979}) {
		t.Errorf("Hi with specials: %v, want [2 10979]", got)
	}
}
