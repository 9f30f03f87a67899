package chat

import "testing"

// TestTemplateName names the real templates of the shared test data (the
// models they come from) and the fallback.
func TestTemplateName(t *testing.T) {
	want := map[string]string{"llama3": "Llama 3", "qwen3": "ChatML", "gemma3": "Gemma", "mistral_nemo": "Mistral", "phi-3": "Phi-3"}
	goldens := loadGoldens(t)
	for model, name := range want {
		g, ok := goldens[model]
		if !ok {
			t.Errorf("no golden template for %s", model)
			continue
		}
		tmpl, err := Parse(g.Template)
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		if got := tmpl.Name(); got != name {
			t.Errorf("%s's template is named %q; want %q", model, got, name)
		}
	}
	if got := Fallback().Name(); got != "ChatML" {
		t.Errorf("the fallback is named %q; want ChatML", got)
	}
	custom, err := Parse("{% for m in messages %}{{ m.content }}{% endfor %}")
	if err != nil {
		t.Fatal(err)
	}
	if got := custom.Name(); got != "custom" {
		t.Errorf("a template of no family is named %q; want custom", got)
	}
}
