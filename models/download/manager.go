package download

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Config sets up a Manager.
type Config struct {
	Options Options
	// Concurrency is how many downloads run at once (default 2); the rest
	// wait in the queue in the order they were added.
	Concurrency int
	// QueueFile, when set, is where the queue is kept, so that unfinished
	// downloads resume when a new Manager is made (after a restart).
	QueueFile string
}

// Manager runs a queue of downloads. Its methods are safe for concurrent
// use.
type Manager struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	sem    chan struct{}

	mu      sync.Mutex
	list    []*Download
	closing bool
}

// queueEntry is one line of the persisted queue.
type queueEntry struct {
	Request
	Paused bool `json:"paused,omitempty"`
}

// NewManager makes a manager and resumes the downloads its queue file
// lists (paused ones stay paused).
func NewManager(cfg Config) (*Manager, error) {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 2
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{cfg: cfg, ctx: ctx, cancel: cancel, sem: make(chan struct{}, cfg.Concurrency)}
	if cfg.QueueFile == "" {
		return m, nil
	}
	data, err := os.ReadFile(cfg.QueueFile)
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("download: read queue: %w", err)
	}
	var entries []queueEntry
	if err := json.Unmarshal(data, &entries); err != nil {
		cancel()
		return nil, fmt.Errorf("download: queue %s: %w", cfg.QueueFile, err)
	}
	for _, e := range entries {
		m.add(e.Request, e.Paused)
	}
	return m, nil
}

// Add queues a download. Adding a file that is already queued or running
// returns the existing handle.
func (m *Manager) Add(req Request) (*Download, error) {
	if req.URL == "" || req.Dest == "" {
		return nil, fmt.Errorf("download: a request needs a URL and a destination")
	}
	abs, err := filepath.Abs(req.Dest)
	if err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	req.Dest = abs
	d, err := m.add(req, false)
	if err != nil {
		return nil, err
	}
	m.save()
	return d, nil
}

func (m *Manager) add(req Request, paused bool) (*Download, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closing {
		return nil, ErrClosed
	}
	for _, d := range m.list {
		if d.req.Dest == req.Dest && !d.IsDone() {
			return d, nil
		}
	}
	d := newDownload(req, m.cfg.Options)
	d.slot = m.acquire
	d.paused.Store(paused)
	d.status.Store(int32(Queued))
	m.list = append(m.list, d)
	d.ending = m.save
	go d.run(m.ctx)
	return d, nil
}

// acquire takes a slot in the queue.
func (m *Manager) acquire(ctx context.Context) (func(), error) {
	select {
	case m.sem <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-m.sem }) }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Downloads returns every download added since the manager was made, in
// order, finished ones included (until Forget).
func (m *Manager) Downloads() []*Download {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*Download(nil), m.list...)
}

// Forget drops finished downloads from the list.
func (m *Manager) Forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	kept := m.list[:0]
	for _, d := range m.list {
		if !d.IsDone() {
			kept = append(kept, d)
		}
	}
	clear(m.list[len(kept):])
	m.list = kept
}

// Pause and Resume act on one download and record the choice in the queue
// file, so a paused download stays paused across restarts.
func (m *Manager) Pause(d *Download)  { d.Pause(); m.save() }
func (m *Manager) Resume(d *Download) { d.Resume(); m.save() }

// Close stops every download, keeping partial data and the queue file so
// that a later Manager resumes them, and waits for them to stop.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		return nil
	}
	err := m.saveLocked()
	m.closing = true
	list := append([]*Download(nil), m.list...)
	m.mu.Unlock()
	m.cancel()
	for _, d := range list {
		<-d.Done()
	}
	return err
}

func (m *Manager) save() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.closing {
		m.saveLocked()
	}
}

// saveLocked writes the unfinished downloads to the queue file.
func (m *Manager) saveLocked() error {
	if m.cfg.QueueFile == "" {
		return nil
	}
	entries := []queueEntry{}
	for _, d := range m.list {
		if !d.Status().final() {
			entries = append(entries, queueEntry{Request: d.req, Paused: d.paused.Load()})
		}
	}
	data, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return fmt.Errorf("download: encode queue: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(m.cfg.QueueFile), 0o755); err != nil {
		return fmt.Errorf("download: %w", err)
	}
	return writeFileAtomic(m.cfg.QueueFile, data)
}
