package ui

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/internal/uitest"
	"github.com/churon/churon/models/discover"
	"github.com/churon/churon/models/library"
	"github.com/churon/churon/models/synth"
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
		h.u.picker.openFile(path) // what "Open GGUF file…" does with the file chosen
		h.Wait("the refusal of "+bad.name, func() bool { return h.u.w.LoadingPath == "" && len(h.u.w.Notice.Objects) > 0 })
		h.Settle()
		if n := len(h.u.w.Notice.Objects); n != 1 {
			t.Errorf("%d banners for %s; want one that says why", n, bad.name)
		}
		if lib, err := h.u.w.Models.List(t.Context()); err != nil || slices.ContainsFunc(lib, func(m library.Model) bool { return m.Path == path }) {
			t.Errorf("%s, refused, joined the library (%v)", bad.name, err)
		}
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

// TestOpenedFileInLibrary: a file opened with "Open GGUF file…" joins
// the library, so "On this computer" lists it; the rows are titled by
// file name, so quantizations of one model (one general.name) are told
// apart; and the loaded model's row says it is loaded.
func TestOpenedFileInLibrary(t *testing.T) {
	l, _ := uitest.LocalLibrary(t)
	var inLib []string
	for _, typ := range []string{"Q8_0", "Q4_0", "Q4_K_M"} {
		inLib = append(inLib, sameModel(t, filepath.Join(l.Dir, "tiny-"+typ+".gguf"), typ))
	}
	opened := sameModel(t, filepath.Join(t.TempDir(), "elsewhere", "tiny-Q6_K.gguf"), "Q6_K")
	h := newHarness(t, harnessOptions{models: &l})

	// What the file dialog hands over once the person chose the file.
	h.u.picker.openFile(opened)
	h.Wait("the opened model to load", func() bool { return h.u.w.Model != nil && h.u.w.Model.Path == opened })

	h.u.mdl.Show()
	tabs, ok := uitest.Find[*container.AppTabs](h.W.Content(), nil)
	if !ok {
		t.Fatal("the Models page has no tabs")
	}
	tabs.SelectIndex(len(tabs.Items) - 1)
	lib := tabs.Items[len(tabs.Items)-1].Content
	want := append(slices.Clone(inLib), opened)
	h.Wait("the library to list the opened file", func() bool {
		return strings.Contains(uitest.Text(lib), core.ModelLabel(opened))
	})
	titles := map[string]int{}
	uitest.Walk(lib, func(o fyne.CanvasObject) bool {
		if l, ok := o.(*widget.Label); ok && l.TextStyle.Bold {
			titles[l.Text]++
		}
		return true
	})
	for _, p := range want {
		title := core.ModelLabel(p)
		if p == opened {
			title += " (loaded)"
		}
		if titles[title] != 1 {
			t.Errorf("no row titled %q; the rows are titled %v", title, titles)
		}
	}
	if len(titles) != len(want) {
		t.Errorf("%d row titles for %d files: %v", len(titles), len(want), titles)
	}

	// Loading another marks it instead, once the page shows again.
	h.u.w.LoadModel(inLib[1])
	h.Wait("the other model to load", func() bool { return h.u.w.Model != nil && h.u.w.Model.Path == inLib[1] })
	h.u.mdl.Show()
	text := uitest.Text(lib)
	if !strings.Contains(text, core.ModelLabel(inLib[1])+" (loaded)") || strings.Contains(text, core.ModelLabel(opened)+" (loaded)") {
		t.Errorf("after loading %s the page says\n%s", core.ModelLabel(inLib[1]), text)
	}
}

// sameModel writes the synthetic model every quantization here shares
// (one general.name, as real quantizations of one model have) in file
// type typ at path.
func sameModel(t *testing.T, path, typ string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := synth.Tiny("llama")
	spec.FileType = synth.FileType(typ)
	spec.Name = "Tiny Llama"
	if err := synth.Write(path, spec); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReloadLastModel: the model used last is loaded again when the
// window opens, unless the setting is off or the file is gone.
func TestReloadLastModel(t *testing.T) {
	cases := []struct {
		name     string
		setting  string // "": not set
		gone     bool
		unloaded bool // by hand, before quitting
		want     bool
	}{
		{"on by default", "", false, false, true},
		{"on", "true", false, false, true},
		{"off", "false", false, false, false},
		{"file gone", "", true, false, false},
		{"unloaded before quitting", "", false, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, paths := uitest.LocalLibrary(t, "Q8_0", "Q4_0")
			last := paths[1]
			if c.gone {
				last = filepath.Join(t.TempDir(), "moved.gguf")
			}
			h := newHarness(t, harnessOptions{models: &l, before: func(b *uitest.Harness) {
				recent, _ := json.Marshal([]string{last, paths[0]})
				if err := b.M.SetSetting(settingRecent, string(recent)); err != nil {
					t.Fatal(err)
				}
				if c.setting != "" {
					if err := b.M.SetSetting(core.SettingReloadLast, c.setting); err != nil {
						t.Fatal(err)
					}
				}
				if c.unloaded {
					if err := b.M.SetSetting(settingUnloaded, "true"); err != nil {
						t.Fatal(err)
					}
				}
			}})
			if !c.want {
				h.Settle()
				if h.u.w.Model != nil || h.u.w.LoadingPath != "" {
					t.Fatalf("loaded %v (loading %q) at start", h.u.w.Model, h.u.w.LoadingPath)
				}
				return
			}
			h.Wait("the last model to load at start", func() bool { return h.u.w.Model != nil && h.u.w.Model.Path == last })
		})
	}
}

// TestFoundModelJoinsLibrary: a model the welcome page found in another
// app's folder, loaded from there, joins the library like a file opened
// by hand; refused, it would not (TestFailedOpenKeepsModel).
func TestFoundModelJoinsLibrary(t *testing.T) {
	l, _ := uitest.LocalLibrary(t)
	elsewhere := uitest.SynthModels(t, filepath.Join(t.TempDir(), "lmstudio"), "Q8_0")[0]
	found := func(context.Context) ([]discover.Model, error) {
		return []discover.Model{{Path: elsewhere, Real: elsewhere, Name: "tiny-llama-Q8_0", Source: discover.LMStudio, Size: 1}}, nil
	}
	h := newHarness(t, harnessOptions{models: &l, discover: found})
	h.Wait("the found model on the welcome page", func() bool { return len(h.u.welcome.found.Objects) == 1 })
	test.Tap(uitest.FindButton(t, h.u.welcome.found, "Load"))
	h.Wait("the model to load", func() bool { return h.u.w.Model != nil && h.u.w.Model.Path == elsewhere })
	h.Wait("the library to list it", func() bool {
		lib, err := h.u.w.Models.List(t.Context())
		return err == nil && slices.ContainsFunc(lib, func(m library.Model) bool { return m.Path == elsewhere })
	})
}

// TestUnloadIsRemembered: unloading the model by hand is remembered for
// the next start (TestReloadLastModel's "unloaded before quitting"), and
// loading one again forgets it.
func TestUnloadIsRemembered(t *testing.T) {
	h, paths := libraryHarness(t, "Q8_0")
	h.Load(paths[0])
	unloaded := func() string { v, _ := h.u.w.Setting(settingUnloaded); return v }
	h.u.picker.onUnload()
	h.Wait("the model to unload", func() bool { return h.u.w.Model == nil })
	if unloaded() != "true" {
		t.Errorf("after Unload the setting is %q", unloaded())
	}
	h.Load(paths[0])
	h.Wait("the unload to be forgotten", func() bool { return unloaded() == "" })
}
