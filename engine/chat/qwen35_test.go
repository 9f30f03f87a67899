package chat

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestQwen35Golden renders Qwen 3.5's chat template (testdata/qwen3.5.jinja)
// on the conversations of testdata/qwen3.5.golden.json, written by
// tools/chatgold/qwen35.py with Hugging Face's renderer: thinking on by
// default and with enable_thinking true, off with enable_thinking false, a
// system message, several turns whose earlier reasoning is dropped (given
// as reasoning_content or inline <think>), the reasoning after the last
// user turn kept, Korean, code, tool calls and results. Every case must
// give Hugging Face's bytes; the template's raise_exception checks must
// fire with its messages.
func TestQwen35Golden(t *testing.T) {
	src, err := os.ReadFile("testdata/qwen3.5.jinja")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/qwen3.5.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) < 20 || len(g.ErrorCases) < 3 {
		t.Fatalf("%d cases, %d error cases", len(g.Cases), len(g.ErrorCases))
	}
	var off, on int
	for _, c := range g.Cases {
		if !c.AddGenerationPrompt || c.Expected == nil {
			continue
		}
		if strings.HasSuffix(*c.Expected, "<|im_start|>assistant\n<think>\n\n</think>\n\n") {
			off++
		} else if strings.HasSuffix(*c.Expected, "<|im_start|>assistant\n<think>\n") {
			on++
		}
	}
	if off < 5 || on < 5 {
		t.Fatalf("golden has %d prompts with thinking off and %d with it on, want at least 5 of each", off, on)
	}
	tmpl, err := Parse(string(src))
	if err != nil {
		t.Fatal(err)
	}
	if tmpl.Name() != "ChatML" {
		t.Errorf("Name() = %q", tmpl.Name())
	}
	if !strings.Contains(tmpl.Source(), "enable_thinking") {
		t.Error("template has no enable_thinking switch: the app would not offer thinking off")
	}
	checkGolden(t, "qwen3.5", g, tmpl)
}
