package ui

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

	"fyne.io/fyne/v2/lang"

	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/assets/catalog"
	"github.com/churon/churon/models/download"
	"github.com/churon/churon/models/fit"
	"github.com/churon/churon/models/hub"
	"github.com/churon/churon/models/library"
)

// ModelsOptions configure the Models page: where models are kept, which
// hub to ask, and (for tests) the machine's memory and the download
// tuning. The zero value is the app's: models in paths.DataDir()/models,
// the queue in paths.CacheDir(), the hub from $CHURON_HUB_URL, the
// "models.hub_url" setting or huggingface.co.
type ModelsOptions struct {
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

// Settings and environment read for the hub.
const (
	settingHubURL   = "models.hub_url"
	settingHubToken = "models.hub_token"
	envHubURL       = "CHURON_HUB_URL"
	envHubToken     = "HF_TOKEN"
)

// modelsState is what the Models page and the welcome view share, and
// what outlives them when the window is rebuilt: the catalog, the hub
// client, the library and the download manager. It is used on Fyne's
// goroutine; background work reaches it through ui.do.
type modelsState struct {
	u     *UI
	opt   ModelsOptions
	cat   *catalog.Catalog
	hc    atomic.Pointer[hub.Client] // replaced when the token changes; downloads read it
	dir   string
	queue string

	mem    fit.Memory
	memErr error

	mu  sync.Mutex // guards lib and mgr against Close from another goroutine
	lib *library.Library
	mgr *download.Manager

	// menuModels are the library's models for the model menu (model.go),
	// listed in the background; used on Fyne's goroutine only.
	menuModels []string

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

func newModelsState(u *UI, opt ModelsOptions) *modelsState {
	s := &modelsState{u: u, opt: opt, jobs: map[string]*dlJob{}, pending: map[string]bool{}, watched: map[*download.Download]bool{}}
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
		_ = s.open()
	}
	return s
}

func (s *modelsState) hubURL() string {
	for _, v := range []string{s.opt.HubURL, os.Getenv(envHubURL)} {
		if v != "" {
			return v
		}
	}
	if v, ok := s.u.setting(settingHubURL); ok && v != "" {
		return v
	}
	return hub.DefaultBaseURL
}

func (s *modelsState) hubToken() string {
	if s.opt.Token != "" {
		return s.opt.Token
	}
	if v, ok := s.u.setting(settingHubToken); ok && v != "" {
		return v
	}
	return os.Getenv(envHubToken)
}

// setToken stores a new access token and uses it from now on.
func (s *modelsState) setToken(tok string) {
	s.u.setSetting(settingHubToken, strings.TrimSpace(tok))
	s.hc.Store(hub.New(hub.Options{BaseURL: s.hubURL(), Token: s.hubToken()}))
}

func (s *modelsState) readMemory() {
	f := s.opt.Memory
	if f == nil {
		f = fit.SystemMemory
	}
	s.mem, s.memErr = f()
}

// open makes the library folder and the download manager (resuming the
// persisted queue) the first time they are needed.
func (s *modelsState) open() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mgr != nil {
		return nil
	}
	lib, err := library.Open(s.dir)
	if err != nil {
		return err
	}
	opt := s.opt.Download
	if opt.Authorize == nil {
		// The client is replaced when the token changes; ask the current one.
		opt.Authorize = func(r *http.Request) { s.hub().Authorize(r) }
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

// close stops the downloads, keeping their partial data and the queue so
// that the next run resumes them. Safe from any goroutine.
func (s *modelsState) close() {
	s.mu.Lock()
	mgr := s.mgr
	s.mu.Unlock()
	if mgr != nil {
		mgr.Close()
	}
}

// poll tells the window when the downloads change, a few times a second
// at most, and not at all while nothing moves.
func (s *modelsState) poll(mgr *download.Manager) {
	t := time.NewTicker(s.opt.Poll)
	defer t.Stop()
	last := ""
	for {
		select {
		case <-s.u.ctx.Done():
			return
		case <-t.C:
		}
		var b strings.Builder
		for _, d := range mgr.Downloads() {
			fmt.Fprintf(&b, "%p:%d:%d;", d, d.Status(), d.BytesComplete())
		}
		if sig := b.String(); sig != last {
			last = sig
			s.u.do(s.refresh)
		}
	}
}

// refresh brings the page and the welcome card in line with the
// downloads.
func (s *modelsState) refresh() {
	if p := s.u.modelsPage; p != nil {
		p.refresh()
	}
	if w := s.u.welcome; w != nil && w.rec != nil {
		w.rec.refresh()
	}
}

// watch arranges for the window to hear when d ends.
func (s *modelsState) watch(d *download.Download) {
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
		s.u.do(func() { s.finished(d) })
	})
}

// finished runs on Fyne's goroutine when a download ends.
func (s *modelsState) finished(d *download.Download) {
	dest := d.Request().Dest
	switch d.Status() {
	case download.Completed:
		if j := s.jobs[dest]; j != nil && j.load && !j.loaded && allPresent(j.group) {
			j.loaded = true
			s.load(j.group[0])
		}
		if p := s.u.modelsPage; p != nil {
			p.reloadLibrary()
		}
	case download.Failed:
		s.u.showError(fmt.Errorf("%s: %w", d.Request().Label, d.Err()))
	}
	s.refresh()
}

func allPresent(files []string) bool {
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// destFor is where a repository's file is kept in the library (the same
// place `churon pull` puts it).
func (s *modelsState) destFor(repo, file string) string {
	return filepath.Join(s.dir, filepath.FromSlash(repo), path.Base(file))
}

// active returns the unfinished download of a destination, or nil.
func (s *modelsState) active(dest string) *download.Download {
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
func (s *modelsState) downloads() []*download.Download {
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
func (s *modelsState) supported(arch string) bool {
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
func (s *modelsState) check(meta fit.Meta) fit.Result {
	mem := s.mem
	if s.memErr != nil {
		mem = fit.Memory{}
	}
	return fit.Check(fit.EstimateMemory(meta, 0), mem)
}

// recommend picks the catalog model to offer a new user: the first of
// the catalog's recommendations that the engine runs and that fits; when
// none fits comfortably, the first that fits tightly.
func (s *modelsState) recommend() (catalog.Model, fit.Result, bool) {
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
func (s *modelsState) downloadCatalog(m catalog.Model, load bool) {
	if err := s.open(); err != nil {
		s.u.showError(err)
		return
	}
	if s.pending[m.ID] {
		return
	}
	s.pending[m.ID] = true
	s.refresh()
	hc := s.hub()
	go func() {
		ctx, cancel := context.WithTimeout(s.u.ctx, time.Minute)
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
		s.u.do(func() {
			delete(s.pending, m.ID)
			if err == nil {
				err = s.queueVariant(m.Repo, "main", v, load)
			}
			if err != nil {
				s.u.showError(err)
			}
			s.refresh()
		})
	}()
}

// queueVariant queues every part of a variant. The origin of each file
// is recorded now, so that a download resumed after a restart still knows
// where it came from.
func (s *modelsState) queueVariant(repo, rev string, v hub.Variant, load bool) error {
	if err := s.open(); err != nil {
		return err
	}
	if !v.Complete || len(v.Files) == 0 {
		return errors.New(lang.X("models.incomplete", "{{.Name}} is missing parts on the hub.", map[string]any{"Name": v.Name}))
	}
	var group []string
	for _, f := range v.Files {
		group = append(group, s.destFor(repo, f.Path))
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
		d, err := s.mgr.Add(download.Request{URL: s.hub().ResolveURL(repo, rev, f.Path), Dest: dest, SHA256: f.SHA256, Size: f.Size, Label: label})
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
func (s *modelsState) load(path string) {
	s.u.modelsShown = false
	s.u.picker.load(path)
	s.u.refresh()
}

// hub is the client for the hub. Safe from any goroutine.
func (s *modelsState) hub() *hub.Client { return s.hc.Load() }
