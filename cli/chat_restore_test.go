package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/internal/testdata"
)

// childChat runs `churon chat ARGS` in a fresh process with CHURON_HOME
// set to home, and decodes its --json output.
func childChat(t *testing.T, home string, args ...string) (chatJSON, string) {
	t.Helper()
	cmd := childCommand(append([]string{"chat"}, args...), paths.EnvHome+"="+home)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("churon chat %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var got chatJSON
	decodeJSON(t, "churon chat", out, &got)
	return got, stderr.String()
}

// copyTree copies a folder of plain files (a CHURON_HOME whose processes
// have exited).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		return copyFile(p, target)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestChatResumesFromSnapshot: `churon chat --conversation ID --message …`
// in a second process continues from the KV snapshot the first process
// left: it reports reused prompt tokens, restored from disk, and gives
// the same greedy answer as a run whose snapshot is gone (a cold
// prefill). A damaged snapshot is discarded with a line in the log, and
// the answer is still the same.
func TestChatResumesFromSnapshot(t *testing.T) {
	skipChildProcessesInShort(t)
	model := testdata.Stories260K(t)
	home := t.TempDir()
	first, _ := childChat(t, home, "-m", model, "--new", "--message", "Once upon a time", "--json", "-n", "16", "--temp", "0", "-t", "1")
	if first.PromptTokensReused != 0 || first.PromptCache != "none" {
		t.Fatalf("first turn %+v", first)
	}
	kvDir := filepath.Join(home, "cache", "kv")
	if files, _ := filepath.Glob(filepath.Join(kvDir, "*.kv")); len(files) != 1 {
		t.Fatalf("snapshots after the first run: %v", files)
	}
	// Two copies of the home as the first run left it: one without its
	// snapshot (cold), one with a damaged snapshot.
	cold, damaged := t.TempDir(), t.TempDir()
	copyTree(t, home, cold)
	copyTree(t, home, damaged)
	if err := os.RemoveAll(filepath.Join(cold, "cache", "kv")); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(damaged, "cache", "kv", "*.kv"))
	if len(files) != 1 {
		t.Fatalf("copied snapshots: %v", files)
	}
	b := readFile(t, files[0])
	if err := os.WriteFile(files[0], b[:len(b)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}

	args := []string{"-m", model, "--conversation", fmt.Sprint(first.ConversationID), "--message", "Tell me more", "--json", "-t", "1"}
	warm, _ := childChat(t, home, args...)
	if warm.PromptTokensReused == 0 || warm.PromptCache != "disk" || warm.RestoreMs <= 0 ||
		warm.PromptTokensReused+warm.PromptTokensProcessed != warm.PromptTokens {
		t.Fatalf("the second process did not resume from the snapshot: %+v", warm)
	}
	ref, _ := childChat(t, cold, args...)
	if ref.PromptTokensReused != 0 || ref.PromptCache != "none" {
		t.Fatalf("cold run %+v", ref)
	}
	if warm.Text != ref.Text || warm.Text == "" {
		t.Fatalf("resumed answer %q, cold answer %q", warm.Text, ref.Text)
	}
	bad, log := childChat(t, damaged, args...)
	if bad.Text != ref.Text || bad.PromptTokensReused != 0 || !strings.Contains(log, "discarded") {
		t.Fatalf("with a damaged snapshot: %+v\nlog: %s", bad, log)
	}
}
