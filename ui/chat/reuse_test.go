package chat

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/churon/churon/internal/uitest"
	"github.com/churon/churon/models/synth"
	"github.com/churon/churon/ui/core"
)

// TestFollowUpAfterLongAnswer: in the window, a follow-up after an answer
// of thousands of tokens that leaves the context nearly full reuses the
// cache across the whole answer — on a synthetic ChatML model, whose
// random output never tokenizes back to the ids it was generated as —
// and the footer says so.
func TestFollowUpAfterLongAnswer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny-qwen2.gguf")
	if err := synth.Write(path, synth.Tiny("qwen2")); err != nil {
		t.Fatal(err)
	}
	set := uitest.Quick(2800)
	set.Context = 4096
	h := newHarness(t, uitest.Options{Settings: &set})
	h.Load(path)

	h.typeAndSend("Tell me a long story.")
	h.Wait("the long answer", func() bool { return h.Idle() && len(h.view().views) == 2 && h.last().stats != nil })
	first := h.last().stats
	if first.GenTokens < 2000 || first.PromptTokens+first.GenTokens < set.Context*2/3 {
		t.Fatalf("the first answer is %d tokens after a prompt of %d: not the long answer the test needs", first.GenTokens, first.PromptTokens)
	}
	// A shorter cap for the follow-up, as a person would set for a quick
	// question, so that it fits beside the long answer.
	set.MaxTokens = 64
	if err := h.M.SetSettings(h.Core.Conv, set); err != nil {
		t.Fatal(err)
	}
	h.typeAndSend("And then?")
	h.Wait("the follow-up", func() bool { return h.Idle() && len(h.view().views) == 4 && h.last().stats != nil })
	st := h.last().stats
	had := first.PromptTokens + first.GenTokens
	t.Logf("the follow-up reused %d of the %d tokens the long answer left (%d processed)", st.Reused, had, st.Processed)
	if st.Reused*100 < had*95 {
		t.Errorf("the follow-up reused %d of the %d tokens the long answer left in the cache; want ≥ 95%%", st.Reused, had)
	}
	want := fmt.Sprintf("%d reused · %d processed", st.Reused, st.Processed)
	if foot := core.MutedText(h.last().footer); !strings.Contains(foot, want) {
		t.Errorf("the follow-up's footer %q does not say %q", foot, want)
	}
}
