package chat

import (
	"context"
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
	var g goldenFile
	tmpl := readTemplateGolden(t, "qwen3.5", &g)
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
	if tmpl.Name() != "ChatML" {
		t.Errorf("Name() = %q", tmpl.Name())
	}
	if !strings.Contains(tmpl.Source(), "enable_thinking") {
		t.Error("template has no enable_thinking switch: the app would not offer thinking off")
	}
	checkGolden(t, "qwen3.5", g, tmpl)
}

// TestQwen35OutputStartsInThinking: Qwen 3.5's generation prompt opens the
// think block itself when thinking is on, so what the model writes starts
// as reasoning and the answer follows </think>; with thinking off the
// prompt closes an empty block and the output is all answer.
func TestQwen35OutputStartsInThinking(t *testing.T) {
	tmpl := readTemplateGolden(t, "qwen3.5", nil)
	if f := OutputFormatOf(tmpl); f != OutputThink {
		t.Fatalf("OutputFormatOf = %v, want OutputThink", f)
	}
	msgs := []Message{{Role: "user", Content: "Hi"}}
	for _, c := range []struct {
		name          string
		extra         map[string]any
		out           string
		thinking      bool
		reas, content string
	}{
		{"on", nil, "The user greets.\n</think>\n\nHello!", true, "The user greets.", "Hello!"},
		{"off", map[string]any{"enable_thinking": false}, "Hello!", false, "", "Hello!"},
	} {
		prompt, err := tmpl.Render(context.Background(), msgs, Options{AddGenerationPrompt: true, Extra: c.extra})
		if err != nil {
			t.Fatal(err)
		}
		p := NewOutputParser(OutputThink, prompt)
		if p.Thinking() != c.thinking {
			t.Errorf("%s: Thinking() at the start = %v", c.name, p.Thinking())
		}
		var reas, content strings.Builder
		for _, part := range append(p.Feed(c.out), p.Flush()...) {
			switch part.Kind {
			case PartReasoning:
				reas.WriteString(part.Text)
			case PartContent:
				content.WriteString(part.Text)
			}
		}
		if reas.String() != c.reas || content.String() != c.content {
			t.Errorf("%s: reasoning %q, content %q; want %q, %q", c.name, reas.String(), content.String(), c.reas, c.content)
		}
	}
}
