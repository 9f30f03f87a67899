package models

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/churon/churon/assets/catalog"
	"github.com/churon/churon/internal/outbox"
	"github.com/churon/churon/models/download"
	"github.com/churon/churon/models/fit"
	"github.com/churon/churon/models/hub"
	"github.com/churon/churon/models/library"
)

// Service manages the models: see the package comment. Its methods are
// safe from any goroutine.
type Service struct {
	opt Options
	cat *catalog.Catalog
	hc  atomic.Pointer[hub.Client] // replaced when the token changes; downloads read it
	box *outbox.Box[Event]

	ctx    context.Context
	cancel context.CancelFunc
	work   sync.WaitGroup // commands running in the background

	memMu  sync.Mutex
	mem    fit.Memory
	memErr error

	mu      sync.Mutex // guards what follows
	lib     *library.Library
	mgr     *download.Manager
	jobs    map[string][]*job           // the models waiting for a file, by destination path
	ended   map[*download.Download]bool // completed, and DownloadEnded sent
	pending map[string]bool             // catalog IDs whose file list is being fetched
	watched map[*download.Download]bool
	closed  bool

	// stir wakes the downloads' poll, which sleeps while none of them
	// can move by itself; asleep says it does (tests wait for it).
	stir   chan struct{}
	asleep atomic.Bool
}

// job is what the service remembers of a model it queued.
type job struct {
	group []string // every part's destination, first part first
	load  bool     // the person asked for it to be loaded once in place
	done  bool     // ModelReady was sent
	// pending are the parts whose download has not ended yet.
	pending map[string]bool
}

// New makes the service. Downloads left unfinished by the last run (in
// the queue file) resume now. Close it when done.
func New(opt Options) *Service {
	opt = opt.withDefaults()
	s := &Service{opt: opt, box: outbox.New(outbox.Hooks[Event]{Merge: mergeChanged}),
		jobs: map[string][]*job{}, ended: map[*download.Download]bool{}, pending: map[string]bool{}, watched: map[*download.Download]bool{},
		stir: make(chan struct{}, 1)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
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
	s.hc.Store(s.newHubClient())
	s.ReadMemory()
	if opt.QueueFile != "" {
		if _, err := os.Stat(opt.QueueFile); err == nil {
			if err := s.open(); err != nil {
				s.emit(Error{Op: "resume downloads", Err: err})
			}
		}
	}
	return s
}

// mergeChanged folds repeated DownloadsChanged events into one while the
// consumer lags: each only says "look again".
func mergeChanged(last, next Event) bool {
	_, a := last.(DownloadsChanged)
	_, b := next.(DownloadsChanged)
	return a && b
}

// Events delivers what happens, in order; it is closed after Close. The
// consumer must keep draining it.
func (s *Service) Events() <-chan Event { return s.box.Out() }

func (s *Service) emit(ev Event) { s.box.Push(ev) }

// Close stops the downloads, keeping their partial data and the queue so
// that the next run resumes them, waits for running commands and closes
// Events.
func (s *Service) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	mgr := s.mgr
	s.mu.Unlock()
	s.cancel()
	if mgr != nil {
		mgr.Close()
	}
	s.work.Wait()
	s.box.Close()
}

// background runs a command off the caller's goroutine; a failure is
// reported as an Error event for op.
func (s *Service) background(op string, f func() error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.work.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.work.Done()
		if err := f(); err != nil && s.ctx.Err() == nil {
			s.emit(Error{Op: op, Err: err})
		}
	}()
}

func (s *Service) hubURL() string {
	for _, v := range []string{s.opt.HubURL, os.Getenv(EnvHubURL)} {
		if v != "" {
			return v
		}
	}
	if v, ok := s.setting(SettingHubURL); ok && v != "" {
		return v
	}
	return hub.DefaultBaseURL
}

func (s *Service) hubToken() string {
	if s.opt.Token != "" {
		return s.opt.Token
	}
	if v, ok := s.setting(SettingHubToken); ok && v != "" {
		return v
	}
	return os.Getenv(EnvHubToken)
}

func (s *Service) setting(key string) (string, bool) {
	if s.opt.Settings == nil {
		return "", false
	}
	return s.opt.Settings.Setting(key)
}

// Hub is the client for the hub (search, file lists). Safe from any
// goroutine; SetToken replaces it.
func (s *Service) Hub() *hub.Client { return s.hc.Load() }

// Token is the hub access token in use ("" for none).
func (s *Service) Token() string { return s.hubToken() }

// SetToken saves a new access token (through Settings) and uses it from
// now on.
func (s *Service) SetToken(tok string) {
	tok = strings.TrimSpace(tok)
	s.background("save token", func() error {
		if s.opt.Settings == nil {
			return errors.New("models: no settings to keep the token in")
		}
		if err := s.opt.Settings.SetSetting(SettingHubToken, tok); err != nil {
			return err
		}
		s.hc.Store(s.newHubClient())
		return nil
	})
}

// Catalog is the catalog of recommended models.
func (s *Service) Catalog() *catalog.Catalog { return s.cat }

// Dir is the library folder.
func (s *Service) Dir() string { return s.opt.Dir }

// Dest is where a repository's file goes in this library.
func (s *Service) Dest(repo, file string) string { return Dest(s.opt.Dir, repo, file) }

// Supported reports whether the engine runs an architecture (true when
// the list is unknown).
func (s *Service) Supported(arch string) bool {
	return s.opt.Architectures == nil || slices.Contains(s.opt.Architectures, arch)
}

// open makes the library folder and the download manager (resuming the
// persisted queue) the first time they are needed.
func (s *Service) open() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mgr != nil {
		return nil
	}
	if s.closed {
		return errors.New("models: the service is closed")
	}
	lib, err := library.Open(s.opt.Dir, s.opt.Headers.Local)
	if err != nil {
		return err
	}
	opt := s.opt.Download
	if opt.Authorize == nil {
		// The client is replaced when the token changes; ask the current one.
		opt.Authorize = func(r *http.Request) { s.Hub().Authorize(r) }
	}
	mgr, err := download.NewManager(download.Config{Options: opt, Concurrency: s.opt.Concurrency, QueueFile: s.opt.QueueFile})
	if err != nil {
		return err
	}
	s.lib, s.mgr = lib, mgr
	for _, d := range mgr.Downloads() {
		s.watchLocked(d)
	}
	go s.poll(mgr)
	return nil
}

// library opens the library (and the download manager) if need be.
func (s *Service) library() (*library.Library, error) {
	if err := s.open(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lib, nil
}

// poll says DownloadsChanged when the downloads move, a few times a
// second at most, and not at all while nothing moves. While none is
// queued, running or being verified (none can move by itself), it sleeps
// until a command stirs it: an idle app is not woken four times a second.
func (s *Service) poll(mgr *download.Manager) {
	t := time.NewTicker(s.opt.Poll)
	defer t.Stop()
	last := ""
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		var b strings.Builder
		moving := false
		for _, d := range mgr.Downloads() {
			st := d.Status()
			fmt.Fprintf(&b, "%p:%d:%d;", d, st, d.BytesComplete())
			moving = moving || st == download.Queued || st == download.Running || st == download.Verifying
		}
		if sig := b.String(); sig != last {
			last = sig
			s.emit(DownloadsChanged{})
		}
		if !moving {
			t.Stop()
			s.asleep.Store(true)
			select {
			case <-s.ctx.Done():
				return
			case <-s.stir:
			}
			s.asleep.Store(false)
			t.Reset(s.opt.Poll)
		}
	}
}

// wake stirs the poll: a command may have made a download move.
func (s *Service) wake() {
	select {
	case s.stir <- struct{}{}:
	default: // already stirred
	}
}
