package session

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/internal/testdata"
)

// TestLoadErrorsTyped: a file that fails to load is reported as a
// LoadError whose kind a front end can word: not a model, cut short (with
// the sizes), an architecture Churon does not run (with those it does).
func TestLoadErrorsTyped(t *testing.T) {
	dir := t.TempDir()
	notModel := filepath.Join(dir, "notes.gguf")
	if err := os.WriteFile(notModel, []byte("these are my notes, not a model"), 0o600); err != nil {
		t.Fatal(err)
	}
	whole, err := os.ReadFile(testdata.Stories260K(t))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.gguf")
	if err := os.WriteFile(cut, whole[:len(whole)*6/10], 0o600); err != nil {
		t.Fatal(err)
	}
	mamba := filepath.Join(dir, "mamba.gguf")
	w := gguf.NewWriter()
	if err := w.SetKV("general.architecture", "mamba"); err != nil {
		t.Fatal(err)
	}
	if err := w.AddTensor("token_embd.weight", quant.F32, []uint64{4, 4}, make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(mamba); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		path  string
		check func(t *testing.T, le *api.LoadError)
	}{
		{notModel, func(t *testing.T, le *api.LoadError) {
			if le.Kind != api.LoadNotModel {
				t.Errorf("kind %v, want not a model", le.Kind)
			}
		}},
		{cut, func(t *testing.T, le *api.LoadError) {
			if le.Kind != api.LoadIncomplete || le.Have != int64(len(whole)*6/10) || le.Want < int64(len(whole))-64 || le.Want > int64(len(whole)) {
				t.Errorf("kind %v, have %d want %d; the file is %d of %d bytes", le.Kind, le.Have, le.Want, len(whole)*6/10, len(whole))
			}
		}},
		{mamba, func(t *testing.T, le *api.LoadError) {
			if le.Kind != api.LoadUnsupported || le.Arch != "mamba" || !slices.Contains(le.Supported, "llama") {
				t.Errorf("kind %v, arch %q, supported %v", le.Kind, le.Arch, le.Supported)
			}
		}},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			f := newFixture(t, Options{})
			// Refused at once, before anything is unloaded.
			err := f.m.LoadModel(tc.path)
			var le *api.LoadError
			if !errors.As(err, &le) {
				t.Fatalf("load error %v (%T) is not a LoadError", err, err)
			}
			if le.Path != tc.path || le.Err == nil {
				t.Errorf("path %q, cause %v", le.Path, le.Err)
			}
			tc.check(t, le)
		})
	}
}
