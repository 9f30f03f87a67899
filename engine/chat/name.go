package chat

import "strings"

// families tell a template's format by the markers it writes, in the
// spirit of llama.cpp's llm_chat_detect_template: a GGUF file names no
// format, and a person choosing a model wants "Llama 3", not the Jinja.
// The first match wins, so a marker that others contain comes later.
var families = []struct {
	name    string
	markers []string
}{
	{"gpt-oss (Harmony)", []string{"<|start|>", "<|channel|>"}},
	{"Llama 3", []string{"<|start_header_id|>"}},
	{"ChatML", []string{"<|im_start|>"}},
	{"Gemma", []string{"<start_of_turn>"}},
	{"DeepSeek", []string{"<｜User｜>"}},
	{"Phi-3", []string{"<|user|>", "<|end|>"}},
	{"Zephyr", []string{"<|user|>"}},
	{"Llama 2", []string{"[INST]", "<<SYS>>"}},
	{"Mistral", []string{"[INST]"}},
}

// Name is the template's format ("Llama 3", "ChatML", ...), "custom" for
// one of no known family, or "" for a nil template.
func (t *Template) Name() string {
	if t == nil {
		return ""
	}
	for _, f := range families {
		all := true
		for _, m := range f.markers {
			all = all && strings.Contains(t.src, m)
		}
		if all {
			return f.name
		}
	}
	return "custom"
}
