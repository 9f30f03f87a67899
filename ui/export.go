package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/export"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/ui/core"
)

// Export and import in the window: the chat menu's "Export…", the
// sidebar's library menu (this chat, all chats, import), and JSON or zip
// files dropped on the window. The work itself is app/export's; what is
// here picks the chats and the format, asks where to save, and reports.

// exportRequest is what the person chose: which chats (all of them when
// All; one file when one chat, else a zip) in which format.
type exportRequest struct {
	IDs        []int64
	All        bool
	Format     export.Format
	NoMetadata bool
}

// zipped reports whether the request writes a zip.
func (r exportRequest) zipped() bool { return r.All || len(r.IDs) != 1 }

// settingExportFormat remembers the last format chosen, and
// settingExportDir the folder of the last export, where the next save
// dialog opens (its own setting: exports are no model folder).
const (
	settingExportFormat = "ui.export_format"
	settingExportDir    = "ui.export_dir"
)

// exportDir is the folder of the last export while it still exists ("":
// none).
func (u *UI) exportDir() string {
	dir, ok := u.w.Setting(settingExportDir)
	if !ok || dir == "" {
		return ""
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	return dir
}

// exportData writes the chats of req to w. It reads the database, so it
// runs off Fyne's goroutine.
func (u *UI) exportData(ctx context.Context, w io.Writer, req exportRequest) error {
	opt := export.Options{NoMetadata: req.NoMetadata, Generator: "Churon"}
	var ids []int64 // nil: every conversation
	if !req.All {
		ids = req.IDs
	}
	chats, err := u.w.Session.Export(ctx, ids)
	if err != nil {
		return err
	}
	if !req.zipped() {
		return export.Write(w, req.Format, chats[0], opt)
	}
	return export.WriteZip(w, req.Format, chats, opt)
}

// exportFileName suggests the saved file's name.
func (u *UI) exportFileName(req exportRequest) string {
	if req.zipped() {
		return export.ZipName(time.Now())
	}
	c, err := u.w.Session.Conversation(req.IDs[0])
	if err != nil {
		return "chat" + req.Format.Ext()
	}
	return export.FileName(c, req.Format)
}

// onExport asks for a format, then where to save. ids are the chats to
// export; all exports the whole library (ids ignored).
func (u *UI) onExport(ids []int64, all bool) {
	if !all && len(ids) == 0 {
		return
	}
	u.showExportChooser(exportRequest{IDs: ids, All: all}, func(req exportRequest) {
		u.w.SetSetting(settingExportFormat, string(req.Format))
		showSaveDialog(u, req)
	})
}

// showExportChooser shows the format chooser; then runs with the request
// completed when the person presses Export.
func (u *UI) showExportChooser(req exportRequest, then func(exportRequest)) {
	names := make([]string, len(export.Formats))
	byName := map[string]export.Format{}
	for i, f := range export.Formats {
		names[i] = formatLabel(f)
		byName[names[i]] = f
	}
	radio := widget.NewRadioGroup(names, nil)
	radio.Required = true
	radio.SetSelected(names[0])
	if v, ok := u.w.Setting(settingExportFormat); ok {
		if f, err := export.ParseFormat(v); err == nil {
			radio.SetSelected(formatLabel(f))
		}
	}
	meta := widget.NewCheck(lang.X("export.metadata", "Include generation details (tokens, speed, sampler settings)"), nil)
	meta.SetChecked(true)
	items := []fyne.CanvasObject{radio, meta}
	if req.zipped() {
		note := widget.NewLabel(lang.X("export.zipnote", "The chats are saved as one .zip file: a file per chat and an index."))
		note.Wrapping = fyne.TextWrapWord
		items = append(items, note)
	}
	title := lang.X("export.title.one", "Export chat")
	if req.zipped() {
		title = lang.X("export.title.all", "Export all chats")
	}
	d := dialog.NewCustomConfirm(title, lang.X("export.next", "Export…"), lang.X("dialog.cancel", "Cancel"),
		container.NewVBox(items...), func(ok bool) {
			if !ok {
				return
			}
			req.Format = byName[radio.Selected]
			if req.Format == "" {
				req.Format = export.Markdown
			}
			req.NoMetadata = !meta.Checked
			then(req)
		}, u.w.Win)
	d.Resize(fyne.NewSize(460, d.MinSize().Height))
	d.Show()
}

func formatLabel(f export.Format) string {
	switch f {
	case export.Markdown:
		return lang.X("export.format.md", "Markdown (.md)")
	case export.HTML:
		return lang.X("export.format.html", "Web page (.html)")
	case export.JSON:
		return lang.X("export.format.json", "JSON, to import again (.json)")
	case export.Text:
		return lang.X("export.format.txt", "Plain text (.txt)")
	}
	return string(f)
}

// showSaveDialog asks where to save and writes the export there. A
// variable so that tests can stand in for the file dialog.
var showSaveDialog = func(u *UI, req exportRequest) {
	ext := req.Format.Ext()
	if req.zipped() {
		ext = ".zip"
	}
	core.SaveFile(u.w.Win, u.exportFileName(req), ext, u.exportDir(), u.w.ShowError, func(w fyne.URIWriteCloser) {
		u.saveExport(w, req)
	})
}

// saveExport writes the export to w off Fyne's goroutine and reports. The
// export is made in memory first, so a failure leaves the file empty
// rather than half-written.
func (u *UI) saveExport(w fyne.URIWriteCloser, req exportRequest) {
	go func() {
		var buf bytes.Buffer
		err := u.exportData(u.w.Ctx, &buf, req)
		if err == nil {
			_, err = w.Write(buf.Bytes())
		}
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		uri := w.URI()
		u.w.Do(func() { u.afterExport(uri, err) })
	}()
}

// openFolder shows a folder in the desktop's file manager; a variable so
// that tests can see what would open.
var openFolder = func(a fyne.App, u *url.URL) error { return a.OpenURL(u) }

// afterExport says where the export went, with a button that opens its
// folder, and remembers the folder for the next export.
func (u *UI) afterExport(uri fyne.URI, err error) {
	if err != nil {
		u.w.ShowError(fmt.Errorf("%s: %w", lang.X("export.failed", "Export failed"), err))
		return
	}
	if uri.Scheme() != "file" { // a portal or a content URI: no folder to name
		u.w.Banner(lang.X("export.done", "Saved {{.Name}}.", map[string]any{"Name": uri.Name()}), false)
		return
	}
	path := uri.Path()
	dir := filepath.Dir(path)
	u.w.SetSetting(settingExportDir, dir)
	u.w.BannerAction(lang.X("export.done.path", "Saved {{.Path}}.", map[string]any{"Path": path}),
		lang.X("export.openfolder", "Open folder"), func() {
			if err := openFolder(u.w.App, core.FolderURL(dir)); err != nil {
				u.w.ShowError(fmt.Errorf("%s: %w", lang.X("export.openfolder.failed", "Could not open the folder"), err))
			}
		})
}

// onImport asks for a JSON export (or a zip of them) and imports it.
func (u *UI) onImport() {
	u.w.OpenFile([]string{".json", ".zip", ".JSON", ".ZIP"}, "", func(r fyne.URIReadCloser) {
		u.importAsync(r, r.URI().Name())
	})
}

// onDropped imports the JSON and zip files dropped on the window.
func (u *UI) onDropped(_ fyne.Position, uris []fyne.URI) {
	for _, uri := range uris {
		switch strings.ToLower(uri.Extension()) {
		case ".json", ".zip":
		default:
			u.w.Banner(lang.X("import.notjson", "“{{.Name}}” is not a chat export: drop a .json file (or a .zip of them) exported by Churon.",
				map[string]any{"Name": uri.Name()}), true)
			continue
		}
		r, err := openURI(uri)
		if err != nil {
			u.w.ShowError(err)
			continue
		}
		u.importAsync(r, uri.Name())
	}
}

// openURI opens a dropped file. Files are read directly; other schemes go
// through Fyne's storage repositories.
func openURI(uri fyne.URI) (io.ReadCloser, error) {
	if uri.Scheme() == "file" {
		return os.Open(filepath.FromSlash(uri.Path()))
	}
	return storage.Reader(uri)
}

// importAsync imports r off Fyne's goroutine, then reports and shows
// the new chats.
func (u *UI) importAsync(r io.ReadCloser, name string) {
	go func() {
		res, err := u.importData(u.w.Ctx, r)
		r.Close()
		u.w.Do(func() { u.afterImport(name, res, err) })
	}()
}

// importData imports a JSON export or a zip of them into the library
// (nothing from a damaged file). Safe from any goroutine.
func (u *UI) importData(ctx context.Context, r io.Reader) (store.ImportResult, error) {
	return u.w.Session.Import(ctx, r)
}

// afterImport shows the outcome and the imported chats. Runs on Fyne's
// goroutine.
func (u *UI) afterImport(name string, res store.ImportResult, err error) {
	if err != nil {
		msg := err.Error()
		switch {
		case errors.Is(err, export.ErrVersion):
			msg = lang.X("import.newer", "“{{.Name}}” was exported by a newer Churon. Update Churon to import it.", map[string]any{"Name": name})
		case errors.Is(err, export.ErrMalformed):
			msg = lang.X("import.malformed", "“{{.Name}}” is not a Churon chat export, or it is damaged. Nothing was imported.", map[string]any{"Name": name}) +
				"\n" + err.Error()
		}
		u.w.Banner(msg, true)
		return
	}
	u.side.reload()
	for _, c := range res.Conversations {
		if c.ID == u.w.Conv && c.Outcome == store.Extended {
			u.chat.Show(u.w.Conv)
		}
	}
	u.w.Banner(lang.X("import.done", "Imported {{.New}} chats from “{{.Name}}”: {{.Updated}} brought up to date, {{.Skipped}} already in your library.",
		map[string]any{"Name": name, "New": res.Count(store.Imported), "Updated": res.Count(store.Extended), "Skipped": res.Count(store.Skipped)}), false)
	// Show the first new chat, so the person sees what arrived.
	for _, c := range res.Conversations {
		if c.Outcome == store.Imported {
			u.openConversation(c.ID)
			break
		}
	}
}

// newLibraryMenu is the sidebar's menu button: export the chat shown or
// every chat, and import.
func newLibraryMenu(u *UI) fyne.CanvasObject {
	var btn *widget.Button
	btn = widget.NewButtonWithIcon("", theme.MoreVerticalIcon(), func() {
		this := fyne.NewMenuItem(lang.X("export.menu.this", "Export this chat…"), func() { u.onExport([]int64{u.w.Conv}, false) })
		this.Disabled = u.w.Conv == 0
		m := fyne.NewMenu("",
			this,
			fyne.NewMenuItem(lang.X("export.menu.all", "Export all chats…"), func() { u.onExport(nil, true) }),
			fyne.NewMenuItemSeparator(),
			fyne.NewMenuItem(lang.X("import.menu", "Import chats…"), u.onImport),
		)
		widget.ShowPopUpMenuAtRelativePosition(m, u.w.Win.Canvas(), fyne.NewPos(0, btn.Size().Height), btn)
	})
	btn.Importance = widget.LowImportance
	return btn
}
