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
	raw, err := os.ReadFile("testdata/gpt-oss.tokens.json")
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
	tk := loadVocab(t, "gpt-oss")
	if len(ref.Cases) < 20 {
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
