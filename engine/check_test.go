package engine

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/churon/churon/engine/arch"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/models/synth"
)

// TestCheck: Check refuses what Load refuses — an incomplete download, a
// file that is not GGUF, an architecture the engine lacks — and accepts
// what Load accepts, with the cause testable by errors.Is.
func TestCheck(t *testing.T) {
	good := synthFile(t, "good.gguf", synth.Tiny("llama"))
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		path string
		want error // nil: accepted
	}{
		{"whole file", good, nil},
		{"truncated download", write("part.gguf", data[:len(data)*2/3]), gguf.ErrTruncated},
		{"not a model", write("notes.gguf", []byte("these are my notes, not a model\n")), gguf.ErrNotGGUF},
		// Every "llama" renamed, keys included: a consistent file of an
		// architecture the engine has never heard of.
		{"unknown architecture", write("other.gguf", bytes.ReplaceAll(data, []byte("llama"), []byte("zzyzx"))), arch.ErrUnknownArchitecture},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.path)
			if c.want == nil {
				if err != nil {
					t.Fatalf("Check refused a good file: %v", err)
				}
				m, err := Load(t.Context(), c.path, LoadOptions{})
				if err != nil {
					t.Fatalf("Check accepted a file Load refuses: %v", err)
				}
				m.Close()
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("Check: %v; want %v", err, c.want)
			}
			if _, lerr := Load(t.Context(), c.path, LoadOptions{}); !errors.Is(lerr, c.want) {
				t.Errorf("Load: %v; Check and Load disagree", lerr)
			}
		})
	}
}
