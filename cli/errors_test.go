package cli

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/internal/units"
)

// internalNames are what a chain of our wrappings leaves in a message;
// none belongs in what a person reads.
var internalNames = []string{"gguf:", "engine:", "session:", "download:", "hub:", "arch:", "backend:", "load model"}

// checkPersonLine checks that stderr is one line that names path at most
// once (exactly once when path is given) and holds every one of want.
func checkPersonLine(t *testing.T, stderr, path string, want ...string) {
	t.Helper()
	line := strings.TrimSuffix(stderr, "\n")
	if line == "" || strings.Contains(line, "\n") {
		t.Fatalf("stderr is not one line: %q", stderr)
	}
	for _, n := range internalNames {
		// "x.gguf: " is a file name; " gguf: " is our package.
		if strings.HasPrefix(line, n) || strings.Contains(line, " "+n) {
			t.Errorf("%q holds the internal %q", line, n)
		}
	}
	if path != "" && strings.Count(line, path) != 1 {
		t.Errorf("%q names %s %d times; want once", line, path, strings.Count(line, path))
	}
	for _, w := range want {
		if !strings.Contains(line, w) {
			t.Errorf("%q does not say %q", line, w)
		}
	}
}

// TestModelFileErrorsForPeople loads files that are not usable models
// through the commands that load one; each says what is wrong in one
// line.
func TestModelFileErrorsForPeople(t *testing.T) {
	t.Setenv("CHURON_HOME", t.TempDir())
	dir := t.TempDir()
	notGGUF := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notGGUF, []byte("these are my notes, not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	full := readFile(t, synthFile(t, "llama"))
	cut := filepath.Join(dir, "cut.gguf")
	if err := os.WriteFile(cut, full[:len(full)*3/4], 0o644); err != nil {
		t.Fatal(err)
	}
	w := gguf.NewWriter()
	if err := w.SetKV("general.architecture", "mamba9"); err != nil {
		t.Fatal(err)
	}
	alien := filepath.Join(dir, "alien.gguf")
	if err := w.WriteFile(alien); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.gguf")
	cases := []struct {
		name, path string
		want       []string
	}{
		{"not GGUF", notGGUF, []string{"is not a model file", "GGUF"}},
		{"incomplete", cut, []string{"is incomplete (" + units.Bytes(int64(len(full)*3/4)) + " of " + units.Bytes(int64(len(full))) + ")", "download it again"}},
		{"unknown architecture", alien, []string{`"mamba9"`, "cannot run", "llama"}},
		{"missing", missing, []string{"no such file"}},
	}
	for _, c := range cases {
		for _, cmd := range [][]string{
			{"info", "-m", c.path},
			{"generate", "-m", c.path, "-p", "hi", "-n", "1"},
			{"chat", "-m", c.path, "--message", "hi", "-n", "1", "--no-snapshots"},
			{"bench", "-m", c.path, "-p", "1", "-n", "1", "--no-bandwidth"},
		} {
			t.Run(c.name+"/"+cmd[0], func(t *testing.T) {
				_, stderr, code := run(t, cmd...)
				if code != 1 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				checkPersonLine(t, stderr, c.path, c.want...)
			})
		}
	}
}

// TestPullUnreachableForPeople pulls from a port where nothing listens,
// by URL and from the hub: one line that says the server cannot be
// reached, at once (a refused connection is not retried).
func TestPullUnreachableForPeople(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	t.Setenv("CHURON_HUB_URL", "http://"+addr)
	for _, args := range [][]string{
		{"pull", "--url", "http://" + addr + "/m.gguf", "-o", t.TempDir()},
		{"pull", "test/tiny-GGUF:Q8_0", "-o", t.TempDir()},
	} {
		_, stderr, code := run(t, args...)
		if code != 1 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		checkPersonLine(t, stderr, "", "cannot reach", "internet connection")
		if strings.Contains(stderr, "retrying") {
			t.Errorf("%v: %q: a refused connection was retried", args, stderr)
		}
	}
}

// TestMessage words the errors no test can make for real here (a full
// memory, a network without DNS) as the services wrap them.
func TestMessage(t *testing.T) {
	path := "/models/big.gguf"
	cases := []struct {
		name string
		err  error
		want []string
	}{
		{"out of memory", withPath(path, fmt.Errorf("engine: load %s: %w", path, fmt.Errorf("%w: weights need 40 GiB", backend.ErrOutOfMemory))),
			[]string{"not enough memory for " + path, "smaller model"}},
		{"offline hub", fmt.Errorf("hub: list a/b@main: %w", &net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "no such host", Name: "huggingface.co", IsNotFound: true}}),
			[]string{"cannot reach huggingface.co", "internet connection"}},
		{"anything else", fmt.Errorf("session: %w", errors.New("library: no such model")), []string{"no such model"}},
		// Only package prefixes go: the same words inside a sentence stay.
		{"words that are package names", errors.New("compare: the reference must be one of the models: a.gguf"),
			[]string{"the reference must be one of the models: a.gguf"}},
		{"export in a sentence", errors.New("import: not a valid Churon chat export: line 1"), []string{"chat export: line 1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkPersonLine(t, message(c.err)+"\n", "", c.want...)
			if strings.Count(message(c.err), path) > 1 {
				t.Errorf("%q names the path twice", message(c.err))
			}
		})
	}
}

func TestDebugPrintsTheChain(t *testing.T) {
	t.Setenv("CHURON_DEBUG", "1")
	missing := filepath.Join(t.TempDir(), "missing.gguf")
	_, stderr, _ := run(t, "info", "-m", missing)
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "engine: load") {
		t.Fatalf("stderr %q; want the line for people, then the whole chain", stderr)
	}
}
