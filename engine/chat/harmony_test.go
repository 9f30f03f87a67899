package chat

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// harmonyGolden is testdata/gpt-oss.golden.json, written by
// tools/chatgold/harmony.py with Hugging Face's renderer (Python jinja2
// as transformers sets it up).
type harmonyGolden struct {
	Cases      []harmonyCase `json:"cases"`
	ErrorCases []harmonyCase `json:"error_cases"`
}

type harmonyCase struct {
	Name                string                     `json:"name"`
	Messages            []harmonyMessage           `json:"messages"`
	AddGenerationPrompt bool                       `json:"add_generation_prompt"`
	ExtraKwargs         map[string]json.RawMessage `json:"extra_kwargs"`
	Expected            string                     `json:"expected"`
	ExpectedError       string                     `json:"expected_error"`
}

type harmonyMessage struct {
	Role      string `json:"role"`
	Content   string `json:"content"`
	Thinking  string `json:"thinking"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

func (c harmonyCase) render(t *testing.T, tmpl *Template) (string, error) {
	msgs := make([]Message, len(c.Messages))
	for i, m := range c.Messages {
		msgs[i] = Message{Role: m.Role, Content: m.Content, Thinking: m.Thinking}
		for _, tc := range m.ToolCalls {
			msgs[i].ToolCalls = append(msgs[i].ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
	}
	extra := map[string]any{}
	for k, v := range c.ExtraKwargs {
		extra[k] = v
	}
	return tmpl.Render(context.Background(), msgs, Options{
		AddGenerationPrompt: c.AddGenerationPrompt,
		BOS:                 "<|startoftext|>", EOS: "<|return|>",
		Now:   goldenNow,
		Extra: extra,
	})
}

// TestHarmonyGolden renders gpt-oss's chat template on ten conversations
// (system and developer messages, several turns with earlier reasoning,
// Korean, tool calls pending and answered, built-in tools, the training
// form) and requires Hugging Face's bytes exactly; the template's own
// raise_exception checks must fire too.
func TestHarmonyGolden(t *testing.T) {
	var g harmonyGolden
	tmpl := readTemplateGolden(t, "gpt-oss", &g)
	if len(g.Cases) < 6 || len(g.ErrorCases) == 0 {
		t.Fatalf("%d cases, %d error cases", len(g.Cases), len(g.ErrorCases))
	}
	if tmpl.Name() != "gpt-oss (Harmony)" {
		t.Errorf("Name() = %q", tmpl.Name())
	}
	for _, c := range g.Cases {
		got, err := c.render(t, tmpl)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if got != c.Expected {
			t.Errorf("%s:\n got  %q\n want %q", c.Name, got, c.Expected)
		}
	}
	for _, c := range g.ErrorCases {
		_, err := c.render(t, tmpl)
		var te *TemplateError
		if !errors.As(err, &te) || te.Message != c.ExpectedError {
			t.Errorf("%s: got %v, want the template's error %q", c.Name, err, c.ExpectedError)
		}
	}
}
