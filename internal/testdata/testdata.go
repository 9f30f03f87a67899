// Package testdata locates the shared test data (real GGUF files and
// llama.cpp reference outputs) that lives next to the repository, never
// inside it.
//
// Tests call Dir and get either the directory or a loud skip, so a checkout
// without the data still builds and passes what it can.
package testdata

import (
	"os"
	"path/filepath"
	"testing"
)

// EnvVar names the environment variable that overrides the search.
const EnvVar = "CHURON_TESTDATA"

// Dir returns the shared test data directory, or skips the test loudly
// when it cannot be found.
//
// $CHURON_TESTDATA wins when set. Otherwise Dir walks up from the working
// directory (a test runs in its package directory) and takes the first
// shared/testdata it sees, which finds /work/shared/testdata next to a
// checkout in /work/main as well as a shared/ folder inside the repository.
func Dir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv(EnvVar); d != "" {
		if isDir(d) {
			return d
		}
		t.Skipf("SKIP: shared testdata not found at %s (from $%s); set %s to the testdata directory", d, EnvVar, EnvVar)
		return ""
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Skipf("SKIP: shared testdata not found (cannot get working directory: %v); set %s", err, EnvVar)
		return ""
	}
	tried := ""
	for d := wd; ; {
		c := filepath.Join(d, "shared", "testdata")
		if isDir(c) {
			return c
		}
		if tried == "" {
			tried = c
		}
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	t.Skipf("SKIP: shared testdata not found at %s or any shared/testdata above %s; set %s", tried, wd, EnvVar)
	return ""
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
