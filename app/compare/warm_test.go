//go:build linux

package compare

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	api "github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/models/synth"
)

// TestEveryModelLoadsWarm: each model's file is wholly in the page cache
// when its load starts, whatever it was before, so that the load times
// (and first tokens) of a comparison measure the models alike, not which
// file happened to be cached. The files are dropped from the cache
// first, as after a restart.
func TestEveryModelLoadsWarm(t *testing.T) {
	// Large enough that the kernel's read-ahead on the header does not
	// bring in the whole file.
	var paths []string
	for _, ft := range []synth.FileType{"F16", "Q8_0"} {
		s := synth.Tiny("qwen2")
		s.Embd, s.FF, s.Heads, s.KVHeads, s.Layers = 512, 1536, 8, 2, 4
		s.Context, s.Vocab, s.FileType = 256, 300, ft
		p := filepath.Join(t.TempDir(), string(ft)+".gguf")
		if err := synth.Write(p, s); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	for _, p := range paths {
		drop(t, p)
		if got := cached(t, p); got > 0.5 {
			t.Skipf("%s stays %.0f%% cached after dropping it: cannot test here", p, 100*got)
		}
	}
	loadModel = func(ctx context.Context, path string, opt engine.LoadOptions) (*engine.Model, error) {
		if got := cached(t, path); got < 1 {
			t.Errorf("%s started loading with %.0f%% of its file cached", path, 100*got)
		}
		return engine.Load(ctx, path, opt)
	}
	defer func() { loadModel = engine.Load }()
	if _, err := Run(context.Background(), api.Options{Models: paths, Prompt: "Hello", Sampling: greedy(2), Threads: 1, TextTokens: -1}, nil); err != nil {
		t.Fatal(err)
	}
}

// drop asks the kernel to forget the file's cached pages.
func drop(t *testing.T, path string) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Skipf("fadvise: %v", err)
	}
}

// cached is the part of the file's pages in the page cache.
func cached(t *testing.T, path string) float64 {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(data)
	page := os.Getpagesize()
	vec := make([]byte, (len(data)+page-1)/page)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&data[0])), uintptr(len(data)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	n := 0
	for _, v := range vec {
		if v&1 != 0 {
			n++
		}
	}
	return float64(n) / float64(len(vec))
}
