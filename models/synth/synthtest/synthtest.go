// Package synthtest writes synthetic models (models/synth) for tests,
// once per test binary: tests that share a model share its file, kept in
// one temporary folder that Remove deletes at the end of TestMain.
package synthtest

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/churon/churon/models/synth"
)

var (
	mu   sync.Mutex
	dir  string
	made = map[string]string{}
)

// Path returns the file of spec, written the first time key is asked
// for: one key is one model, whatever spec later calls pass.
func Path(t testing.TB, key string, spec synth.Spec) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if p, ok := made[key]; ok {
		return p
	}
	if dir == "" {
		d, err := os.MkdirTemp("", "churon-synth-test-")
		if err != nil {
			t.Fatal(err)
		}
		dir = d
	}
	p := filepath.Join(dir, key+".gguf")
	if err := synth.Write(p, spec); err != nil {
		t.Fatal(err)
	}
	made[key] = p
	return p
}

// Main runs the tests and removes the files Path wrote; a TestMain with
// nothing else to do is `func TestMain(m *testing.M) { synthtest.Main(m) }`.
func Main(m *testing.M) {
	code := m.Run()
	Remove()
	os.Exit(code)
}

// Remove deletes the files Path wrote (for a TestMain of its own, after
// m.Run).
func Remove() {
	mu.Lock()
	defer mu.Unlock()
	if dir != "" {
		os.RemoveAll(dir)
		dir, made = "", map[string]string{}
	}
}
