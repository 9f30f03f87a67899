package tokenizer

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// TestGPTOSSVectors compares gpt-oss's tokenizer (the gpt-4o/o200k
// pre-tokenizer) with llama.cpp's on texts in English, Korean, code,
// emoji, digits, whitespace runs and 60 generated mixes of case runs, marks and separators, and on Harmony's special tokens.
// The reference is testdata/gpt-oss.tokens.json, recorded by
// tools/llamacpp-bench/tokenize.mjs from llama.cpp v0.5.0.
func TestGPTOSSVectors(t *testing.T) {
	checkTokensFile(t, "testdata/gpt-oss.tokens.json", "gpt-oss", 20)
}

// checkTokensFile encodes every case of a tokenize.mjs reference file with
// the shared vocabulary ggml-vocab-<vocab>.gguf and requires llama.cpp's
// ids; texts tokenized without special parsing must also decode back to
// themselves.
func checkTokensFile(t *testing.T, file, vocab string, minCases int) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Vocab string
		Cases []struct {
			Text    string
			Special bool
			IDs     []int32
		}
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if want := "ggml-vocab-" + vocab + ".gguf"; ref.Vocab != want {
		t.Fatalf("%s was recorded with %s, not %s", file, ref.Vocab, want)
	}
	tk := loadVocab(t, vocab)
	if len(ref.Cases) < minCases {
		t.Fatalf("only %d cases", len(ref.Cases))
	}
	for _, c := range ref.Cases {
		got := tk.Encode(c.Text, EncodeOptions{ParseSpecial: c.Special})
		if got == nil {
			got = []int32{}
		}
		if !slices.Equal(got, c.IDs) {
			t.Errorf("%q (special %v):\n got  %v\n want %v\n pieces %q", c.Text, c.Special, got, c.IDs, pieces(tk, got))
		}
		if !c.Special {
			if back := tk.Decode(got, DecodeOptions{}); back != c.Text {
				t.Errorf("%q: decodes to %q", c.Text, back)
			}
		}
	}
}

func pieces(tk *Tokenizer, ids []int32) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = tk.Decode([]int32{id}, DecodeOptions{})
	}
	return out
}
