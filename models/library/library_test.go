package library

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/churon/churon/models/header"
	"github.com/churon/churon/models/synth"
)

func write(t *testing.T, path string) string {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := synth.Write(path, synth.Tiny("llama")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

func TestLibrary(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	lib, err := Open(filepath.Join(root, "lib"), header.Local)
	if err != nil {
		t.Fatal(err)
	}
	managed := filepath.Join(lib.Dir(), "owner", "a-Q8_0.gguf")
	sum := write(t, managed)
	os.WriteFile(filepath.Join(lib.Dir(), "b.gguf.part"), []byte("partial"), 0o644)
	write(t, filepath.Join(lib.Dir(), "s-00001-of-00002.gguf"))
	os.WriteFile(filepath.Join(lib.Dir(), "s-00002-of-00002.gguf"), make([]byte, 1000), 0o644)
	folder := filepath.Join(root, "lmstudio")
	inFolder := filepath.Join(folder, "x", "c.gguf")
	write(t, inFolder)
	single := filepath.Join(root, "elsewhere", "d.gguf")
	write(t, single)

	if err := lib.Record(managed, Origin{Repo: "owner/a-GGUF", Revision: "main", File: "a-Q8_0.gguf", SHA256: sum}); err != nil {
		t.Fatal(err)
	}
	if err := lib.AddFolder(folder); err != nil {
		t.Fatal(err)
	}
	if err := lib.AddFile(single); err != nil {
		t.Fatal(err)
	}
	if err := lib.AddFile(filepath.Join(lib.Dir(), "b.gguf.part")); err == nil {
		t.Error("AddFile accepted a file that is not GGUF")
	}
	models, err := lib.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byFile := map[string]Model{}
	for _, m := range models {
		byFile[filepath.Base(m.Path)] = m
	}
	if len(models) != 4 || byFile["a-Q8_0.gguf"].Origin.Repo != "owner/a-GGUF" || !byFile["a-Q8_0.gguf"].Managed ||
		byFile["c.gguf"].Managed || byFile["d.gguf"].Managed {
		t.Fatalf("%d models: %+v", len(models), byFile)
	}
	a := byFile["a-Q8_0.gguf"]
	if a.Meta.Architecture != "llama" || !a.Meta.HasTemplate || a.Meta.Parameters == 0 || a.Meta.ContextLength != 256 || a.Err != "" {
		t.Errorf("meta %+v (%s)", a.Meta, a.Err)
	}
	s := byFile["s-00001-of-00002.gguf"]
	if len(s.Parts) != 2 {
		t.Errorf("split model %+v", s)
	}
	st, _ := os.Stat(s.Parts[0])
	if s.Size != st.Size()+1000 {
		t.Errorf("split size %d", s.Size)
	}

	if got, err := lib.Verify(ctx, a); err != nil || got != sum {
		t.Errorf("verify: %s %v", got, err)
	}
	if _, err := lib.Verify(ctx, byFile["d.gguf"]); !errors.Is(err, ErrNoHash) {
		t.Errorf("verify without hash: %v", err)
	}
	f, _ := os.OpenFile(managed, os.O_WRONLY, 0)
	f.WriteAt([]byte{1, 2, 3}, 100)
	f.Close()
	if _, err := lib.Verify(ctx, a); err == nil {
		t.Error("verify passed a damaged file")
	}

	if m, err := lib.Find(ctx, "d"); err != nil || m.Path != single {
		t.Errorf("find d: %+v %v", m, err)
	}
	if _, err := lib.Find(ctx, "nothing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("find nothing: %v", err)
	}
	if _, err := lib.Find(ctx, ".gguf"); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("find ambiguous: %v", err)
	}

	// Someone else's file: only the reference goes.
	if deleted, err := lib.Delete(byFile["d.gguf"]); err != nil || deleted {
		t.Fatalf("delete in place: %v %v", deleted, err)
	}
	if _, err := os.Stat(single); err != nil {
		t.Fatal("an in-place file was deleted from disk")
	}
	// Ours: every part goes.
	if deleted, err := lib.Delete(s); err != nil || !deleted {
		t.Fatalf("delete split: %v %v", deleted, err)
	}
	for _, p := range s.Parts {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there", p)
		}
	}
	models, _ = lib.List(ctx)
	if len(models) != 2 {
		t.Errorf("%d models after deletes", len(models))
	}
}
