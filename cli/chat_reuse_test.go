package cli

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/churon/churon/models/synth"
)

// TestChatFollowUpsReuseAcrossProcesses: each `churon chat --conversation
// N --message …` is a new process that restores the conversation's KV
// snapshot; on a synthetic ChatML model, whose random answers never
// tokenize back to the ids they were generated as, every follow-up still
// reuses at least 95% of the previous prompt and answer — on a Qwen 3.5
// model too, whose recurrent states and checkpoints the snapshot carries.
func TestChatFollowUpsReuseAcrossProcesses(t *testing.T) {
	skipChildProcessesInShort(t)
	q35, err := synth.Preset("qwen35-test", "F16", 1)
	if err != nil {
		t.Fatal(err)
	}
	for name, spec := range map[string]synth.Spec{"qwen2": synth.Tiny("qwen2"), "qwen35": q35} {
		t.Run(name, func(t *testing.T) {
			spec.Context = 4096
			model := writeSynth(t, filepath.Join(t.TempDir(), "tiny-"+name+".gguf"), spec)
			home := t.TempDir()
			prev, _ := childChat(t, home, "-m", model, "--new", "--message", "Tell me a long story.", "--json", "-n", "600", "--temp", "0", "-t", "1")
			conv := strconv.FormatInt(prev.ConversationID, 10)
			for _, q := range []string{"And then?", "What happened next?", "더 말해 주세요."} {
				next, _ := childChat(t, home, "-m", model, "--conversation", conv, "--message", q, "--json", "-n", "64", "--temp", "0", "-t", "1")
				had := prev.PromptTokens + prev.GenTokens
				t.Logf("after %q: reused %d of %d (%s)", q, next.PromptTokensReused, had, next.PromptCache)
				if next.PromptTokensReused*100 < had*95 || next.PromptCache != "disk" {
					t.Errorf("after %q: reused %d of the %d tokens the last turn left (prompt %d + answer %d, %s), cache %q; want ≥ 95%% from disk",
						q, next.PromptTokensReused, had, prev.PromptTokens, prev.GenTokens, prev.FinishReason, next.PromptCache)
				}
				prev = next
			}
		})
	}
}
