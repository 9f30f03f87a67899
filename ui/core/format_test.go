package core_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/churon/churon/ui/core"
)

// TestModelLabel: a model is called by its file name, except an Ollama
// blob, whose file name is a hash: it is called as Ollama calls it.
func TestModelLabel(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "models")
	blob := filepath.Join(dir, "blobs", "sha256-abcd")
	manifest := filepath.Join(dir, "manifests", "registry.ollama.ai", "library", "qwen3", "0.6b")
	for p, data := range map[string]string{
		blob:     "GGUF\x03\x00\x00\x00",
		manifest: `{"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:abcd"}]}`,
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{
		"/m/Qwen3-0.6B-Q4_K_M.gguf": "Qwen3-0.6B-Q4_K_M",
		blob:                        "qwen3:0.6b",
	} {
		if got := core.ModelLabel(path); got != want {
			t.Errorf("ModelLabel(%s) = %q, want %q", path, got, want)
		}
	}
}
