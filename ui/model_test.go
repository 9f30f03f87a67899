package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/churon/churon/internal/uitest"
	"github.com/churon/churon/ui/core"
)

// TestModelMenuListsLibrary: the model menu offers the library's models
// (not only recent files), and choosing one loads it.
func TestModelMenuListsLibrary(t *testing.T) {
	h, paths := libraryHarness(t, "Q8_0", "Q4_0")
	h.Wait("the library listing", func() bool { return len(h.u.menuModels) == 2 })
	h.u.picker.onMenu()
	items := uitest.MenuItems(h.T, h.W)
	for _, p := range paths {
		if items[core.ModelLabel(p)] == nil {
			t.Fatalf("the menu lacks %s: %v", core.ModelLabel(p), items)
		}
	}
	items[core.ModelLabel(paths[1])].Action()
	h.Wait("the model to load", func() bool { return h.u.w.Model != nil && h.u.w.Model.Path == paths[1] })

	// Loaded, it is a recent file: listed once, ticked.
	h.u.picker.onMenu()
	items = uitest.MenuItems(h.T, h.W)
	if it := items[core.ModelLabel(paths[1])]; it == nil || !it.Checked {
		t.Fatalf("the loaded model in the menu: %+v", it)
	}
}

// TestWelcomeListsLibrary: the first-run page offers the library's models
// too, so models made on the Compare page or downloaded earlier are one
// click away.
func TestWelcomeListsLibrary(t *testing.T) {
	h, paths := libraryHarness(t, "Q8_0", "Q4_0")
	h.Wait("the library on the welcome page", func() bool { return len(h.u.welcome.library.Objects) == 2+len(paths) })
	if got := uitest.Text(h.u.welcome.library); !strings.Contains(got, "In your library") || !strings.Contains(got, core.ModelLabel(paths[0])) {
		t.Fatalf("welcome page library: %q", got)
	}
}

// libraryHarness is the window over a library folder holding one
// synthetic model in each of the given file types (uitest.LocalLibrary).
func libraryHarness(t *testing.T, types ...string) (*harness, []string) {
	t.Helper()
	l, paths := uitest.LocalLibrary(t, types...)
	h := newHarness(t, harnessOptions{models: &l})
	return h, paths
}

// TestFailedOpenKeepsModel: opening a file that cannot load — an
// incomplete download, a file that is not a model — leaves the working
// model loaded and answering, and says why the other failed.
func TestFailedOpenKeepsModel(t *testing.T) {
	h, paths := libraryHarness(t, "Q8_0")
	h.Load(paths[0])
	data, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, bad := range []struct {
		name string
		data []byte
	}{
		{"incomplete.gguf", data[:len(data)/2]},
		{"notes.gguf", []byte("not a model, a shopping list")},
	} {
		path := filepath.Join(dir, bad.name)
		if err := os.WriteFile(path, bad.data, 0o600); err != nil {
			t.Fatal(err)
		}
		h.u.w.LoadModel(path) // what "Open file…" does with the file chosen
		h.Wait("the refusal of "+bad.name, func() bool { return h.u.w.LoadingPath == "" && len(h.u.w.Notice.Objects) > 0 })
		if m := h.u.w.Model; m == nil || m.Path != paths[0] {
			t.Fatalf("after opening %s the loaded model is %+v; want %s kept", bad.name, m, paths[0])
		}
		if got := uitest.Text(h.u.w.Notice); !strings.Contains(got, bad.name) {
			t.Errorf("the notice for %s does not name it: %q", bad.name, got)
		}
		h.u.w.Notice.RemoveAll()
	}
	h.typeAndSend("still there?")
	h.Wait("the kept model's answer", h.answered)
}
