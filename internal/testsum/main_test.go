package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// module is a small module with every kind of outcome go test has: tests
// that pass (one with subtests, one that logs), one skipped, one that
// fails in a subtest, one that panics, a package that does not build and
// one without tests.
var module = map[string]string{
	"go.mod":           "module tsmod\n\ngo 1.22\n",
	"okp/a_test.go":    "package okp\nimport \"testing\"\nfunc TestA(t *testing.T) { t.Log(\"quiet passing log\") }\nfunc TestTable(t *testing.T) { for _, n := range []string{\"x\", \"y\"} { t.Run(n, func(t *testing.T) {}) } }\nfunc TestSkip(t *testing.T) { t.Skip(\"no data\") }\n",
	"failp/a_test.go":  "package failp\nimport \"testing\"\nfunc TestGood(t *testing.T) {}\nfunc TestBad(t *testing.T) { t.Log(\"context line\"); t.Run(\"case1\", func(t *testing.T) { t.Errorf(\"want 2, got 3\") }) }\n",
	"buildp/a_test.go": "package buildp\nimport \"testing\"\nfunc TestX(t *testing.T) { undefinedThing() }\n",
	"panicp/a_test.go": "package panicp\nimport \"testing\"\nfunc TestOK(t *testing.T) {}\nfunc TestPanics(t *testing.T) { var m map[string]int; m[\"a\"] = 1 }\n",
	"notests/a.go":     "package notests\n",
}

// TestSummarizeRealGoTest runs go test -json on the module and checks
// what testsum prints and counts.
func TestSummarizeRealGoTest(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	for name, text := range module {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "test", "-json", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local")
	events, _ := cmd.Output() // it fails: some of its tests do
	var out bytes.Buffer
	c, err := summarize(bytes.NewReader(events), &out)
	if err != nil {
		t.Fatal(err)
	}
	// TestGood, TestA, TestTable, TestOK pass; TestBad and TestPanics
	// fail, and so does buildp, which has no test to count.
	if c != (counts{passed: 4, failed: 3}) {
		t.Errorf("counts %+v; want 4 passed, 3 failed", c)
	}
	text := out.String()
	for _, want := range []string{"want 2, got 3", "context line", "panic: assignment to entry in nil map", "undefined: undefinedThing",
		"ok  \ttsmod/okp", "FAIL\ttsmod/failp", "FAIL\ttsmod/buildp", "?   \ttsmod/notests"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "quiet passing log") {
		t.Errorf("a passing test's log is shown:\n%s", text)
	}
}

func TestTally(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tally")
	for _, c := range []counts{{3, 0}, {10, 2}, {0, 0}} {
		if err := addTally(path, c); err != nil {
			t.Fatal(err)
		}
	}
	got, err := readTally(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != (counts{13, 2}) {
		t.Errorf("tally %+v; want 13 passed, 2 failed", got)
	}
}
