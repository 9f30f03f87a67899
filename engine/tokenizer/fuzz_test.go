package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/internal/testdata"
)

// findVocabDir is vocabDir without the skip: the fuzz target still runs on
// synthetic vocabularies when the shared data is absent.
func findVocabDir() string {
	if d := os.Getenv(testdata.EnvVar); d != "" {
		return filepath.Join(d, "vocab")
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		c := filepath.Join(d, "shared", "testdata", "vocab")
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			return c
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

func openVocab(path string) (*Tokenizer, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return FromGGUF(f)
}

// FuzzEncodeDecode: encoding never panics, and on BPE vocabularies
// Decode(Encode(s)) == s for valid UTF-8, with and without special-token
// parsing. SentencePiece vocabularies are checked for panics and for the
// stream decoder agreeing with Decode.
func FuzzEncodeDecode(f *testing.F) {
	type target struct {
		name string
		tk   *Tokenizer
	}
	var targets []target
	for _, pre := range []string{"gpt-2", "llama-bpe", "qwen2", "default", "deepseek-llm", "deepseek-coder", "falcon", "starcoder"} {
		targets = append(targets, target{"synthetic-" + pre, bpeVocab(f, pre)})
	}
	targets = append(targets, target{"synthetic-spm", byteVocab(f)})
	if dir := findVocabDir(); dir != "" {
		for _, name := range []string{"qwen3", "llama3", "gpt-2", "deepseek-llm", "llama-spm", "phi-3"} {
			tk, err := openVocab(filepath.Join(dir, "ggml-vocab-"+name+".gguf"))
			if err != nil {
				f.Logf("%s: %v (skipped)", name, err)
				continue
			}
			targets = append(targets, target{name, tk})
		}
		if raw, err := os.ReadFile(filepath.Join(dir, "korean.inp")); err == nil {
			for _, s := range strings.Split(string(raw), "\n__ggml_vocab_test__\n") {
				f.Add(s)
			}
		}
	}
	for _, s := range roundTripTexts {
		f.Add(s)
	}
	f.Add("\xff\xfe invalid \xed\xa0\x80 \xc0\x80")
	f.Add("   \n\n\t\t  \u3000\u2028 x")

	f.Fuzz(func(t *testing.T, s string) {
		for _, tg := range targets {
			for _, parse := range []bool{false, true} {
				ids := tg.tk.Encode(s, EncodeOptions{ParseSpecial: parse, AddSpecial: parse})
				for _, id := range ids {
					if id < 0 || int(id) >= tg.tk.VocabSize() {
						t.Fatalf("%s: id %d out of range", tg.name, id)
					}
				}
				opt := DecodeOptions{Special: true, RemoveSpecial: true}
				got := tg.tk.Decode(ids, opt)
				if tg.tk.kind == kindBPE && utf8.ValidString(s) && got != s {
					t.Fatalf("%s parse=%v: round trip of %q gave %q (ids %v)", tg.name, parse, s, got, ids)
				}
				dec := tg.tk.NewDecoder(opt)
				var sb strings.Builder
				for _, id := range ids {
					sb.WriteString(dec.Push(id))
				}
				sb.WriteString(dec.Flush())
				if want := strings.ToValidUTF8(got, "\uFFFD"); utf8.ValidString(got) && sb.String() != want {
					t.Fatalf("%s: stream %q, Decode %q", tg.name, sb.String(), got)
				}
			}
		}
	})
}
