package tokenizer

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/internal/testdata"
)

// vocabDir returns the shared vocab test data directory or skips.
func vocabDir(t testing.TB) string {
	t.Helper()
	d := filepath.Join(testdata.Dir(t), "vocab")
	if _, err := os.Stat(d); err != nil {
		t.Skipf("SKIP: shared testdata has no vocab/ directory at %s; set %s", d, testdata.EnvVar)
	}
	return d
}

var (
	tokCacheMu sync.Mutex
	tokCache   = map[string]*Tokenizer{}
)

// loadVocab loads ggml-vocab-<name>.gguf once per test binary.
func loadVocab(t testing.TB, name string) *Tokenizer {
	t.Helper()
	path := filepath.Join(vocabDir(t), "ggml-vocab-"+name+".gguf")
	tokCacheMu.Lock()
	defer tokCacheMu.Unlock()
	if tk, ok := tokCache[path]; ok {
		return tk
	}
	tk := mustLoadFile(t, path)
	tokCache[path] = tk
	return tk
}

// mustLoadFile loads the tokenizer of the GGUF file at path, failing the
// test if the file does not open or its vocabulary does not load.
func mustLoadFile(t testing.TB, path string) *Tokenizer {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	tk, err := FromGGUF(f)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return tk
}

// readVectors reads a test-tokenizer-0 style pair: strings separated by
// "\n__ggml_vocab_test__\n" and one line of ids per string.
func readVectors(t testing.TB, inp, out string) ([]string, [][]int32) {
	t.Helper()
	raw, err := os.ReadFile(inp)
	if err != nil {
		t.Fatal(err)
	}
	outRaw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	const sep = "\n__ggml_vocab_test__\n"
	var strs []string
	s := string(raw)
	for pos := 0; pos < len(s); {
		i := strings.Index(s[pos:], sep)
		if i < 0 {
			strs = append(strs, s[pos:])
			break
		}
		strs = append(strs, s[pos:pos+i])
		pos += i + len(sep)
	}
	lines := strings.Split(string(outRaw), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	if len(lines) != len(strs) {
		t.Fatalf("%s: %d strings but %s has %d lines", inp, len(strs), out, len(lines))
	}
	ids := make([][]int32, len(lines))
	for i, l := range lines {
		for _, f := range strings.Fields(l) {
			v, err := strconv.ParseInt(f, 10, 32)
			if err != nil {
				t.Fatalf("%s line %d: %v", out, i+1, err)
			}
			ids[i] = append(ids[i], int32(v))
		}
	}
	return strs, ids
}

// checkVectors encodes every string and compares with the expected ids.
func checkVectors(t *testing.T, tk *Tokenizer, strs []string, want [][]int32, opt EncodeOptions) {
	t.Helper()
	bad := 0
	for i, s := range strs {
		got := tk.Encode(s, opt)
		if !slices.Equal(got, want[i]) {
			bad++
			t.Errorf("string %d %q:\n  want %v\n  got  %v", i, s, want[i], got)
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d strings differ", bad, len(strs))
	}
}

// TestLlamaCppVectors runs llama.cpp's test-tokenizer-0 vectors (no BOS/EOS,
// special text not parsed) for every vocabulary with an .inp/.out pair.
func TestLlamaCppVectors(t *testing.T) {
	dir := vocabDir(t)
	inps, err := filepath.Glob(filepath.Join(dir, "ggml-vocab-*.gguf.inp"))
	if err != nil || len(inps) == 0 {
		t.Skipf("SKIP: no ggml-vocab-*.gguf.inp files in %s", dir)
	}
	// Vectors whose vocabulary file is not in the test data are covered by
	// a stand-in with the same pre-tokenizer.
	standIn := map[string]string{"llama-bpe": "llama3", "qwen2": "qwen3"}
	for _, inp := range inps {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(inp), "ggml-vocab-"), ".gguf.inp")
		t.Run(name, func(t *testing.T) {
			vocab := name
			if s, ok := standIn[name]; ok {
				vocab = s
			}
			path := filepath.Join(dir, "ggml-vocab-"+vocab+".gguf")
			if _, err := os.Stat(path); err != nil {
				t.Skipf("SKIP: %s: vocabulary file not in the test data", name)
			}
			v := readModel(t, path)
			if v != "llama" && v != "gpt2" {
				t.Skipf("SKIP: %s: tokenizer.ggml.model %q is not SentencePiece or BPE (not supported)", name, v)
			}
			tk := loadVocab(t, vocab)
			strs, want := readVectors(t, inp, strings.TrimSuffix(inp, ".inp")+".out")
			checkVectors(t, tk, strs, want, EncodeOptions{})
		})
	}
}

// readModel returns tokenizer.ggml.model of a GGUF file.
func readModel(t testing.TB, path string) string {
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	m, _ := f.String("tokenizer.ggml.model")
	return m
}

// koreanV050 holds llama.cpp v0.5.0's ids for Korean string 23 where they
// differ from korean.*.out, which an older llama.cpp recorded: v0.5.0
// makes "</s>" an end-of-generation control token wherever a vocabulary
// has it (for PaddleOCR), so Qwen3's plain "</s>" piece is parsed as a
// special token and Phi-3's user-defined "</s>" is no longer cut out of
// unparsed text. Taken from node-llama-cpp 3.22.1 (vocabOnly, tokenize).
var koreanV050 = map[string][]int32{
	"qwen3/parse=true": {27, 91, 7265, 3575, 4326, 91, 1784, 91, 2468, 8757, 842, 91, 29, 872, 27, 91, 408, 8757, 842, 91,
		1339, 128732, 51588, 27, 91, 68, 354, 842, 91, 29, 366, 82, 30768, 64462, 60, 138520, 64928, 64462, 60, 128247,
		366, 2468, 3575, 37274, 29, 2528},
	"phi-3/parse=false": {529, 29989, 463, 29918, 974, 29918, 726, 29989, 5299, 29989, 2962, 29918, 6672, 29918, 333, 29989,
		29958, 1792, 29966, 29989, 355, 29918, 6672, 29918, 333, 29989, 29958, 13, 13, 239, 170, 139, 31406, 29966, 29989,
		29872, 327, 29918, 333, 29989, 29958, 529, 29879, 24566, 25580, 29962, 29871, 239, 170, 139, 31406, 518, 29914,
		25580, 29962, 829, 29879, 29958, 529, 2962, 29918, 974, 29918, 685, 29958, 4299},
}

// TestKoreanVectors runs the Korean and mixed-script strings with and
// without special-token parsing.
func TestKoreanVectors(t *testing.T) {
	dir := vocabDir(t)
	inp := filepath.Join(dir, "korean.inp")
	if _, err := os.Stat(inp); err != nil {
		t.Skipf("SKIP: %s not found", inp)
	}
	for _, name := range []string{"llama3", "qwen3", "llama-spm", "gpt-2", "phi-3", "deepseek-llm"} {
		for _, parse := range []bool{false, true} {
			suffix := ".out"
			if parse {
				suffix = ".parse-special.out"
			}
			t.Run(fmt.Sprintf("%s/parse=%v", name, parse), func(t *testing.T) {
				out := filepath.Join(dir, "korean."+name+suffix)
				if _, err := os.Stat(out); err != nil {
					t.Skipf("SKIP: %s not found", out)
				}
				tk := loadVocab(t, name)
				strs, want := readVectors(t, inp, out)
				if ids, ok := koreanV050[fmt.Sprintf("%s/parse=%v", name, parse)]; ok && len(want) > 23 {
					want[23] = ids
				}
				checkVectors(t, tk, strs, want, EncodeOptions{ParseSpecial: parse})
			})
		}
	}
}

// TestChatTemplateIDs encodes the golden chat-template renderings (special
// tokens parsed, nothing added) and compares with llama.cpp's ids.
func TestChatTemplateIDs(t *testing.T) {
	eachJSON(t, filepath.Join(testdata.Dir(t), "templates"), "chat_template.*.json", func(file string, doc *struct {
		Info *struct {
			Vocab        string `json:"vocab"`
			AddSpecial   bool   `json:"add_special"`
			ParseSpecial bool   `json:"parse_special"`
		} `json:"expected_ids_info"`
		Cases []struct {
			Name        string  `json:"name"`
			Expected    string  `json:"expected"`
			ExpectedIDs []int32 `json:"expected_ids"`
		} `json:"cases"`
	}) {
		if doc.Info == nil {
			return // no ids for this template
		}
		name := strings.TrimSuffix(strings.TrimPrefix(doc.Info.Vocab, "ggml-vocab-"), ".gguf")
		t.Run(name, func(t *testing.T) {
			tk := loadVocab(t, name)
			opt := EncodeOptions{AddSpecial: doc.Info.AddSpecial, ParseSpecial: doc.Info.ParseSpecial}
			for _, c := range doc.Cases {
				if c.ExpectedIDs == nil {
					continue
				}
				if got := tk.Encode(c.Expected, opt); !slices.Equal(got, c.ExpectedIDs) {
					t.Errorf("%s: %q\n  want %v\n  got  %v", c.Name, c.Expected, c.ExpectedIDs, got)
				}
			}
		})
	})
}

// eachJSON decodes each file matching pattern under dir into a new *T
// and passes it to f; without any such file the test is skipped.
func eachJSON[T any](t *testing.T, dir, pattern string, f func(file string, doc *T)) {
	files, _ := filepath.Glob(filepath.Join(dir, pattern))
	if len(files) == 0 {
		t.Skipf("SKIP: no %s in %s", pattern, dir)
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		doc := new(T)
		if err := json.Unmarshal(raw, doc); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		f(file, doc)
	}
}

// TestReferenceGenerations checks prompts and generated text of llama.cpp's
// reference runs: prompt ids (BOS added), every piece, and the streamed text.
func TestReferenceGenerations(t *testing.T) {
	root := testdata.Dir(t)
	eachJSON(t, root, filepath.Join("reference", "*_greedy_*.json"), func(file string, ref *struct {
		Model      string   `json:"model"`
		Prompt     string   `json:"prompt"`
		AddBOS     bool     `json:"add_bos"`
		PromptIDs  []int32  `json:"prompt_ids"`
		PromptPcs  []string `json:"prompt_pieces"`
		GenIDs     []int32  `json:"generated_ids"`
		GenPcs     []string `json:"generated_pieces"`
		GenTextHex string   `json:"generated_text_hex"`
	}) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			path := filepath.Join(root, ref.Model)
			tokCacheMu.Lock()
			tk, ok := tokCache[path]
			tokCacheMu.Unlock()
			if !ok {
				var err error
				if tk, err = openVocab(path); err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				tokCacheMu.Lock()
				tokCache[path] = tk
				tokCacheMu.Unlock()
			}
			if got := tk.Encode(ref.Prompt, EncodeOptions{AddSpecial: ref.AddBOS}); !slices.Equal(got, ref.PromptIDs) {
				t.Errorf("prompt %q: want %v, got %v", ref.Prompt, ref.PromptIDs, got)
			}
			for i, id := range ref.PromptIDs {
				if got := string(tk.Piece(id, true)); i < len(ref.PromptPcs) && got != ref.PromptPcs[i] {
					t.Errorf("prompt piece %d (id %d): want %q, got %q", i, id, ref.PromptPcs[i], got)
				}
			}
			for i, id := range ref.GenIDs {
				if got := string(tk.Piece(id, true)); i < len(ref.GenPcs) && got != ref.GenPcs[i] {
					t.Errorf("generated piece %d (id %d): want %q, got %q", i, id, ref.GenPcs[i], got)
				}
			}
			dec := tk.NewDecoder(DecodeOptions{KeepLeadingSpace: true})
			var sb strings.Builder
			for _, id := range ref.GenIDs {
				sb.WriteString(dec.Push(id))
			}
			sb.WriteString(dec.Flush())
			if got := hex.EncodeToString([]byte(sb.String())); got != ref.GenTextHex {
				t.Errorf("generated text:\n  want %s\n  got  %s", ref.GenTextHex, got)
			}
		})
	})
}
