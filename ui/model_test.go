package ui

import (
	"strings"
	"testing"
)

// TestModelMenuListsLibrary: the model menu offers the library's models
// (not only recent files), and choosing one loads it.
func TestModelMenuListsLibrary(t *testing.T) {
	h, paths := compareHarness(t, "Q8_0", "Q4_0")
	h.wait("the library listing", func() bool { return len(h.u.mdl.menuModels) == 2 })
	h.u.picker.onMenu()
	items := h.menuItems()
	for _, p := range paths {
		if items[modelLabel(p)] == nil {
			t.Fatalf("the menu lacks %s: %v", modelLabel(p), items)
		}
	}
	items[modelLabel(paths[1])].Action()
	h.wait("the model to load", func() bool { return h.u.model != nil && h.u.model.Path == paths[1] })

	// Loaded, it is a recent file: listed once, ticked.
	h.u.picker.onMenu()
	items = h.menuItems()
	if it := items[modelLabel(paths[1])]; it == nil || !it.Checked {
		t.Fatalf("the loaded model in the menu: %+v", it)
	}
}

// TestWelcomeListsLibrary: the first-run page offers the library's models
// too, so models made on the Compare page or downloaded earlier are one
// click away.
func TestWelcomeListsLibrary(t *testing.T) {
	h, paths := compareHarness(t, "Q8_0", "Q4_0")
	h.wait("the library on the welcome page", func() bool { return len(h.u.welcome.library.Objects) == 2+len(paths) })
	if got := text(h.u.welcome.library); !strings.Contains(got, "In your library") || !strings.Contains(got, modelLabel(paths[0])) {
		t.Fatalf("welcome page library: %q", got)
	}
}
