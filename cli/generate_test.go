package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/churon/churon/internal/testdata"
)

// TestGenerateStoriesMatchesLlamaCpp is the acceptance check: the
// CLI's greedy JSON output equals llama.cpp's reference run.
func TestGenerateStoriesMatchesLlamaCpp(t *testing.T) {
	model := testdata.Stories260K(t)
	for _, name := range []string{"once_upon_a_time", "the_little_dog", "lily_and_ben"} {
		t.Run(name, func(t *testing.T) {
			ref := readGreedyReference(t, name)
			var got generateJSON
			runJSON(t, &got, "generate", "-m", model, "-p", ref.Prompt, "-n", "64", "--temp", "0", "--raw", "--json")
			if !slices.Equal(got.PromptTokens, ref.PromptIDs) {
				t.Errorf("prompt_tokens %v, want %v", got.PromptTokens, ref.PromptIDs)
			}
			// llama.cpp's reference ignored EOS; compare up to our stop.
			n := len(got.Tokens)
			if n == 0 || n > len(ref.Generated) || !slices.Equal(got.Tokens, ref.Generated[:n]) {
				t.Errorf("tokens %v, want a prefix of %v", got.Tokens, ref.Generated)
			}
			if n < len(ref.Generated) && got.FinishReason != "eos" {
				t.Errorf("stopped after %d tokens with %q", n, got.FinishReason)
			}
			if got.TTFTMs <= 0 || got.GenTPS <= 0 || got.PromptTPS <= 0 || got.Text == "" {
				t.Errorf("stats or text missing: %+v", got)
			}
		})
	}
}

func TestGenerateBatchAndChat(t *testing.T) {
	model := synthFile(t, "qwen2")
	out, _ := runOK(t, "generate", "-m", model, "-p", "안녕", "-p", "hello", "-n", "5", "--seed", "7", "--json", "--ignore-eos")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one JSON object per prompt, got %q", out)
	}
	for i, l := range lines {
		var g generateJSON
		decodeJSON(t, "generate --json", []byte(l), &g)
		if !strings.Contains(g.Prompt, "<|im_start|>user") || len(g.Tokens) != 5 || g.Seed != 7 {
			t.Errorf("chat prompt %q, %d tokens, seed %d", g.Prompt, len(g.Tokens), g.Seed)
		}
		// Through the scheduler's batch, each answer is what it is alone.
		alone, _ := runOK(t, "generate", "-m", model, "-p", []string{"안녕", "hello"}[i], "-n", "5", "--seed", "7", "--json", "--ignore-eos")
		var a generateJSON
		decodeJSON(t, "generate --json", []byte(strings.TrimSpace(alone)), &a)
		if !slices.Equal(a.Tokens, g.Tokens) || a.Text != g.Text {
			t.Errorf("prompt %d in the batch: %v %q; alone %v %q", i, g.Tokens, g.Text, a.Tokens, a.Text)
		}
	}
}
