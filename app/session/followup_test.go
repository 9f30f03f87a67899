package session

import (
	"testing"

	"github.com/churon/churon/app/kvcache"
	"github.com/churon/churon/app/store"
)

// TestFollowUpKeepsGeneratedIDs: a follow-up reuses the cache across the
// whole previous answer even where the answer's text, shown to the person,
// does not tokenize back to the ids the model generated — a synthetic
// model's random output never does (invalid UTF-8 shown as U+FFFD,
// control tokens hidden) — including after a long answer that leaves the
// context nearly full, and after the cache has been to disk and back.
func TestFollowUpKeepsGeneratedIDs(t *testing.T) {
	cases := []struct {
		name     string
		first    int // the first answer's token cap
		disk     bool
		followUp []string
	}{
		{"short answers", 200, false, []string{"and then?", "more", "again"}},
		{"a long answer, the context nearly full", 2800, false, []string{"and then?"}},
		{"restored from disk each turn", 400, true, []string{"and then?", "more"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opt := Options{}
			if c.disk {
				disk, err := kvcache.Open(t.TempDir(), 0)
				if err != nil {
					t.Fatal(err)
				}
				opt.Disk = disk
			}
			f := newFixture(t, opt)
			f.load(synthPath(t, "qwen2"))
			set := greedy(c.first)
			set.Context = 4096
			conv := f.conv(set)
			f.send(conv, "Tell me a long story.")
			set.MaxTokens = 64
			if err := f.m.SetSettings(conv, set); err != nil {
				t.Fatal(err)
			}
			for _, q := range c.followUp {
				prev := lastAnswer(t, f, conv)
				if c.disk {
					f.m.UnloadModel() // the cache goes to disk with the model
					f.load(synthPath(t, "qwen2"))
				}
				f.send(conv, q)
				next := lastAnswer(t, f, conv)
				had := prev.PromptTokens + prev.GenTokens
				t.Logf("after %q: reused %d of %d", q, next.PromptReused, had)
				if next.PromptReused*100 < had*95 {
					t.Errorf("after %q: reused %d of the %d tokens the last turn left (prompt %d + answer %d, %s); want ≥ 95%%",
						q, next.PromptReused, had, prev.PromptTokens, prev.GenTokens, prev.FinishReason)
				}
			}
		})
	}
}

func lastAnswer(t *testing.T, f *fixture, conv int64) store.Message {
	t.Helper()
	msgs := f.messages(conv)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == store.RoleAssistant {
			return msgs[i]
		}
	}
	t.Fatal("no answer")
	return store.Message{}
}

// TestFollowUpAfterTheHistoryChanged: the generated ids of the last answer
// are kept only for a prompt that still starts as that answer's did. A
// new system prompt is seen by the next answer, which is the engine's own
// answer to the new history from scratch (with stories260K, whose answers
// tokenize back to themselves).
func TestFollowUpAfterTheHistoryChanged(t *testing.T) {
	f, path := storiesFixture(t)
	set := greedy(24)
	set.SystemPrompt = "Stories about pirates."
	conv := f.conv(set)
	first := f.send(conv, "Once upon a time")
	set.SystemPrompt = "Be brief."
	if err := f.m.SetSettings(conv, set); err != nil {
		t.Fatal(err)
	}
	second := f.send(conv, "Then what?")
	if second.stats.Reused >= first.stats.PromptTokens/2 {
		t.Errorf("after a new system prompt the follow-up reused %d tokens of a first prompt of %d: the old one is still seen", second.stats.Reused, first.stats.PromptTokens)
	}
	if want := reference(t, path, set, "Once upon a time", first.text, "Then what?"); second.text != want {
		t.Errorf("answer %q; the engine's to the new history is %q", second.text, want)
	}
}
