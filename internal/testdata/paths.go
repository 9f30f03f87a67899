package testdata

import (
	"path/filepath"
	"testing"
)

// Path returns a file or folder inside the shared test data, or skips the
// test loudly like Dir: testdata.Path(t, "quantzoo", "zoo-F32.gguf").
func Path(t testing.TB, elem ...string) string {
	t.Helper()
	return filepath.Join(append([]string{Dir(t)}, elem...)...)
}

// Stories260K returns the path of stories260K.gguf, the small real model
// most tests run on.
func Stories260K(t testing.TB) string {
	t.Helper()
	return Path(t, "models", "stories260K.gguf")
}
