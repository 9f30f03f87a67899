package kvcache

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/engine"
)

// Errors, matched with errors.Is.
var (
	// ErrNotFound: no snapshot under the key.
	ErrNotFound = errors.New("kvcache: no snapshot")
	// ErrDiscarded: the snapshot did not match the model, context or KV
	// type, or was truncated or corrupt; it has been deleted. The error
	// also wraps the engine's ErrSnapshotMismatch or ErrSnapshotCorrupt
	// and says why.
	ErrDiscarded = errors.New("kvcache: snapshot discarded")
	// ErrTooLarge: the snapshot alone is larger than the disk budget, so
	// it was not written.
	ErrTooLarge = errors.New("kvcache: snapshot larger than the disk budget")
	// ErrBadKey: keys are 1–128 of A–Z a–z 0–9 . _ - and do not start
	// with a dot.
	ErrBadKey = errors.New("kvcache: bad key")
)

// DefaultBudget is the disk budget Open(dir, 0) gives: room for a few
// hundred long conversations of a small model (a 2,000-token snapshot of
// a 0.5B model with an F16 cache is about 24 MiB).
const DefaultBudget int64 = 4 << 30

const (
	ext       = ".kv"
	tmpPrefix = ".tmp-"
	// A temporary file younger than this is never removed by Open: its
	// writer may be between creating and locking it.
	tmpGrace = 5 * time.Second
	// Where files cannot be locked, only temporary files older than this
	// are taken for a dead writer's.
	staleAfter = time.Hour
)

// Entry describes one stored snapshot.
type Entry struct {
	Key      string
	Bytes    int64
	Tokens   int       // token ids the snapshot covers (0 if its header is unreadable)
	Modified time.Time // last saved or loaded
	// Identity is the model, context and KV type the snapshot was made
	// for (zero if its header is unreadable).
	Identity engine.Identity
}

// Store is a folder of snapshots under a disk budget. It is safe for
// concurrent use by the goroutines of one process; other processes may use
// the same folder (each sees whole files), though their budgets are
// enforced separately.
type Store struct {
	dir    string
	mu     sync.Mutex // serialises renames, deletions and eviction
	budget int64
}

// DefaultDir is where snapshots live: paths.KVCacheDir, that is
// xdg.CacheHome/churon/kv, or $CHURON_HOME/cache/kv.
func DefaultDir() string { return paths.KVCacheDir() }

// Open makes the folder if needed, removes temporary files left by
// killed writers and evicts down to the budget: 0 means DefaultBudget, a
// negative budget no limit.
func Open(dir string, budget int64) (*Store, error) {
	if dir == "" {
		return nil, errors.New("kvcache: open: no folder")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("kvcache: open: %w", err)
	}
	s := &Store{dir: dir, budget: budgetOf(budget)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.cleanTemps(); err != nil {
		return nil, fmt.Errorf("kvcache: open: %w", err)
	}
	if err := s.evict(""); err != nil {
		return nil, fmt.Errorf("kvcache: open: %w", err)
	}
	return s, nil
}

// Dir is the store's folder.
func (s *Store) Dir() string { return s.dir }

func checkKey(key string) error {
	if key == "" || len(key) > 128 || key[0] == '.' {
		return fmt.Errorf("%w: %q", ErrBadKey, key)
	}
	for _, c := range key {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return fmt.Errorf("%w: %q", ErrBadKey, key)
		}
	}
	return nil
}

func (s *Store) path(key string) string { return filepath.Join(s.dir, key+ext) }

// Save writes seq's snapshot under key, replacing any older one
// atomically, and returns its size. Then the least recently used other
// snapshots are deleted until the folder fits the budget. A snapshot
// larger than the whole budget is not written (ErrTooLarge). seq must not
// be used by another goroutine during the call.
func (s *Store) Save(key string, seq *engine.Sequence) (int64, error) {
	if err := checkKey(key); err != nil {
		return 0, err
	}
	size := seq.SnapshotSize()
	if b := s.Budget(); b > 0 && size > b {
		return 0, fmt.Errorf("%w: %s needs %d bytes, the budget is %d", ErrTooLarge, key, size, b)
	}
	// The folder may have been removed (a person clearing caches by hand).
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return 0, fmt.Errorf("kvcache: save %s: %w", key, err)
	}
	f, err := os.CreateTemp(s.dir, tmpPrefix+key+"-*")
	if err != nil {
		return 0, fmt.Errorf("kvcache: save %s: %w", key, err)
	}
	tmp := f.Name()
	closed := false
	fail := func(err error) (int64, error) {
		if !closed {
			f.Close()
		}
		os.Remove(tmp)
		return 0, fmt.Errorf("kvcache: save %s: %w", key, err)
	}
	// Best effort: a file system without flock only loses the check that
	// tells a live writer's temporary file from a dead one's.
	_ = lockFile(f)
	if err := seq.WriteSnapshot(f); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !renameOpen {
		closed = true
		if err := f.Close(); err != nil {
			return fail(err)
		}
	}
	if err := os.Rename(tmp, s.path(key)); err != nil {
		return fail(err)
	}
	if !closed {
		closed = true
		if err := f.Close(); err != nil {
			return 0, fmt.Errorf("kvcache: save %s: %w", key, err)
		}
	}
	// Stamp the time from the same clock Load touches files with: the
	// kernel's own timestamps are coarse (a few ms) and could make a file
	// saved just after a load look older than it.
	now := time.Now()
	_ = os.Chtimes(s.path(key), now, now)
	if err := syncDir(s.dir); err != nil {
		return 0, fmt.Errorf("kvcache: save %s: sync folder: %w", key, err)
	}
	// The snapshot is saved; failing to evict others leaves the folder
	// over budget until the next Save, which tries again.
	_ = s.evict(key)
	return size, nil
}

// Load restores the snapshot under key into a new sequence of m made
// with opt. Without a snapshot the error wraps ErrNotFound. A snapshot
// made for another model, context length, KV type or format, or one that
// is truncated or corrupt, is deleted and the error wraps ErrDiscarded
// (and the engine's reason). Other errors (reading the disk, ctx
// cancelled) leave the file alone. A loaded file counts as recently used.
func (s *Store) Load(ctx context.Context, key string, m *engine.Model, opt engine.SequenceOptions) (*engine.Sequence, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path := s.path(key)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	if err != nil {
		return nil, fmt.Errorf("kvcache: load %s: %w", key, err)
	}
	defer f.Close()
	seq, err := m.ReadSnapshot(bufio.NewReaderSize(ctxReader{ctx, f}, 256<<10), opt)
	if err != nil {
		if errors.Is(err, engine.ErrSnapshotCorrupt) || errors.Is(err, engine.ErrSnapshotMismatch) {
			s.discard(path, f)
			return nil, fmt.Errorf("%w: %s: %w", ErrDiscarded, key, err)
		}
		return nil, fmt.Errorf("kvcache: load %s: %w", key, err)
	}
	now := time.Now()
	_ = os.Chtimes(path, now, now)
	return seq, nil
}

// discard deletes path if it is still the file f (not a newer snapshot
// renamed over it meanwhile).
func (s *Store) discard(path string, f *os.File) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err1 := f.Stat()
	b, err2 := os.Stat(path)
	if err1 == nil && err2 == nil && os.SameFile(a, b) {
		os.Remove(path)
	}
}

// ctxReader stops a long read when the context is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Stat describes the snapshot under key, reading only its header.
func (s *Store) Stat(key string) (Entry, bool) {
	if checkKey(key) != nil {
		return Entry{}, false
	}
	f, err := os.Open(s.path(key))
	if err != nil {
		return Entry{}, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return Entry{}, false
	}
	e := Entry{Key: key, Bytes: st.Size(), Modified: st.ModTime()}
	if info, err := engine.ReadSnapshotInfo(bufio.NewReaderSize(f, 512)); err == nil {
		e.Tokens, e.Identity = info.Tokens, info.Identity
	}
	return e, true
}

// Delete removes the snapshot under key; a missing one is not an error.
func (s *Store) Delete(key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.Remove(s.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("kvcache: delete %s: %w", key, err)
	}
	return nil
}

// Usage counts the snapshots and their bytes, for the settings page.
func (s *Store) Usage() (files int, bytes int64) {
	es, _ := s.list()
	for _, e := range es {
		bytes += e.size
	}
	return len(es), bytes
}

// Keys lists the keys of the snapshots on disk, so their owner can delete
// those it no longer needs (the session: snapshots of conversations
// deleted for good).
func (s *Store) Keys() ([]string, error) {
	es, err := s.list()
	if err != nil {
		return nil, fmt.Errorf("kvcache: list: %w", err)
	}
	keys := make([]string, len(es))
	for i, e := range es {
		keys[i] = strings.TrimSuffix(e.name, ext)
	}
	return keys, nil
}

// Clear deletes every snapshot (and dead writers' temporary files).
func (s *Store) Clear() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	es, err := s.list()
	if err != nil {
		return fmt.Errorf("kvcache: clear: %w", err)
	}
	for _, e := range es {
		if err := os.Remove(filepath.Join(s.dir, e.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("kvcache: clear: %w", err)
		}
	}
	if err := s.cleanTemps(); err != nil {
		return fmt.Errorf("kvcache: clear: %w", err)
	}
	return nil
}

// SetBudget changes the disk budget (0: DefaultBudget, negative: no
// limit) and evicts down to it.
func (s *Store) SetBudget(bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.budget = budgetOf(bytes)
	_ = s.evict("")
}

func budgetOf(b int64) int64 {
	if b == 0 {
		return DefaultBudget
	}
	return b
}

// Budget is the disk budget in bytes (negative: no limit).
func (s *Store) Budget() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.budget
}

type file struct {
	name string
	size int64
	mod  time.Time
}

// list returns the snapshot files (not temporary ones).
func (s *Store) list() ([]file, error) {
	des, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var files []file
	for _, de := range des {
		name := de.Name()
		if !strings.HasSuffix(name, ext) || checkKey(strings.TrimSuffix(name, ext)) != nil || !de.Type().IsRegular() {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue // removed meanwhile
		}
		files = append(files, file{name, info.Size(), info.ModTime()})
	}
	return files, nil
}

// evict deletes the least recently used snapshots, never keep's, until
// the rest fit the budget. The caller holds s.mu.
func (s *Store) evict(keep string) error {
	if s.budget <= 0 {
		return nil
	}
	files, err := s.list()
	if err != nil {
		return err
	}
	var total int64
	for _, f := range files {
		total += f.size
	}
	sort.Slice(files, func(i, j int) bool {
		if !files[i].mod.Equal(files[j].mod) {
			return files[i].mod.Before(files[j].mod)
		}
		return files[i].name < files[j].name
	})
	for _, f := range files {
		if total <= s.budget {
			break
		}
		if keep != "" && f.name == keep+ext {
			continue
		}
		if err := os.Remove(filepath.Join(s.dir, f.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		total -= f.size
	}
	return nil
}

// cleanTemps removes temporary files whose writer is gone: unlocked (and
// past a short grace period) where files can be locked, else old. The
// caller holds s.mu.
func (s *Store) cleanTemps() error {
	des, err := os.ReadDir(s.dir)
	if err != nil {
		return err
	}
	now := time.Now()
	for _, de := range des {
		if !strings.HasPrefix(de.Name(), tmpPrefix) || !de.Type().IsRegular() {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue
		}
		age := now.Sub(info.ModTime())
		p := filepath.Join(s.dir, de.Name())
		if age < tmpGrace || (!canLock && age < staleAfter) || inUse(p) {
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
