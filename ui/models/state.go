package models

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/lang"

	"github.com/churon/churon/app/models"
	"github.com/churon/churon/models/download"
	"github.com/churon/churon/models/hub"
	"github.com/churon/churon/ui/core"
)

// State is the window's side of the model service (app/models): what the
// Models page and the welcome view's recommendation share, and what
// outlives them when the window is rebuilt. The service owns the catalog,
// the hub client, the library, the downloads and the fit check; State
// turns its events into what the page shows. It is used on Fyne's
// goroutine.
type State struct {
	w   *core.Window
	svc *models.Service

	page *modelsPage // made when first shown, dropped on rebuild
	rec  *welcomeRec // the welcome view's recommendation, if it shows one

	// onLibrary are told when the library changed (the Compare page's
	// chooser, the model menu).
	onLibrary []func()
}

// NewState starts applying the service's events to the window.
func NewState(w *core.Window, svc *models.Service) *State {
	s := &State{w: w, svc: svc}
	go func() {
		for ev := range svc.Events() {
			w.Do(func() { s.apply(ev) })
		}
	}()
	return s
}

// PartLabel names part n of a multi-file model in the download list, in
// the UI's language (the service's Options.PartLabel).
func PartLabel(name string, n, of int) string {
	return lang.X("models.part", "{{.Name}} (part {{.N}} of {{.Of}})", map[string]any{"Name": name, "N": n, "Of": of})
}

// OnLibrary calls f (on Fyne's goroutine) whenever the library changes.
func (s *State) OnLibrary(f func()) { s.onLibrary = append(s.onLibrary, f) }

// apply runs on Fyne's goroutine for each of the service's events.
func (s *State) apply(ev models.Event) {
	switch e := ev.(type) {
	case models.DownloadsChanged, models.Pending:
		s.refresh()
	case models.DownloadEnded:
		if e.Status == download.Failed {
			s.w.ShowError(fmt.Errorf("%s: %w", e.Label, e.Err))
		}
		s.refresh()
	case models.ModelReady:
		if e.Load {
			s.load(e.Path)
		}
		s.refresh()
	case models.LibraryChanged:
		if p := s.page; p != nil {
			p.showLibrary(e.Models, e.Err)
		}
		for _, f := range s.onLibrary {
			f()
		}
	case models.Error:
		s.showError(e)
	}
}

// showError says what failed in the person's words (core.Describe), with
// the technical reason behind Details.
func (s *State) showError(e models.Error) { s.w.ShowError(e.Err) }

// refresh brings the page and the welcome card in line with the
// downloads.
func (s *State) refresh() {
	if p := s.page; p != nil {
		p.refresh()
	}
	if r := s.rec; r != nil {
		r.refresh()
	}
}

// DestFor is where a repository's file is kept in the library (the same
// place `churon pull` puts it).
func (s *State) DestFor(repo, file string) string { return s.svc.Dest(repo, file) }

// Active returns the unfinished download of a destination, or nil.
func (s *State) Active(dest string) *download.Download { return s.svc.Active(dest) }

// QueueVariant queues every part of a variant found on the hub; a
// failure arrives as an error banner.
func (s *State) QueueVariant(repo, rev string, v hub.Variant, load bool) {
	s.svc.QueueVariant(repo, rev, v, load)
}

// load loads a model into the session and shows the chat.
func (s *State) load(path string) {
	s.w.ModelsShown = false
	s.w.LoadModel(path)
	s.w.Refresh()
}

// Hub is the client for the hub. Safe from any goroutine.
func (s *State) Hub() *hub.Client { return s.svc.Hub() }

// Dir is the library folder, where downloads go.
func (s *State) Dir() string { return s.svc.Dir() }

// Show opens the Models page in the window's centre, with the memory read
// again.
func (s *State) Show() {
	s.w.ModelsShown = true
	s.svc.ReadMemory()
	if s.page != nil {
		s.page.refreshVerdicts()
		s.page.refresh()
		s.page.reloadLibrary()
	}
	s.w.Refresh()
}

// hide goes back to the chat (or the welcome view).
func (s *State) hide() {
	s.w.ModelsShown = false
	s.w.Refresh()
}

// Page is the Models page, made on first use (and again after DropPage).
// The window asks for it each time it refreshes (a model loaded or
// unloaded), so it marks the loaded model here.
func (s *State) Page() fyne.CanvasObject {
	if s.page == nil {
		s.page = newModelsPage(s)
	}
	s.page.refreshLoaded()
	return s.page.content
}

// DropPage forgets the page: the window is built again (the language
// changed) and widgets keep the text they were made with.
func (s *State) DropPage() { s.page = nil }

// AddFile adds a GGUF file to the library. It blocks: run it on the
// command worker.
func (s *State) AddFile(path string) error { return s.svc.AddFile(path) }
