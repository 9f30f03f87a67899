package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// checkDir is the Node client the tests drive (package.json pins the
// official openai library; the lock pins what it installs).
const checkDir = "../tools/openai-check"

// openaiClientDir installs tools/openai-check's dependencies (once, with
// npm ci from the lock, no install scripts) into the cache folder, never
// into the repository, and returns the folder to run check.mjs in. It
// skips the test, saying so, where there is no Node or npm or the
// registry cannot be reached.
func openaiClientDir(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("SKIP: no node: the official openai client cannot be run (install Node.js ≥ 20 and npm)")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("SKIP: no npm: the official openai client cannot be installed")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("SKIP: no cache folder for the openai client: %v", err)
	}
	dir := filepath.Join(cache, "churon", "openai-check")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.ReadFile(filepath.Join(checkDir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"package.json", "package-lock.json", "check.mjs"} {
		b, err := os.ReadFile(filepath.Join(checkDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Installed already when the lock npm left matches ours.
	if have, err := os.ReadFile(filepath.Join(dir, "node_modules", ".package-lock.json")); err != nil || !sameLockedOpenAI(have, lock) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("SKIP: npm ci of the openai client failed (is the registry reachable?): %v\n%s", err, out)
		}
	}
	return dir
}

// sameLockedOpenAI compares the openai version of two npm locks.
func sameLockedOpenAI(have, want []byte) bool {
	version := func(b []byte) string {
		var l struct {
			Packages map[string]struct{ Version string } `json:"packages"`
		}
		if json.Unmarshal(b, &l) != nil {
			return ""
		}
		return l.Packages["node_modules/openai"].Version
	}
	v := version(want)
	return v != "" && version(have) == v
}

// TestOpenAINodeClient: OpenAI's official Node library, as a real client,
// against the server: the model list, a chat completion, the same
// streamed with usage, a stop sequence, a stream the client cancels, and
// the library's errors for a bad request and an unknown model.
func TestOpenAINodeClient(t *testing.T) {
	dir := openaiClientDir(t)
	f := newFixture(t, fixtureOpt{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "check.mjs", "--base-url", f.base+"/v1")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var res struct {
		OK     bool            `json:"ok"`
		Failed string          `json:"failed"`
		Seen   json.RawMessage `json:"seen"`
	}
	if jerr := json.Unmarshal(bytes.TrimSpace(out), &res); jerr != nil || err != nil || !res.OK {
		t.Fatalf("the openai client: %v; failed %q\nsaw %s\n%s\nserver log:\n%s", err, res.Failed, res.Seen, stderr.String(), f.log.String())
	}
	t.Logf("the openai client saw: %s", res.Seen)
	// The stream the client cancelled ended as cancelled on the server.
	st := f.waitIdle()
	cancelled := false
	for _, e := range st.Log {
		if e.Finish == "cancelled" && e.CompletionTokens < 1000 {
			cancelled = true
		}
	}
	if !cancelled {
		t.Fatalf("no request ended cancelled on the server:\n%s", f.log.String())
	}
}

// TestCurlSSE: the raw stream as curl sees it: text/event-stream, each
// event one "data: {json}" line and a blank line, [DONE] last.
func TestCurlSSE(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("SKIP: no curl")
	}
	f := newFixture(t, fixtureOpt{})
	out, err := exec.Command(curl, "-sS", "-i", "-N", f.base+"/v1/chat/completions",
		"-H", "Content-Type: application/json",
		"-d", `{"messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":6,"temperature":0,"stream":true,"stream_options":{"include_usage":true}}`).Output()
	if err != nil {
		t.Fatal(err)
	}
	head, body, ok := strings.Cut(string(out), "\r\n\r\n")
	if !ok || !strings.HasPrefix(head, "HTTP/1.1 200") || !strings.Contains(strings.ToLower(head), "content-type: text/event-stream") ||
		!strings.Contains(strings.ToLower(head), "cache-control: no-cache") {
		t.Fatalf("headers %q", head)
	}
	if !strings.HasSuffix(body, "\n\ndata: [DONE]\n\n") || !strings.HasPrefix(body, "data: {") {
		t.Fatalf("stream framing: %q", body)
	}
	events := strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n")
	for i, e := range events {
		data, ok := strings.CutPrefix(e, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("event %d is not one data line: %q", i, e)
		}
		if data != "[DONE]" && !json.Valid([]byte(data)) {
			t.Fatalf("event %d is not JSON: %q", i, data)
		}
	}
	if !strings.Contains(events[len(events)-2], `"usage":{"prompt_tokens"`) {
		t.Fatalf("the last event before [DONE] is not the usage: %q", events[len(events)-2])
	}
}
