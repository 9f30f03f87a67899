package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/churon/churon/app/paths"
)

func TestUsageErrors(t *testing.T) {
	t.Setenv(paths.EnvHome, t.TempDir())
	wantUsageErrors(t, [][]string{
		{"frobnicate"},
		// (No -m: the built-in demo, or a usage error — TestDemoWithoutModel.)
		{"generate", "-m", "x.gguf"},
		{"generate", "-m", "x.gguf", "-p", "hi", "--top-p", "2"},
		{"logits", "-m", "x.gguf"},
	})
	if _, stderr, code := run(t, "generate", "-m", filepath.Join(t.TempDir(), "missing.gguf"), "-p", "x"); code != 1 || !strings.Contains(stderr, "missing.gguf") {
		t.Errorf("missing model: exit %d, %q", code, stderr)
	}
	if out, _, code := run(t, "--version"); code != 0 || !strings.HasPrefix(out, "churon ") {
		t.Errorf("--version: %d %q", code, out)
	}
}
