package testutil

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/churon/churon/internal/testdata"
	"github.com/churon/churon/models/synth"
)

// ThinkingQwen3 writes a tiny qwen3 model whose template is Qwen3's own
// (shared testdata) with the generation prompt of Qwen3's thinking
// releases (2507, DeepSeek-R1 alike): the template opens the <think>
// block itself unless enable_thinking is false. A random model then
// thinks for its whole answer, which is what a test needs to see
// reasoning at all; with the switch off it answers at once. It skips the
// test without the shared template.
func ThinkingQwen3(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testdata.Dir(t), "templates", "chat_template.qwen3.json"))
	if err != nil {
		t.Skipf("SKIP: no Qwen3 template in shared testdata: %v", err)
	}
	var g struct{ Template string }
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	const off = "{%- if enable_thinking is defined and enable_thinking is false %}\n        {{- '<think>\\n\\n</think>\\n\\n' }}\n    {%- endif %}"
	const both = "{%- if enable_thinking is defined and enable_thinking is false %}\n        {{- '<think>\\n\\n</think>\\n\\n' }}\n    {%- else %}\n        {{- '<think>\\n' }}\n    {%- endif %}"
	if !strings.Contains(g.Template, off) {
		t.Fatal("Qwen3's template has no enable_thinking switch where expected")
	}
	w, err := synth.Build(synth.Tiny("qwen3"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetKV("tokenizer.chat_template", strings.Replace(g.Template, off, both, 1)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "qwen3-thinking.gguf")
	if err := w.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	return p
}
