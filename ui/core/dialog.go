package core

import (
	"net/url"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"
)

// FolderURL is the file:// URL of folder dir, for OpenURL to show it in
// the desktop's file manager (xdg-open, Finder, Explorer).
func FolderURL(dir string) *url.URL {
	dir = filepath.ToSlash(dir)
	if !strings.HasPrefix(dir, "/") {
		dir = "/" + dir // Windows: file:///C:/…
	}
	return &url.URL{Scheme: "file", Path: dir}
}

// DialogSize is the size of the file dialogs.
var DialogSize = fyne.NewSize(820, 560)

// ConfirmAction asks before something that cannot be undone.
func (w *Window) ConfirmAction(title, msg, action string, f func()) {
	d := dialog.NewConfirm(title, msg, func(ok bool) {
		if ok {
			f()
		}
	}, w.Win)
	d.SetConfirmText(action)
	d.SetDismissText(lang.X("dialog.cancel", "Cancel"))
	d.SetConfirmImportance(widget.DangerImportance)
	d.Show()
}

// OpenFile asks for a file ending in one of exts, in the folder start
// ("": where the dialog likes), and hands it to open, which closes it. A
// failure is shown; a cancel does nothing.
func (w *Window) OpenFile(exts []string, start string, open func(fyne.URIReadCloser)) {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			w.ShowError(err)
			return
		}
		if r == nil {
			return // cancelled
		}
		open(r)
	}, w.Win)
	d.SetFilter(storage.NewExtensionFileFilter(exts))
	ShowFileDialog(d, start)
}

// ShowFileDialog shows file dialog d at DialogSize, in the folder start
// ("", or a folder it cannot list: where the dialog likes).
func ShowFileDialog(d *dialog.FileDialog, start string) {
	if start != "" {
		if l, err := storage.ListerForURI(storage.NewFileURI(start)); err == nil {
			d.SetLocation(l)
		}
	}
	d.Resize(DialogSize)
	d.Show()
}

// OpenGGUF asks for a GGUF file (see OpenFile) and hands its path to use.
func (w *Window) OpenGGUF(start string, use func(path string)) {
	w.OpenFile([]string{".gguf", ".GGUF"}, start, func(r fyne.URIReadCloser) {
		path := r.URI().Path()
		r.Close()
		use(path)
	})
}

// SaveFile asks where to save a file named name, of the type ext, in the
// folder start ("": where the dialog likes), and hands the file to save,
// which closes it; fail is told why the dialog failed, and a cancel does
// nothing.
func SaveFile(win fyne.Window, name, ext, start string, fail func(error), save func(fyne.URIWriteCloser)) {
	d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
		if err != nil {
			fail(err)
			return
		}
		if w == nil {
			return // cancelled
		}
		save(w)
	}, win)
	d.SetFileName(name)
	d.SetFilter(storage.NewExtensionFileFilter([]string{ext}))
	ShowFileDialog(d, start)
}
