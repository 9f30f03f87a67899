package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/chat"
	"github.com/churon/churon/internal/testutil"
	"github.com/churon/churon/models/synth"
)

// TestReasoningApart: a thinking model's answer comes as reasoning
// events, is stored as Reasoning (not Content) with its token count and
// time, and the next turn's prompt is what the template makes of the
// history — Qwen3's leaves earlier reasoning out.
func TestReasoningApart(t *testing.T) {
	path := testutil.ThinkingQwen3(t)
	f := newFixture(t, Options{})
	if info := f.load(path); info.Thinks != "think" || !info.ThinkingSwitch {
		t.Errorf("model info: thinks %q, switch %v", info.Thinks, info.ThinkingSwitch)
	}
	set := greedy(12)
	conv := f.conv(set)

	first := f.send(conv, "Why is the sky blue?")
	prompt, raw := engineAnswer(t, path, set, engine.KVF16, []chat.Message{{Role: "user", Content: "Why is the sky blue?"}})
	if !strings.HasSuffix(prompt, "<think>\n") {
		t.Fatalf("prompt does not open a think block: %q", prompt)
	}
	want := strings.TrimLeft(raw, "\n")
	if want == "" {
		t.Fatal("the model wrote nothing to reason with")
	}
	t.Logf("reasoning %q", want)
	if first.reasoning != want || first.text != "" {
		t.Fatalf("events: reasoning %q, content %q; want reasoning %q and no content", first.reasoning, first.text, want)
	}
	msgs := f.messages(conv)
	a := msgs[len(msgs)-1]
	if a.Reasoning != want || a.Content != "" {
		t.Fatalf("stored: reasoning %q, content %q", a.Reasoning, a.Content)
	}
	if a.ReasoningTokens != a.GenTokens || a.ReasoningTokens == 0 || first.stats.ReasoningTokens != a.ReasoningTokens {
		t.Errorf("reasoning tokens: stored %d of %d, stats %d", a.ReasoningTokens, a.GenTokens, first.stats.ReasoningTokens)
	}
	if a.ReasoningTime <= 0 || first.stats.ReasoningTime != a.ReasoningTime {
		t.Errorf("reasoning time: stored %v, stats %v", a.ReasoningTime, first.stats.ReasoningTime)
	}

	// The next turn: rendered from the history with the reasoning given
	// to the template, which drops it from the earlier turn.
	f.send(conv, "And at sunset?")
	msgs = f.messages(conv)
	hist := chatMessages(set, msgs[:len(msgs)-1])
	if hist[1].ReasoningContent != want {
		t.Fatalf("history hands the template reasoning %q", hist[1].ReasoningContent)
	}
	model := openEngineModel(t, path)
	defer model.Close()
	text, err := model.RenderChatWith(context.Background(), hist, true, templateVars(set))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, want) {
		t.Errorf("the second prompt carries the first answer's reasoning: %q", text)
	}
	fp, ok := promptFingerprint(msgs[len(msgs)-1].Sampler)
	if !ok || fp.Text != textFingerprint(text) {
		t.Errorf("the second answer was not generated from the template's prompt %q", text)
	}
}

// TestThinkingOff: the chat's switch renders enable_thinking=false, and
// the answer is all content.
func TestThinkingOff(t *testing.T) {
	path := testutil.ThinkingQwen3(t)
	f := newFixture(t, Options{})
	f.load(path)
	set := greedy(10)
	set.ThinkingOff = true
	conv := f.conv(set)
	got := f.send(conv, "Hi")
	prompt, raw := engineAnswer(t, path, set, engine.KVF16, []chat.Message{{Role: "user", Content: "Hi"}})
	if !strings.HasSuffix(prompt, "<think>\n\n</think>\n\n") {
		t.Fatalf("thinking off: prompt %q", prompt)
	}
	if got.text != raw || got.reasoning != "" {
		t.Fatalf("content %q, reasoning %q; want content %q", got.text, got.reasoning, raw)
	}
	msgs := f.messages(conv)
	if a := msgs[len(msgs)-1]; a.Reasoning != "" || a.ReasoningTokens != 0 || a.Content != raw {
		t.Fatalf("stored %+v", a)
	}
	// The switch is the chat's: stored with its settings.
	s, err := f.m.Settings(conv)
	if err != nil || !s.ThinkingOff {
		t.Fatalf("settings %+v, %v", s, err)
	}
}

// TestHarmonyModelAnswers: a gpt-oss model (its Harmony template) whose
// output follows no Harmony format — a random model's — still answers,
// all of it content, generated with control tokens rendered for the
// parser; and its prompt is Harmony's.
func TestHarmonyModelAnswers(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "engine", "chat", "testdata", "gpt-oss.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := synth.Build(synth.Tiny("gpt-oss"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetKV("tokenizer.chat_template", string(src)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "gpt-oss.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, Options{})
	if info := f.load(path); info.Thinks != "harmony" || info.ThinkingSwitch {
		t.Errorf("model info: thinks %q, switch %v", info.Thinks, info.ThinkingSwitch)
	}
	set := greedy(12)
	conv := f.conv(set)
	got := f.send(conv, "Hello")

	ctx := context.Background()
	model := openEngineModel(t, path)
	defer model.Close()
	ids, prompt, err := model.ChatTokens(ctx, []chat.Message{{Role: "user", Content: "Hello"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(prompt, "<|start|>user<|message|>Hello<|end|><|start|>assistant") {
		t.Fatalf("not a Harmony prompt: %q", prompt)
	}
	seq, err := model.NewSequence(engine.SequenceOptions{Context: set.Context})
	if err != nil {
		t.Fatal(err)
	}
	res, err := seq.Generate(ctx, ids, engine.GenerateOptions{MaxTokens: set.MaxTokens, Sampling: Params(set, uint64(set.Seed)), RenderSpecial: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text == "" {
		t.Fatal("the model wrote nothing")
	}
	if got.text != res.Text || got.reasoning != "" {
		t.Fatalf("content %q, reasoning %q; want content %q", got.text, got.reasoning, res.Text)
	}
	msgs := f.messages(conv)
	if a := msgs[len(msgs)-1]; a.Content != res.Text || a.Reasoning != "" {
		t.Fatalf("stored %q / %q", a.Content, a.Reasoning)
	}
}
