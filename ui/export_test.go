package ui

import (
	"archive/zip"
	"bytes"
	"context"
	"net/url"
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
	"github.com/churon/churon/internal/uitest"
)

// addStoredChat writes a conversation straight into the harness's store
// (no model needed) and shows it in the sidebar.
func (h *harness) addStoredChat(title, question, answer string) int64 {
	h.T.Helper()
	ctx := context.Background()
	c, err := h.St.CreateConversation(ctx, store.Conversation{Title: title})
	if err != nil {
		h.T.Fatal(err)
	}
	for _, m := range []store.Message{
		{ConversationID: c.ID, Role: store.RoleUser, Content: question},
		{ConversationID: c.ID, Role: store.RoleAssistant, Content: answer, Model: "tiny.gguf", Quant: "Q8_0", GenTokens: 3, FinishReason: "eos"},
	} {
		if _, err := h.St.AddMessage(ctx, m); err != nil {
			h.T.Fatal(err)
		}
	}
	h.u.side.reload()
	h.Settle()
	return c.ID
}

// libraryButton finds the sidebar's library menu button (the ⋮ button
// that is not in a chat row).
func (h *harness) libraryButton() *widget.Button {
	h.T.Helper()
	var found *widget.Button
	uitest.Walk(h.u.side.content, func(o fyne.CanvasObject) bool {
		switch o := o.(type) {
		case *convItem, *widget.List:
			return false
		case *widget.Button:
			if found == nil && o.Text == "" && o.Icon != nil && strings.Contains(o.Icon.Name(), "more-vertical") {
				found = o
			}
			return false
		}
		return found == nil
	})
	if found == nil {
		h.T.Fatal("no library menu button in the sidebar")
	}
	return found
}

// chooseInDialog picks a format and the metadata box in the open export
// dialog and presses its Export button.
func (h *harness) chooseInDialog(format export.Format, metadata bool) {
	h.T.Helper()
	radio, ok := uitest.OverlayFind[*widget.RadioGroup](h.W)
	if !ok {
		h.T.Fatal("no format chooser")
	}
	radio.SetSelected(formatLabel(format))
	check, ok := uitest.OverlayFind[*widget.Check](h.W)
	if !ok {
		h.T.Fatal("no metadata check box")
	}
	check.SetChecked(metadata)
	list := h.W.Canvas().Overlays().List()
	test.Tap(uitest.FindButton(h.T, list[len(list)-1], "Export…"))
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
	items := uitest.MenuItems(h.T, h.W)
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
	items = uitest.MenuItems(h.T, h.W)
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
	uitest.MenuItems(h.T, h.W)["Export all chats…"].Action()
	if radio, _ := uitest.OverlayFind[*widget.RadioGroup](h.W); radio == nil || radio.Selected != formatLabel(export.HTML) {
		t.Errorf("the chooser did not remember the last format")
	}
	if !strings.Contains(uitest.Text(h.W.Canvas().Overlays().Top()), ".zip") {
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
	item, ok := uitest.Find[*convItem](u.side.list, nil)
	for _, r := range test.WidgetRenderer(u.side.list).Objects() {
		if it, ok2 := uitest.Find[*convItem](r, nil); ok2 && it.row.conv.ID == first {
			item, ok = it, true
		}
	}
	if !ok {
		t.Fatal("no chat rows")
	}
	id := item.row.conv.ID
	item.onMenu()
	uitest.MenuItems(h.T, h.W)["Export…"].Action()
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

func (f *fakeWriter) Close() error { f.closed = true; return nil }

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

	dir := t.TempDir()
	if u.exportDir() != "" {
		t.Fatalf("a new library's exports open in %q", u.exportDir())
	}
	w := &fakeWriter{uri: storage.NewFileURI(filepath.Join(dir, "all.zip"))}
	u.saveExport(w, exportRequest{All: true, Format: export.Markdown})
	full := filepath.Join(dir, "all.zip")
	h.Wait("the export to be saved", func() bool { return strings.Contains(uitest.Text(u.w.Notice), "Saved "+full+".") })
	// The next export opens where this one went, and the folder opens
	// from the message.
	if got := u.exportDir(); got != dir {
		t.Errorf("the next export opens in %q, want %q", got, dir)
	}
	var opened []*url.URL
	oldOpen := openFolder
	defer func() { openFolder = oldOpen }()
	openFolder = func(_ fyne.App, u *url.URL) error { opened = append(opened, u); return nil }
	test.Tap(uitest.FindButton(t, u.w.Notice, "Open folder"))
	if len(opened) != 1 || opened[0].Scheme != "file" || opened[0].Path != filepath.ToSlash(dir) {
		t.Errorf("Open folder opened %v, want file://%s", opened, dir)
	}
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
	chats, err := export.LoadAll(context.Background(), src.St)
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
	h.Wait("the import", func() bool { return len(u.side.rows) == 2 })
	h.Wait("the report", func() bool {
		return strings.Contains(uitest.Text(u.w.Notice), "Imported 2 chats from “chats.json”")
	})
	if u.w.Conv == 0 {
		t.Error("no imported chat is shown")
	}
	msgs, _ := h.M.Messages(u.w.Conv)
	if len(msgs) != 2 || h.shownMessages() != 2 {
		t.Errorf("the shown chat has %d messages, %d views", len(msgs), h.shownMessages())
	}

	// The zip of the same chats adds nothing.
	u.onDropped(fyne.NewPos(10, 10), []fyne.URI{storage.NewFileURI(zipPath)})
	h.Wait("the second report", func() bool {
		return strings.Contains(uitest.Text(u.w.Notice), "Imported 0 chats from “chats.zip”: 0 brought up to date, 2 already in your library.")
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
		for len(u.w.Notice.Objects) > 0 {
			u.w.Notice.Remove(u.w.Notice.Objects[0])
		}
		u.onDropped(fyne.NewPos(0, 0), []fyne.URI{storage.NewFileURI(c.path)})
		h.Wait("the refusal of "+filepath.Base(c.path), func() bool { return strings.Contains(uitest.Text(u.w.Notice), c.want) })
	}
	if len(u.side.rows) != 2 {
		t.Errorf("%d rows after bad drops", len(u.side.rows))
	}
}
