package tokenizer

import (
	"encoding/json"
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
		f, err := gguf.Open(p)
		if err != nil {
			t.Fatalf("open %s: %v", p, err)
		}
		defer f.Close()
		tk, err := FromGGUF(f)
		if err != nil {
			t.Fatalf("load %s: %v", p, err)
		}
		return tk
	}
	t.Skipf("SKIP: no Gemma 3 vocabulary (looked in %v); build it with node tools/vocab/gemma3.mjs --vocab FILE and set CHURON_GEMMA3_VOCAB", cands)
	return nil
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
		NTokens int `json:"n_tokens"`
		Cases   []struct {
			Text    string  `json:"text"`
			IDs     []int32 `json:"ids"`
			Special []int32 `json:"ids_parse_special"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) < 50 {
		t.Fatalf("%d cases in testdata/gemma3.json", len(ref.Cases))
	}
	tk := gemma3Vocab(t)
	if tk.VocabSize() != ref.NTokens {
		t.Fatalf("vocabulary of %d tokens, the reference's has %d", tk.VocabSize(), ref.NTokens)
	}
	if tk.AddBOS() != true || tk.BOS() != 2 || tk.EOS() != 1 {
		t.Errorf("BOS %d (add %v), EOS %d: want Gemma's 2 (added) and 1", tk.BOS(), tk.AddBOS(), tk.EOS())
	}
	if id, ok := tk.Lookup("<end_of_turn>"); !ok || !tk.IsEOG(id) {
		t.Errorf("<end_of_turn> (%d, %v) does not end generation", id, ok)
	}
	for i, c := range ref.Cases {
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
