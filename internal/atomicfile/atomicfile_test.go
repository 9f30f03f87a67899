package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.gguf")
	boom := errors.New("boom")
	for _, c := range []struct {
		name    string
		fill    func(io.Writer) error
		wantErr error
		want    string // content afterwards
	}{
		{"new file", func(w io.Writer) error { _, err := io.WriteString(w, "first"); return err }, nil, "first"},
		{"replaced", func(w io.Writer) error { _, err := io.WriteString(w, "second"); return err }, nil, "second"},
		{"failure half-way keeps the old file", func(w io.Writer) error {
			io.WriteString(w, "half")
			return boom
		}, boom, "second"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Write(path, 0o644, c.fill)
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("err %v, want %v", err, c.wantErr)
			}
			if got, _ := os.ReadFile(path); string(got) != c.want {
				t.Errorf("content %q, want %q", got, c.want)
			}
			es, _ := os.ReadDir(dir)
			if len(es) != 1 {
				t.Errorf("%d files in the folder, want only the target", len(es))
			}
		})
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v", st.Mode(), err)
	}
}

func TestWriteMissingFolder(t *testing.T) {
	if err := Write(filepath.Join(t.TempDir(), "no", "x"), 0o644, func(io.Writer) error { return nil }); err == nil {
		t.Fatal("writing into a missing folder succeeded")
	}
}

func TestWriteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.json")
	if err := WriteFile(path, []byte(`{"models": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != `{"models": []}` {
		t.Fatalf("read back %q, %v", got, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
}
