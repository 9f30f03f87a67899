package chat

import (
	"testing"
)

// TestOutputParser checks each format on whole generations fed at once
// and in pieces of every small size (markers split anywhere): the parts
// must be the same, and no marker may reach the text.
func TestOutputParser(t *testing.T) {
	type call struct{ recipient, ctype, args string }
	tests := []struct {
		name      string
		format    OutputFormat
		prompt    string
		text      string
		content   string
		reasoning string
		calls     []call
	}{
		{"harmony analysis then final", OutputHarmony, "<|start|>assistant",
			"<|channel|>analysis<|message|>The user greets me.<|end|><|start|>assistant<|channel|>final<|message|>Hello! 안녕하세요.<|return|>",
			"Hello! 안녕하세요.", "The user greets me.", nil},
		{"harmony final without return (stopped at EOG)", OutputHarmony, "",
			"<|channel|>analysis<|message|>Short.<|end|><|start|>assistant<|channel|>final<|message|>Done.",
			"Done.", "Short.", nil},
		{"harmony tool call", OutputHarmony, "",
			" to=functions.get_weather<|channel|>commentary json<|message|>{\"city\":\"Seoul\"}<|call|>",
			"", "", []call{{"functions.get_weather", "json", `{"city":"Seoul"}`}}},
		{"harmony reasoning, then a call cut at EOG", OutputHarmony, "",
			"<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{}",
			"", "Need the weather.", []call{{"functions.get_weather", "json", "{}"}}},
		{"harmony two analysis messages", OutputHarmony, "",
			"<|channel|>analysis<|message|>First.<|end|><|start|>assistant<|channel|>analysis<|message|>Second.<|end|><|start|>assistant<|channel|>final<|message|>Answer<|return|>",
			"Answer", "First.\n\nSecond.", nil},
		{"harmony preamble on commentary", OutputHarmony, "",
			"<|channel|>commentary<|message|>Let me check.<|end|><|start|>assistant<|channel|>final<|message|>Checked.",
			"Let me check.\n\nChecked.", "", nil},
		{"harmony-less text from a Harmony model", OutputHarmony, "", "Just text, 그냥.", "Just text, 그냥.", "", nil},
		{"harmony-less text with markers later", OutputHarmony, "", "Hello <|end|> there", "Hello ", "", nil},
		{"think block", OutputThink, "<|im_start|>assistant\n",
			"<think>\nThe user wants a joke.\n\nKeep it short.\n</think>\n\nWhy did the <b>chicken</b> cross?",
			"Why did the <b>chicken</b> cross?", "The user wants a joke.\n\nKeep it short.", nil},
		{"think opened by the prompt", OutputThink, "<|im_start|>assistant\n<think>\n",
			"Hmm.\n</think>\n\nYes.", "Yes.", "Hmm.", nil},
		{"empty think (thinking off)", OutputThink, "<|im_start|>assistant\n<think>\n\n</think>\n\n",
			"Answer < 3 and x<y.", "Answer < 3 and x<y.", "", nil},
		{"think cut off", OutputThink, "", "<think>\nhalf a thought\n", "", "half a thought\n", nil},
		{"plain", OutputPlain, "", "<think>shown</think> as is", "<think>shown</think> as is", "", nil},
	}
	for _, tc := range tests {
		for _, step := range []int{0, 1, 2, 3, 5, 7, 11} {
			p := NewOutputParser(tc.format, tc.prompt)
			var parts []Part
			if step == 0 {
				parts = append(p.Feed(tc.text), p.Flush()...)
			} else {
				for i := 0; i < len(tc.text); i += step {
					parts = append(parts, p.Feed(tc.text[i:min(i+step, len(tc.text))])...)
				}
				parts = append(parts, p.Flush()...)
			}
			content, reasoning, parsed := joinParts(parts)
			var calls []call
			for _, x := range parsed {
				calls = append(calls, call{x.Recipient, x.ContentType, x.Text})
			}
			if content != tc.content || reasoning != tc.reasoning {
				t.Errorf("%s (step %d): content %q reasoning %q, want %q and %q", tc.name, step, content, reasoning, tc.content, tc.reasoning)
			}
			if len(calls) != len(tc.calls) {
				t.Errorf("%s (step %d): calls %+v, want %+v", tc.name, step, calls, tc.calls)
			} else {
				for i := range calls {
					if calls[i] != tc.calls[i] {
						t.Errorf("%s (step %d): call %+v, want %+v", tc.name, step, calls[i], tc.calls[i])
					}
				}
			}
		}
	}
}

func TestOutputFormatOf(t *testing.T) {
	for src, want := range map[string]OutputFormat{
		"{{ '<|start|>assistant<|channel|>final' }}":                      OutputHarmony,
		"{% if enable_thinking is false %}<think>\n\n</think>{% endif %}": OutputThink,
		"{{ '<|im_start|>' }}":                                            OutputPlain,
	} {
		tmpl, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if got := OutputFormatOf(tmpl); got != want {
			t.Errorf("%q: %v, want %v", src, got, want)
		}
	}
}

// TestHarmonyPlainStreams: text that is no Harmony header streams as the
// answer at once rather than waiting for a header that never ends.
func TestHarmonyPlainStreams(t *testing.T) {
	p := NewOutputParser(OutputHarmony, "<|start|>assistant")
	if got := p.Feed("assist"); got != nil {
		t.Fatalf("a header's start came out: %+v", got)
	}
	p = NewOutputParser(OutputHarmony, "<|start|>assistant")
	got := p.Feed("Hello")
	if len(got) != 1 || got[0].Kind != PartContent || got[0].Text != "Hello" {
		t.Fatalf("plain text held back: %+v", got)
	}
	if got := p.Feed(" world"); len(got) != 1 || got[0].Text != " world" {
		t.Fatalf("next text: %+v", got)
	}
}
