package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/internal/testdata"
	"github.com/churon/churon/models/synth"
)

// TestDemoWithoutModel: with no -m and an empty library, generate and
// chat use the built-in demo and say so in one line; generate's greedy
// tokens are llama.cpp's for stories260K. With a model in the library
// they ask for -m instead.
func TestDemoWithoutModel(t *testing.T) {
	home := t.TempDir()
	t.Setenv(paths.EnvHome, home)
	var ref struct {
		Generated []int32 `json:"generated_ids"`
	}
	data, err := os.ReadFile(filepath.Join(testdata.Dir(t), "reference", "stories260K_greedy_once_upon_a_time.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := run(t, "generate", "-p", "Once upon a time", "-n", "32", "--temp", "0", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Tokens []int32 `json:"tokens"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !slices.Equal(res.Tokens, ref.Generated[:32]) {
		t.Fatalf("tokens %v, llama.cpp's %v", res.Tokens, ref.Generated[:32])
	}
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "built-in demo") {
		t.Fatalf("stderr: %q", stderr)
	}
	out, stderr, code = run(t, "chat", "--new", "--message", "Once upon a time", "-n", "8", "--temp", "0", "--json")
	if code != 0 || !strings.Contains(stderr, "built-in demo") || !strings.Contains(out, `"finish_reason"`) {
		t.Fatalf("chat: exit %d, stderr %q, out %s", code, stderr, out)
	}

	lib := filepath.Join(home, "data", "models")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := synth.Write(filepath.Join(lib, "tiny.gguf"), synth.Tiny("llama")); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"generate", "chat"} {
		args := []string{cmd, "-p", "hi"}
		if cmd == "chat" {
			args = []string{cmd, "--new", "--message", "hi"}
		}
		if _, stderr, code := run(t, args...); code != 2 || !strings.Contains(stderr, "-m FILE.gguf") || !strings.Contains(stderr, "library has 1") {
			t.Errorf("%s with a model in the library: exit %d, %s", cmd, code, stderr)
		}
	}
}
