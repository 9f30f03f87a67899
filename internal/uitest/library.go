package uitest

// The Models page's setting up for tests: folders, synthetic models, the
// fake hub (models/hub/hubtest), a machine of a given memory.

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/churon/churon/app/models"
	"github.com/churon/churon/models/download"
	"github.com/churon/churon/models/fit"
	"github.com/churon/churon/models/header"
	"github.com/churon/churon/models/hub/hubtest"
	"github.com/churon/churon/models/synth"
)

// FixedMemory is a machine with total bytes of memory, avail free.
func FixedMemory(total, avail int64) func() (fit.Memory, error) {
	return func() (fit.Memory, error) { return fit.Memory{Total: total, Available: avail}, nil }
}

// Folders are a library folder and a download queue file for a test.
func Folders(t *testing.T) (lib, queue string) {
	dir := t.TempDir()
	return filepath.Join(dir, "models"), filepath.Join(dir, "cache", "downloads.json")
}

// SynthModels writes one synthetic model (same seed) in each file type
// into lib, so they are quantizations of one model, and returns their
// paths.
func SynthModels(t *testing.T, lib string, types ...string) []string {
	t.Helper()
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, typ := range types {
		spec := synth.Tiny("llama")
		spec.FileType = synth.FileType(typ)
		p := filepath.Join(lib, "tiny-llama-"+typ+".gguf")
		if err := synth.Write(p, spec); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// Library configures the model service of NewWindow: its folders, the
// hub, the machine, the tuning (the harness adds the header reader and
// the settings).
type Library = models.Options

// HubLibrary points the page at the fake hub and temporary folders, with
// a machine of 16 GiB (12 GiB free), quick polls, and downloads that never
// run short of space and retry at once.
func HubLibrary(t *testing.T, h *hubtest.Hub) Library {
	lib, queue := Folders(t)
	return Library{
		Headers:       header.Reader{},
		HubURL:        h.URL(),
		Dir:           lib,
		QueueFile:     queue,
		Memory:        FixedMemory(16<<30, 12<<30),
		Architectures: []string{"llama", "qwen2", "qwen3", "phi3"},
		Poll:          10 * time.Millisecond,
		Download: download.Options{
			FreeSpace:   func(string) (int64, error) { return -1, nil },
			BackoffBase: 10 * time.Millisecond,
		},
	}
}

// LocalLibrary is a library folder holding one synthetic model in each of
// the given file types (SynthModels), on a machine of 16 GiB, with a hub
// that is never asked; it returns the models' paths too.
func LocalLibrary(t *testing.T, types ...string) (Library, []string) {
	t.Helper()
	lib, queue := Folders(t)
	paths := SynthModels(t, lib, types...)
	return Library{Dir: lib, QueueFile: queue, Memory: FixedMemory(16<<30, 12<<30), HubURL: "http://127.0.0.1:1"}, paths
}
