package demo

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/churon/churon/internal/testdata"
)

// TestEmbeddedModel: the embedded file is the one the README describes,
// and the one the shared test data's README lists.
func TestEmbeddedModel(t *testing.T) {
	sum := sha256.Sum256(Bytes())
	got := hex.EncodeToString(sum[:])
	if got != SHA256 {
		t.Fatalf("embedded model's sha256 %s, want %s", got, SHA256)
	}
	if len(Bytes()) != 1185376 {
		t.Fatalf("embedded model of %d bytes", len(Bytes()))
	}
	readme, err := os.ReadFile(filepath.Join(testdata.Dir(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The test data lists it as `stories260K.gguf` … `270cba1b…256d`.
	var listed string
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.Contains(line, "`stories260K.gguf`") {
			listed = line
		}
	}
	short := got[:8] + "…" + got[len(got)-4:]
	if !strings.Contains(listed, short) {
		t.Fatalf("the test data's README lists stories260K.gguf as %q, without %s", listed, short)
	}
	if !IsPath(Path) || IsPath("/models/stories260K.gguf") {
		t.Fatal("IsPath")
	}
}
