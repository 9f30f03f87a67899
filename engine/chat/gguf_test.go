package chat

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/internal/testdata"
)

// TestGGUFTemplates renders the chat templates stored in real GGUF files
// (tokenizer.chat_template) against the goldens made from the same
// models' tokenizer_config.json.
func TestGGUFTemplates(t *testing.T) {
	dir := testdata.Dir(t)
	goldens := loadGoldens(t)
	for _, model := range []string{"llama3", "qwen3"} {
		t.Run(model, func(t *testing.T) {
			f, err := gguf.Open(filepath.Join(dir, "vocab", "ggml-vocab-"+model+".gguf"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			src, ok := f.String("tokenizer.chat_template")
			if !ok || src == "" {
				t.Fatal("no tokenizer.chat_template in the file")
			}
			tmpl, err := Parse(src)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			g, ok := goldens[model]
			if !ok {
				t.Fatalf("no golden file for %s", model)
			}
			if src != g.Template {
				t.Logf("the GGUF's template differs from the golden's; rendering the goldens anyway")
			}
			for _, c := range g.Cases {
				t.Run(c.subtestName(model), func(t *testing.T) {
					got, err := tmpl.Render(context.Background(), c.messages(t), c.options(g))
					if err != nil {
						t.Fatalf("Render: %v", err)
					}
					if got != *c.Expected {
						t.Errorf("mismatch\n got: %q\nwant: %q", got, *c.Expected)
					}
				})
			}
		})
	}
}
