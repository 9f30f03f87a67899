package ui

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/export"
	"github.com/churon/churon/app/store"
)

// addStoredChat writes a conversation straight into the harness's store
// (no model needed) and shows it in the sidebar.
func (h *harness) addStoredChat(title, question, answer string) int64 {
	h.t.Helper()
	ctx := context.Background()
	c, err := h.st.CreateConversation(ctx, store.Conversation{Title: title})
	if err != nil {
		h.t.Fatal(err)
	}
	for _, m := range []store.Message{
		{ConversationID: c.ID, Role: store.RoleUser, Content: question},
		{ConversationID: c.ID, Role: store.RoleAssistant, Content: answer, Model: "tiny.gguf", Quant: "Q8_0", GenTokens: 3, FinishReason: "eos"},
	} {
		if _, err := h.st.AddMessage(ctx, m); err != nil {
			h.t.Fatal(err)
		}
	}
	h.u.side.reload()
	return c.ID
}

// overlayFind finds the first object of type T in the window's
// overlays (dialogs, pop-up menus), newest first.
func overlayFind[T any](h *harness) (T, bool) {
	var zero T
	list := h.w.Canvas().Overlays().List()
	for i := len(list) - 1; i >= 0; i-- {
		if v, ok := findIn[T](list[i]); ok {
			return v, true
		}
	}
	return zero, false
}

func findIn[T any](o fyne.CanvasObject) (T, bool) {
	if v, ok := o.(T); ok {
		return v, true
	}
	var children []fyne.CanvasObject
	switch o := o.(type) {
	case *fyne.Container:
		children = o.Objects
	case fyne.Widget:
		children = test.WidgetRenderer(o).Objects()
	}
	for _, c := range children {
		if v, ok := findIn[T](c); ok {
			return v, true
		}
	}
	var zero T
	return zero, false
}

// menuItems returns the items of the pop-up menu on top, by label.
func (h *harness) menuItems() map[string]*fyne.MenuItem {
	h.t.Helper()
	m, ok := overlayFind[*widget.PopUpMenu](h)
	if !ok {
		h.t.Fatal("no pop-up menu is open")
	}
	items := map[string]*fyne.MenuItem{}
	for _, o := range m.Items {
		// Menu rows are an unexported type; their Item field is exported.
		v := reflect.ValueOf(o)
		if v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct {
			if f := v.Elem().FieldByName("Item"); f.IsValid() {
				if mi, ok := f.Interface().(*fyne.MenuItem); ok && mi != nil {
					items[mi.Label] = mi
				}
			}
		}
	}
	m.Hide()
	h.w.Canvas().Overlays().Remove(m)
	return items
}

// libraryButton finds the sidebar's library menu button (the ⋮ button
// that is not in a chat row).
func (h *harness) libraryButton() *widget.Button {
	h.t.Helper()
	var found *widget.Button
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		if found != nil {
			return
		}
		switch o := o.(type) {
		case *convItem, *widget.List:
			return
		case *widget.Button:
			if o.Text == "" && o.Icon != nil && strings.Contains(o.Icon.Name(), "more-vertical") {
				found = o
			}
		case *fyne.Container:
			for _, c := range o.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(o).Objects() {
				walk(c)
			}
		}
	}
	walk(h.u.side.content)
	if found == nil {
		h.t.Fatal("no library menu button in the sidebar")
	}
	return found
}

// chooseInDialog picks a format and the metadata box in the open export
// dialog and presses its Export button.
func (h *harness) chooseInDialog(format export.Format, metadata bool) {
	h.t.Helper()
	radio, ok := overlayFind[*widget.RadioGroup](h)
	if !ok {
		h.t.Fatal("no format chooser")
	}
	radio.SetSelected(formatLabel(format))
	check, ok := overlayFind[*widget.Check](h)
	if !ok {
		h.t.Fatal("no metadata check box")
	}
	check.SetChecked(metadata)
	list := h.w.Canvas().Overlays().List()
	test.Tap(findButton(h.t, list[len(list)-1], "Export…"))
}

// TestExportMenus walks the three ways to export — the chat's own menu,
// and the sidebar's menu for the chat shown or for all — through the
// format chooser to the save step.
func TestExportMenus(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	u := h.u
	first := h.addStoredChat("Recipes", "How?", "Simmer.")
	second := h.addStoredChat("김치찌개", "어떻게?", "| 재료 | 양 |\n|---|---|\n| 김치 | 300 g |")
	var saved []exportRequest
	old := showSaveDialog
	defer func() { showSaveDialog = old }()
	showSaveDialog = func(_ *UI, req exportRequest) { saved = append(saved, req) }

	// Nothing shown: "Export this chat" is disabled, the rest are there.
	test.Tap(h.libraryButton())
	items := h.menuItems()
	for _, l := range []string{"Export this chat…", "Export all chats…", "Import chats…"} {
		if items[l] == nil {
			t.Fatalf("library menu lacks %q: %v", l, items)
		}
	}
	if !items["Export this chat…"].Disabled {
		t.Error("Export this chat is enabled with no chat shown")
	}

	u.openConversation(second)
	test.Tap(h.libraryButton())
	items = h.menuItems()
	if items["Export this chat…"].Disabled {
		t.Fatal("Export this chat is disabled with a chat shown")
	}
	items["Export this chat…"].Action()
	h.chooseInDialog(export.HTML, false)
	if want := (exportRequest{IDs: []int64{second}, Format: export.HTML, NoMetadata: true}); len(saved) != 1 || !reflect.DeepEqual(saved[0], want) {
		t.Fatalf("saved %+v, want %+v", saved, want)
	}
	if got := u.exportFileName(saved[0]); got != "김치찌개.html" {
		t.Errorf("file name %q", got)
	}

	// Export all: the chooser remembers HTML.
	test.Tap(h.libraryButton())
	h.menuItems()["Export all chats…"].Action()
	if radio, _ := overlayFind[*widget.RadioGroup](h); radio == nil || radio.Selected != formatLabel(export.HTML) {
		t.Errorf("the chooser did not remember the last format")
	}
	if !strings.Contains(text(h.w.Canvas().Overlays().Top()), ".zip") {
		t.Error("exporting all does not say it makes a zip")
	}
	h.chooseInDialog(export.JSON, true)
	if len(saved) != 2 || !saved[1].All || saved[1].Format != export.JSON || saved[1].NoMetadata {
		t.Fatalf("export all: %+v", saved)
	}
	if name := u.exportFileName(saved[1]); !strings.HasPrefix(name, "churon-chats-") || !strings.HasSuffix(name, ".zip") {
		t.Errorf("zip name %q", name)
	}

	// The chat row's own menu.
	item, ok := findIn[*convItem](u.side.list)
	for _, r := range test.WidgetRenderer(u.side.list).Objects() {
		if it, ok2 := findIn[*convItem](r); ok2 && it.row.conv.ID == first {
			item, ok = it, true
		}
	}
	if !ok {
		t.Fatal("no chat rows")
	}
	id := item.row.conv.ID
	item.onMenu()
	h.menuItems()["Export…"].Action()
	h.chooseInDialog(export.Markdown, true)
	if len(saved) != 3 || !slices.Equal(saved[2].IDs, []int64{id}) || saved[2].All || saved[2].Format != export.Markdown {
		t.Fatalf("chat menu export: %+v", saved)
	}
}

// fakeWriter stands in for the file the save dialog opens.
type fakeWriter struct {
	bytes.Buffer
	uri    fyne.URI
	closed bool
}

func (f *fakeWriter) Close() error  { f.closed = true; return nil }
func (f *fakeWriter) URI() fyne.URI { return f.uri }

func TestExportSaves(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	u := h.u
	a := h.addStoredChat("Recipes", "How?", "Simmer <script>alert(1)</script>.")
	h.addStoredChat("김치찌개", "어떻게?", "끓이세요.")

	var page bytes.Buffer
	if err := u.exportData(context.Background(), &page, exportRequest{IDs: []int64{a}, Format: export.HTML}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "Simmer &lt;script&gt;alert(1)&lt;/script&gt;.") || strings.Contains(page.String(), "<script>") {
		t.Errorf("html export:\n%s", page.String())
	}

	w := &fakeWriter{uri: storage.NewFileURI(filepath.Join(t.TempDir(), "all.zip"))}
	u.saveExport(w, exportRequest{All: true, Format: export.Markdown})
	h.wait("the export to be saved", func() bool { return strings.Contains(text(u.notice), "Saved all.zip.") })
	if !w.closed {
		t.Error("the file was not closed")
	}
	zr, err := zip.NewReader(bytes.NewReader(w.Bytes()), int64(w.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	if want := []string{"001-김치찌개.md", "002-Recipes.md", "index.md"}; !slices.Equal(names, want) {
		t.Errorf("zip holds %q, want %q", names, want)
	}
}

// TestDropImports drops JSON files on the window: a valid export is
// imported and shown, a second drop adds nothing, and bad files are
// refused with a message and change nothing.
func TestDropImports(t *testing.T) {
	src := newHarness(t, harnessOptions{})
	src.addStoredChat("Recipes", "How?", "Simmer.")
	src.addStoredChat("김치찌개", "어떻게?", "끓이세요.")
	dir := t.TempDir()
	path := filepath.Join(dir, "chats.json")
	var buf bytes.Buffer
	if err := src.u.exportData(context.Background(), &buf, exportRequest{IDs: []int64{1, 2}, Format: export.JSON}); err != nil {
		t.Fatal(err)
	}
	// Two ids make a zip; a single document is what the dialog's JSON of
	// one chat gives, so build the file both ways.
	zipPath := filepath.Join(dir, "chats.zip")
	if err := os.WriteFile(zipPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	chats, err := export.LoadAll(context.Background(), src.st)
	if err != nil {
		t.Fatal(err)
	}
	var doc bytes.Buffer
	if err := export.WriteJSON(&doc, chats, export.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, doc.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	h := newHarness(t, harnessOptions{})
	u := h.u
	u.onDropped(fyne.NewPos(10, 10), []fyne.URI{storage.NewFileURI(path)})
	h.wait("the import", func() bool { return len(u.side.rows) == 2 })
	h.wait("the report", func() bool { return strings.Contains(text(u.notice), "Imported 2 chats from “chats.json”") })
	if u.conv == 0 {
		t.Error("no imported chat is shown")
	}
	msgs, _ := h.m.Messages(u.conv)
	if len(msgs) != 2 || len(u.chat.views) != 2 {
		t.Errorf("the shown chat has %d messages, %d views", len(msgs), len(u.chat.views))
	}

	// The zip of the same chats adds nothing.
	u.onDropped(fyne.NewPos(10, 10), []fyne.URI{storage.NewFileURI(zipPath)})
	h.wait("the second report", func() bool {
		return strings.Contains(text(u.notice), "Imported 0 chats from “chats.zip”: 0 brought up to date, 2 already in your library.")
	})
	if len(u.side.rows) != 2 {
		t.Errorf("%d rows after importing the same chats again", len(u.side.rows))
	}

	// Bad drops.
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"version": 1, "conversations": [{"messages": [{"role": "robot"}]}]}`), 0o644)
	newer := filepath.Join(dir, "newer.json")
	os.WriteFile(newer, []byte(`{"version": 99, "conversations": []}`), 0o644)
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("hello"), 0o644)
	for _, c := range []struct{ path, want string }{
		{bad, "“bad.json” is not a Churon chat export, or it is damaged. Nothing was imported."},
		{newer, "“newer.json” was exported by a newer Churon."},
		{notes, "“notes.txt” is not a chat export"},
	} {
		for len(u.notice.Objects) > 0 {
			u.notice.Remove(u.notice.Objects[0])
		}
		u.onDropped(fyne.NewPos(0, 0), []fyne.URI{storage.NewFileURI(c.path)})
		h.wait("the refusal of "+filepath.Base(c.path), func() bool { return strings.Contains(text(u.notice), c.want) })
	}
	if len(u.side.rows) != 2 {
		t.Errorf("%d rows after bad drops", len(u.side.rows))
	}
}
