package cli

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/internal/testdata"
	"github.com/churon/churon/models/synth"
)

func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), code
}

func synthFile(t *testing.T, arch string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), arch+".gguf")
	if err := synth.Write(path, synth.Tiny(arch)); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGenerateStoriesMatchesLlamaCpp is the acceptance check: the
// CLI's greedy JSON output equals llama.cpp's reference run.
func TestGenerateStoriesMatchesLlamaCpp(t *testing.T) {
	dir := testdata.Dir(t)
	for _, name := range []string{"once_upon_a_time", "the_little_dog", "lily_and_ben"} {
		data, err := os.ReadFile(filepath.Join(dir, "reference", "stories260K_greedy_"+name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var ref struct {
			Prompt    string  `json:"prompt"`
			PromptIDs []int32 `json:"prompt_ids"`
			Generated []int32 `json:"generated_ids"`
		}
		if err := json.Unmarshal(data, &ref); err != nil {
			t.Fatal(err)
		}
		out, stderr, code := run(t, "generate", "-m", filepath.Join(dir, "models", "stories260K.gguf"),
			"-p", ref.Prompt, "-n", "64", "--temp", "0", "--raw", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var got generateJSON
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if !slices.Equal(got.PromptTokens, ref.PromptIDs) {
			t.Errorf("%s: prompt_tokens %v, want %v", name, got.PromptTokens, ref.PromptIDs)
		}
		// llama.cpp's reference ignored EOS; compare up to our stop.
		n := len(got.Tokens)
		if n == 0 || n > len(ref.Generated) || !slices.Equal(got.Tokens, ref.Generated[:n]) {
			t.Errorf("%s: tokens %v, want a prefix of %v", name, got.Tokens, ref.Generated)
		}
		if n < len(ref.Generated) && got.FinishReason != "eos" {
			t.Errorf("%s: stopped after %d tokens with %q", name, n, got.FinishReason)
		}
		if got.TTFTMs <= 0 || got.GenTPS <= 0 || got.PromptTPS <= 0 || got.Text == "" {
			t.Errorf("%s: stats or text missing: %+v", name, got)
		}
	}
}

func TestGenerateBatchAndChat(t *testing.T) {
	model := synthFile(t, "qwen2")
	out, stderr, code := run(t, "generate", "-m", model, "-p", "안녕", "-p", "hello", "-n", "5", "--seed", "7", "--json", "--ignore-eos")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one JSON object per prompt, got %q", out)
	}
	for _, l := range lines {
		var g generateJSON
		if err := json.Unmarshal([]byte(l), &g); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(g.Prompt, "<|im_start|>user") || len(g.Tokens) != 5 || g.Seed != 7 {
			t.Errorf("chat prompt %q, %d tokens, seed %d", g.Prompt, len(g.Tokens), g.Seed)
		}
	}
}

func TestTokenizeAndLogits(t *testing.T) {
	model := synthFile(t, "llama")
	out, _, code := run(t, "tokenize", "-m", model, "--json", "Once upon a time")
	if code != 0 {
		t.Fatal(out)
	}
	var ids []int32
	if err := json.Unmarshal([]byte(out), &ids); err != nil || len(ids) < 2 || ids[0] != 1 {
		t.Fatalf("ids %v (%v) from %q", ids, err, out)
	}
	out, _, code = run(t, "logits", "-m", model, "--tokens", "1,300,301", "--json")
	if code != 0 {
		t.Fatal(out)
	}
	var logits []float32
	if err := json.Unmarshal([]byte(out), &logits); err != nil || len(logits) != 320 {
		t.Fatalf("%d logits (%v)", len(logits), err)
	}
	bin := filepath.Join(t.TempDir(), "l.f32")
	if _, stderr, code := run(t, "logits", "-m", model, "--tokens", "1,300,301", "--out", bin); code != 0 {
		t.Fatal(stderr)
	}
	raw, err := os.ReadFile(bin)
	if err != nil || len(raw) != 4*len(logits) {
		t.Fatalf("raw logits: %d bytes, %v", len(raw), err)
	}
	for i, v := range logits {
		if math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])) != v {
			t.Fatalf("logit %d differs between --json and --out", i)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	t.Setenv(paths.EnvHome, t.TempDir())
	for _, args := range [][]string{
		{"frobnicate"},
		// (No -m: the built-in demo, or a usage error — TestDemoWithoutModel.)
		{"generate", "-m", "x.gguf"},
		{"generate", "-m", "x.gguf", "-p", "hi", "--top-p", "2"},
		{"logits", "-m", "x.gguf"},
	} {
		if _, stderr, code := run(t, args...); code != 2 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", args, code, stderr)
		}
	}
	if _, stderr, code := run(t, "generate", "-m", filepath.Join(t.TempDir(), "missing.gguf"), "-p", "x"); code != 1 || !strings.Contains(stderr, "missing.gguf") {
		t.Errorf("missing model: exit %d, %q", code, stderr)
	}
	if out, _, code := run(t, "--version"); code != 0 || !strings.HasPrefix(out, "churon ") {
		t.Errorf("--version: %d %q", code, out)
	}
}
