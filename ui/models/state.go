package models

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/lang"

	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/assets/catalog"
	"github.com/churon/churon/models/download"
	"github.com/churon/churon/models/fit"
	"github.com/churon/churon/models/header"
	"github.com/churon/churon/models/hub"
	"github.com/churon/churon/models/library"
	"github.com/churon/churon/ui/core"
)

// Options configure the Models page: where models are kept, which hub to
// ask, and (for tests) the machine's memory and the download tuning. The
// zero value is the app's: models in paths.DataDir()/models, the queue in
// paths.CacheDir(), the hub from $CHURON_HUB_URL, the "models.hub_url"
// setting or huggingface.co.
type Options struct {
	// HubURL and Token override the hub's address and access token.
	HubURL, Token string
	// Dir is the library folder, where downloads go.
	Dir string
	// QueueFile keeps the download queue across restarts.
	QueueFile string
	// Download tunes every download (connections, retries, free space).
	Download download.Options
	// Concurrency is how many files download at once (default 2).
	Concurrency int
	// Memory reports the machine's memory; nil means fit.SystemMemory.
	Memory func() (fit.Memory, error)
	// Architectures lists the model architectures the engine runs; a
	// model of another one is marked and never recommended. nil means
	// unknown: nothing is marked.
	Architectures []string
	// Catalog replaces the embedded catalog (tests).
	Catalog *catalog.Catalog
	// Poll is how often the download list is looked at (default 250 ms).
	Poll time.Duration
}

// State is what the Models page and the welcome view's recommendation
// share, and what outlives them when the window is rebuilt: the catalog,
// the hub client, the library and the download manager; the Compare page
// and the model menu borrow the library and the downloads. It is used on
// Fyne's goroutine; background work reaches it through Window.Do.
type State struct {
	w     *core.Window
	opt   Options
	cat   *catalog.Catalog
	hc    atomic.Pointer[hub.Client] // replaced when the token changes; downloads read it
	dir   string
	queue string

	mem    fit.Memory
	memErr error

	mu  sync.Mutex // guards lib and mgr against Close from another goroutine
	lib *library.Library
	mgr *download.Manager

	page *modelsPage // made when first shown, dropped on rebuild
	rec  *welcomeRec // the welcome view's recommendation, if it shows one

	jobs    map[string]*dlJob // by destination path
	pending map[string]bool   // catalog IDs whose file list is being fetched
	watched map[*download.Download]bool
}

// dlJob is what the window remembers of a download it started.
type dlJob struct {
	group  []string // every part's destination, first part first
	load   bool     // load the model once every part is in place
	loaded bool
}

// NewState sets up the catalog, the hub client and the memory reading,
// and resumes the downloads left by the last run.
func NewState(w *core.Window, opt Options) *State {
	s := &State{w: w, opt: opt, jobs: map[string]*dlJob{}, pending: map[string]bool{}, watched: map[*download.Download]bool{}}
	if s.opt.Poll <= 0 {
		s.opt.Poll = 250 * time.Millisecond
	}
	s.cat = opt.Catalog
	if s.cat == nil {
		c, err := catalog.Load()
		if err != nil {
			// The embedded catalog is checked by its tests; an empty one
			// still leaves search and the library usable.
			c = &catalog.Catalog{Version: 1}
		}
		s.cat = c
	}
	s.dir = opt.Dir
	if s.dir == "" {
		s.dir = filepath.Join(paths.DataDir(), "models")
	}
	s.queue = opt.QueueFile
	if s.queue == "" {
		s.queue = filepath.Join(paths.CacheDir(), "downloads.json")
	}
	s.hc.Store(hub.New(hub.Options{BaseURL: s.hubURL(), Token: s.hubToken()}))
	s.readMemory()
	// Downloads left unfinished by the last run resume now, not when the
	// page is first opened.
	// (A failure here is reported when the page is opened and tries again.)
	if _, err := os.Stat(s.queue); err == nil {
		_ = s.Open()
	}
	return s
}

func (s *State) readMemory() {
	f := s.opt.Memory
	if f == nil {
		f = fit.SystemMemory
	}
	s.mem, s.memErr = f()
}

// Open makes the library folder and the download manager (resuming the
// persisted queue) the first time they are needed.
func (s *State) Open() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mgr != nil {
		return nil
	}
	lib, err := library.Open(s.dir, header.Local)
	if err != nil {
		return err
	}
	opt := s.opt.Download
	if opt.Authorize == nil {
		// The client is replaced when the token changes; ask the current one.
		opt.Authorize = func(r *http.Request) { s.Hub().Authorize(r) }
	}
	mgr, err := download.NewManager(download.Config{Options: opt, Concurrency: s.opt.Concurrency, QueueFile: s.queue})
	if err != nil {
		return err
	}
	s.lib, s.mgr = lib, mgr
	for _, d := range mgr.Downloads() {
		s.watch(d)
	}
	go s.poll(mgr)
	return nil
}

// Close stops the downloads, keeping their partial data and the queue so
// that the next run resumes them. Safe from any goroutine.
func (s *State) Close() {
	s.mu.Lock()
	mgr := s.mgr
	s.mu.Unlock()
	if mgr != nil {
		mgr.Close()
	}
}

// poll tells the window when the downloads change, a few times a second
// at most, and not at all while nothing moves.
func (s *State) poll(mgr *download.Manager) {
	t := time.NewTicker(s.opt.Poll)
	defer t.Stop()
	last := ""
	for {
		select {
		case <-s.w.Ctx.Done():
			return
		case <-t.C:
		}
		var b strings.Builder
		for _, d := range mgr.Downloads() {
			fmt.Fprintf(&b, "%p:%d:%d;", d, d.Status(), d.BytesComplete())
		}
		if sig := b.String(); sig != last {
			last = sig
			s.w.Do(s.refresh)
		}
	}
}

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

// watch arranges for the window to hear when d ends.
func (s *State) watch(d *download.Download) {
	if s.watched[d] {
		return
	}
	s.watched[d] = true
	lib := s.lib
	d.OnDone(func(d *download.Download) {
		dest := d.Request().Dest
		if d.Status() == download.Canceled {
			// The origin was recorded when the download was queued; a
			// cancelled one leaves no file, so forget it.
			if _, err := os.Stat(dest); errors.Is(err, os.ErrNotExist) {
				lib.Delete(library.Model{Path: dest})
			}
		}
		s.w.Do(func() { s.finished(d) })
	})
}

// finished runs on Fyne's goroutine when a download ends.
func (s *State) finished(d *download.Download) {
	dest := d.Request().Dest
	switch d.Status() {
	case download.Completed:
		if j := s.jobs[dest]; j != nil && j.load && !j.loaded && core.AllPresent(j.group) {
			j.loaded = true
			s.load(j.group[0])
		}
		if p := s.page; p != nil {
			p.reloadLibrary()
		}
	case download.Failed:
		s.w.ShowError(fmt.Errorf("%s: %w", d.Request().Label, d.Err()))
	}
	s.refresh()
}

// DestFor is where a repository's file is kept in the library (the same
// place `churon pull` puts it).
func (s *State) DestFor(repo, file string) string {
	return filepath.Join(s.dir, filepath.FromSlash(repo), path.Base(file))
}

// Active returns the unfinished download of a destination, or nil.
func (s *State) Active(dest string) *download.Download {
	s.mu.Lock()
	mgr := s.mgr
	s.mu.Unlock()
	if mgr == nil {
		return nil
	}
	for _, d := range mgr.Downloads() {
		if d.Request().Dest == dest && !d.IsDone() {
			return d
		}
	}
	return nil
}

// downloads lists the manager's downloads (none before it is opened).
func (s *State) downloads() []*download.Download {
	s.mu.Lock()
	mgr := s.mgr
	s.mu.Unlock()
	if mgr == nil {
		return nil
	}
	return mgr.Downloads()
}

// supported reports whether the engine runs an architecture (true when
// the list is unknown).
func (s *State) supported(arch string) bool {
	return s.opt.Architectures == nil || slices.Contains(s.opt.Architectures, arch)
}

// catalogMeta is what a catalog entry says of its model, in the shape the
// fit check reads from a GGUF header.
func catalogMeta(m catalog.Model) fit.Meta {
	return fit.Meta{Name: m.Name, Architecture: m.Architecture, Quant: m.Quant, Parameters: m.Parameters,
		ContextLength: m.Context, Layers: m.Layers, Embedding: m.Embedding, Heads: m.Heads, KVHeads: m.KVHeads,
		HeadDimK: m.HeadDim, HeadDimV: m.HeadDim, HasTemplate: true, WeightBytes: m.Size, FileBytes: m.Size}
}

// check is the fit verdict for a model on this machine, at the context
// the app opens by default.
func (s *State) check(meta fit.Meta) fit.Result {
	mem := s.mem
	if s.memErr != nil {
		mem = fit.Memory{}
	}
	return fit.Check(fit.EstimateMemory(meta, 0), mem)
}

// recommend picks the catalog model to offer a new user: the first of
// the catalog's recommendations that the engine runs and that fits; when
// none fits comfortably, the first that fits tightly.
func (s *State) recommend() (catalog.Model, fit.Result, bool) {
	for _, want := range []fit.Verdict{fit.Fits, fit.Tight} {
		var res fit.Result
		m, ok := s.cat.Recommend(func(m catalog.Model) bool {
			if !m.Verified || !s.supported(m.Architecture) {
				return false
			}
			res = s.check(catalogMeta(m))
			return res.Verdict == want
		})
		if ok {
			return m, res, true
		}
	}
	if s.mem.Total <= 0 {
		// Memory unknown: offer the first recommendation the engine runs.
		var res fit.Result
		m, ok := s.cat.Recommend(func(m catalog.Model) bool {
			res = s.check(catalogMeta(m))
			return m.Verified && s.supported(m.Architecture)
		})
		return m, res, ok
	}
	return catalog.Model{}, fit.Result{}, false
}

// downloadCatalog fetches a catalog model: the hub's listing gives the
// exact size, parts and SHA-256, then the files are queued. With load
// set, the model is loaded once it is in place.
func (s *State) downloadCatalog(m catalog.Model, load bool) {
	if err := s.Open(); err != nil {
		s.w.ShowError(err)
		return
	}
	if s.pending[m.ID] {
		return
	}
	s.pending[m.ID] = true
	s.refresh()
	hc := s.Hub()
	go func() {
		ctx, cancel := context.WithTimeout(s.w.Ctx, time.Minute)
		defer cancel()
		files, err := hc.Files(ctx, m.Repo, "main")
		var v hub.Variant
		if err == nil {
			var ok bool
			if v, ok = hub.Pick(hub.Variants(files), m.File); !ok {
				err = errors.New(lang.X("models.missing_file", "{{.Repo}} no longer has {{.File}}.",
					map[string]any{"Repo": m.Repo, "File": m.File}))
			}
		}
		s.w.Do(func() {
			delete(s.pending, m.ID)
			if err == nil {
				err = s.QueueVariant(m.Repo, "main", v, load)
			}
			if err != nil {
				s.w.ShowError(err)
			}
			s.refresh()
		})
	}()
}

// QueueVariant queues every part of a variant. The origin of each file
// is recorded now, so that a download resumed after a restart still knows
// where it came from.
func (s *State) QueueVariant(repo, rev string, v hub.Variant, load bool) error {
	if err := s.Open(); err != nil {
		return err
	}
	if !v.Complete || len(v.Files) == 0 {
		return errors.New(lang.X("models.incomplete", "{{.Name}} is missing parts on the hub.", map[string]any{"Name": v.Name}))
	}
	var group []string
	for _, f := range v.Files {
		group = append(group, s.DestFor(repo, f.Path))
	}
	job := &dlJob{group: group, load: load}
	for i, f := range v.Files {
		dest := group[i]
		label := path.Base(f.Path)
		if len(v.Files) > 1 {
			label = lang.X("models.part", "{{.Name}} (part {{.N}} of {{.Of}})", map[string]any{"Name": v.Name, "N": i + 1, "Of": len(v.Files)})
		}
		if _, err := os.Stat(dest); errors.Is(err, os.ErrNotExist) {
			if err := s.lib.Record(dest, library.Origin{Repo: repo, Revision: rev, File: f.Path, SHA256: f.SHA256}); err != nil {
				return err
			}
		}
		d, err := s.mgr.Add(download.Request{URL: s.Hub().ResolveURL(repo, rev, f.Path), Dest: dest, SHA256: f.SHA256, Size: f.Size, Label: label})
		if err != nil {
			return err
		}
		s.jobs[dest] = job
		s.watch(d)
	}
	s.refresh()
	return nil
}

// load loads a model into the session and shows the chat.
func (s *State) load(path string) {
	s.w.ModelsShown = false
	s.w.LoadModel(path)
	s.w.Refresh()
}

// Hub is the client for the hub. Safe from any goroutine.
func (s *State) Hub() *hub.Client { return s.hc.Load() }

// Library is the library, once Open succeeded.
func (s *State) Library() *library.Library { return s.lib }

// Dir is the library folder, where downloads go.
func (s *State) Dir() string { return s.dir }

// Show opens the Models page in the window's centre, with the memory read
// again.
func (s *State) Show() {
	s.w.ModelsShown = true
	s.readMemory()
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
func (s *State) Page() fyne.CanvasObject {
	if s.page == nil {
		s.page = newModelsPage(s)
	}
	return s.page.content
}

// DropPage forgets the page: the window is built again (the language
// changed) and widgets keep the text they were made with.
func (s *State) DropPage() { s.page = nil }
