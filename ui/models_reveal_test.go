package ui

import (
	"path/filepath"
	"testing"
)

func TestFolderURL(t *testing.T) {
	dir := t.TempDir()
	u := folderURL(filepath.Join(dir, "m.gguf"))
	if u.Scheme != "file" || u.Path != filepath.ToSlash(dir) {
		t.Fatalf("folderURL = %s, want file://%s", u, filepath.ToSlash(dir))
	}
	if got := folderURL(filepath.Join(dir, "with space", "m.gguf")).String(); got != "file://"+filepath.ToSlash(dir)+"/with%20space" {
		t.Errorf("spaces not escaped: %s", got)
	}
}
