package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/models/synth"
)

// TestDemoWithoutModel: with no -m and an empty library, generate and
// chat use the built-in demo and say so in one line; generate's greedy
// tokens are llama.cpp's for stories260K. With a model in the library
// they ask for -m instead.
func TestDemoWithoutModel(t *testing.T) {
	home := t.TempDir()
	t.Setenv(paths.EnvHome, home)
	ref := readGreedyReference(t, "once_upon_a_time")
	var res struct {
		Tokens []int32 `json:"tokens"`
	}
	stderr := runJSON(t, &res, "generate", "-p", "Once upon a time", "-n", "32", "--temp", "0", "--json")
	if !slices.Equal(res.Tokens, ref.Generated[:32]) {
		t.Fatalf("tokens %v, llama.cpp's %v", res.Tokens, ref.Generated[:32])
	}
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "built-in demo") {
		t.Fatalf("stderr: %q", stderr)
	}
	out, stderr, code := run(t, "chat", "--new", "--message", "Once upon a time", "-n", "8", "--temp", "0", "--json")
	if code != 0 || !strings.Contains(stderr, "built-in demo") || !strings.Contains(out, `"finish_reason"`) {
		t.Fatalf("chat: exit %d, stderr %q, out %s", code, stderr, out)
	}

	writeSynth(t, filepath.Join(home, "data", "models", "tiny.gguf"), synth.Tiny("llama"))
	for _, args := range [][]string{
		{"generate", "-p", "hi"},
		{"chat", "--new", "--message", "hi"},
	} {
		if _, stderr, code := run(t, args...); code != 2 || !strings.Contains(stderr, "-m FILE.gguf") || !strings.Contains(stderr, "library has 1") {
			t.Errorf("%s with a model in the library: exit %d, %s", args[0], code, stderr)
		}
	}
}
