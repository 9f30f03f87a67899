package kvcache

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/internal/atomicfile"
	"github.com/churon/churon/internal/ctxio"
	"github.com/churon/churon/internal/enum"
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
	Tokens   int       // token ids the snapshot covers (0 if it has no whole segment)
	Modified time.Time // last saved or loaded
	// Identity is the model, context and KV type the snapshot was made
	// for (zero if its header is unreadable).
	Identity engine.Identity
}

// Store is a folder of snapshots under a disk budget. It is safe for
// concurrent use by the goroutines of one process; other processes may use
// the same folder (each sees whole states: a file's whole segments), though
// their budgets are enforced separately.
type Store struct {
	dir    string
	mu     sync.Mutex // serialises renames, deletions and eviction; guards the fields below
	budget int64
	// known is what this process last saw in each file (written or
	// read), so that a Save after a follow-up knows what to append
	// without reading the file again.
	known map[string]known
	// saving serialises the Saves of one key (striped by its hash).
	saving [64]sync.Mutex
}

// known is a snapshot file's index as of the file fi.
type known struct {
	fi os.FileInfo
	ix *engine.SnapshotIndex
}

// maxKnown bounds the indexes kept: each holds its state's token ids.
const maxKnown = 1024

// Compaction: a file whose appended segments would make it larger than
// compactRatio × the state's own snapshot is written whole instead.
const compactRatio = 2

// WriteKind says how a Save wrote a snapshot.
type WriteKind int

const (
	// Unchanged: the file already held the state; nothing was written.
	Unchanged WriteKind = iota
	// Appended: a segment of the new positions was appended.
	Appended
	// Created: there was no file to append to (none, or one made for
	// another model, context, KV type or format, or a damaged one), so
	// it was written whole.
	Created
	// Compacted: appending would have left the file more than twice the
	// state's own snapshot (many edits), or over the budget, or the state
	// shares no token with the file's: it was written whole.
	Compacted
)

var writeKindNames = [...]string{Unchanged: "unchanged", Appended: "appended", Created: "created", Compacted: "compacted"}

func (k WriteKind) String() string { return enum.Name(k, "WriteKind", writeKindNames[:]) }

// Written is what one Save did.
type Written struct {
	Kind  WriteKind
	Bytes int64 // bytes written
	Size  int64 // the file's size after
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
	s := &Store{dir: dir, budget: budgetOf(budget), known: map[string]known{}}
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

// Save writes seq's snapshot under key and returns the size of the file
// now holding it. A file that already holds an earlier state of the same
// conversation (the same model, context and KV type) is appended to: a
// segment of the positions after the longest common prefix of its tokens
// and seq's, that is only the new tokens after a follow-up. Otherwise, or
// when appending would leave the file over twice the state's own snapshot
// (or over the budget), it is written whole to a temporary file and
// renamed over the old one. Either way a reader — in this process or
// another — sees the old state or the new one, never a mix: an append
// only adds a segment, and a torn one reads as the state before it (the
// next Save cuts it off).
//
// Then the least recently used other snapshots are deleted until the
// folder fits the budget. A snapshot larger than the whole budget is not
// written (ErrTooLarge). seq must not be used by another goroutine during
// the call.
func (s *Store) Save(key string, seq *engine.Sequence) (int64, error) {
	w, err := s.Put(key, seq)
	return w.Size, err
}

// Put is Save that also says how it wrote the snapshot and how many
// bytes that took.
func (s *Store) Put(key string, seq *engine.Sequence) (Written, error) {
	if err := checkKey(key); err != nil {
		return Written{}, err
	}
	fresh := seq.SnapshotSize()
	budget := s.Budget()
	if budget > 0 && fresh > budget {
		return Written{}, fmt.Errorf("%w: %s needs %d bytes, the budget is %d", ErrTooLarge, key, fresh, budget)
	}
	// The folder may have been removed (a person clearing caches by hand).
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return Written{}, fmt.Errorf("kvcache: save %s: %w", key, err)
	}
	mu := s.keyLock(key)
	mu.Lock()
	defer mu.Unlock()
	kind := Created
	if canLock {
		w, err := s.tryAppend(key, seq, fresh, budget)
		if err != nil {
			return Written{}, fmt.Errorf("kvcache: save %s: %w", key, err)
		}
		if w.Kind == Unchanged || w.Kind == Appended {
			s.saved(key)
			return w, nil
		}
		kind = w.Kind
	}
	if err := s.rewrite(key, seq); err != nil {
		return Written{}, fmt.Errorf("kvcache: save %s: %w", key, err)
	}
	s.saved(key)
	return Written{Kind: kind, Bytes: fresh, Size: fresh}, nil
}

// keyLock is the mutex that serialises Saves of key.
func (s *Store) keyLock(key string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(key))
	return &s.saving[h.Sum32()%uint32(len(s.saving))]
}

// saved ends a successful Save: it stamps the file as just used and
// evicts others down to the budget.
func (s *Store) saved(key string) {
	// Stamp the time from the same clock Load touches files with: the
	// kernel's own timestamps are coarse (a few ms) and could make a file
	// saved just after a load look older than it.
	now := time.Now()
	_ = os.Chtimes(s.path(key), now, now)
	s.mu.Lock()
	defer s.mu.Unlock()
	// The snapshot is saved; failing to evict others leaves the folder
	// over budget until the next Save, which tries again.
	_ = s.evict(key)
}

// tryAppend brings the file under key up to seq's state by appending a
// segment, if the file holds an earlier state of it. Its Kind is Created
// or Compacted (and nothing written) when the file must be written whole
// instead. An error means an append failed half way; the file still
// holds its old state.
//
// The file is locked (flock) while it is read and appended to, so that
// two processes never append to it at once: each decides what to append
// from what the file holds, and the segment would be wrong after the
// other's.
func (s *Store) tryAppend(key string, seq *engine.Sequence, fresh, budget int64) (Written, error) {
	path := s.path(key)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return Written{Kind: Created}, nil
	}
	defer f.Close() // and unlocks it
	if lockWait(f) != nil {
		return Written{Kind: Created}, nil
	}
	st, err := f.Stat()
	if err != nil {
		return Written{Kind: Created}, nil
	}
	// Renamed over meanwhile by another process's Save, or deleted.
	if cur, err := os.Stat(path); err != nil || !os.SameFile(st, cur) {
		return Written{Kind: Created}, nil
	}
	ix, err := engine.ScanSnapshot(f, st.Size(), engine.ScanOptions{From: s.knownIndex(key, st), VerifyLast: true})
	if err != nil || ix.SnapshotInfo != seq.SnapshotInfo() {
		// Another model, context, KV type or format, damaged, or
		// unreadable: replace it.
		s.forget(key)
		return Written{Kind: Created}, nil
	}
	toks := seq.Tokens()
	p := engine.CommonPrefix(ix.Tokens, toks)
	if p == len(ix.Tokens) && p == len(toks) {
		same, err := sameLogits(f, ix, seq.Logits())
		if err != nil {
			return Written{Kind: Created}, nil
		}
		if same {
			if ix.Tail > 0 {
				if err := f.Truncate(ix.End); err == nil && f.Sync() == nil {
					ix.Tail = 0
				}
			}
			s.remember(key, f, ix)
			return Written{Kind: Unchanged, Size: ix.End + ix.Tail}, nil
		}
	}
	seg := seq.SnapshotSegmentSize(p, ix)
	if p == 0 || ix.End+seg > compactRatio*fresh || (budget > 0 && ix.End+seg > budget) {
		return Written{Kind: Compacted}, nil
	}
	if ix.Tail > 0 {
		// A torn append (a process killed while writing): cut it off so
		// the new segment follows the last whole one.
		if err := f.Truncate(ix.End); err != nil {
			return Written{Kind: Created}, nil
		}
	}
	s.forget(key) // until the file is known again
	if err := seq.WriteSnapshotSegment(io.NewOffsetWriter(f, ix.End), p, ix); err != nil {
		// Best effort: a half-written segment is a torn tail, which
		// readers drop anyway and the next Save cuts off.
		_ = f.Truncate(ix.End)
		return Written{}, err
	}
	if err := f.Sync(); err != nil {
		_ = f.Truncate(ix.End)
		return Written{}, err
	}
	end := ix.End + seg
	if nix, err := engine.ScanSnapshot(f, end, engine.ScanOptions{From: ix}); err == nil && nix.End == end {
		s.remember(key, f, nix)
	}
	return Written{Kind: Appended, Bytes: seg, Size: end}, nil
}

// sameLogits reports whether the state's logits in the file are logits,
// bit for bit.
func sameLogits(f *os.File, ix *engine.SnapshotIndex, logits []float32) (bool, error) {
	b := make([]byte, 4*len(logits))
	if _, err := f.ReadAt(b, ix.LogitsOffset()); err != nil {
		return false, err
	}
	for i, v := range logits {
		if binary.LittleEndian.Uint32(b[4*i:]) != math.Float32bits(v) {
			return false, nil
		}
	}
	return true, nil
}

// rewrite writes seq's snapshot whole to a temporary file, syncs it and
// renames it over key's file.
func (s *Store) rewrite(key string, seq *engine.Sequence) error {
	f, err := os.CreateTemp(s.dir, tmpPrefix+key+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	closed := false
	fail := func(err error) error {
		if !closed {
			f.Close()
		}
		os.Remove(tmp)
		return err
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
	var ix *engine.SnapshotIndex
	if canLock {
		// What the file holds, for the next Save to append to.
		ix, _ = engine.ScanSnapshot(f, seq.SnapshotSize(), engine.ScanOptions{})
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
	delete(s.known, key)
	if ix != nil && !closed {
		if fi, err := f.Stat(); err == nil {
			s.rememberLocked(key, fi, ix)
		}
	}
	if !closed {
		closed = true
		if err := f.Close(); err != nil {
			return err
		}
	}
	atomicfile.SyncDir(s.dir)
	return nil
}

// knownIndex is the index this process last saw of key's file, if that
// is still the file fi.
func (s *Store) knownIndex(key string, fi os.FileInfo) *engine.SnapshotIndex {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.known[key]
	if !ok || !os.SameFile(k.fi, fi) {
		return nil
	}
	return k.ix
}

// remember records ix as what key's open file f holds.
func (s *Store) remember(key string, f *os.File, ix *engine.SnapshotIndex) {
	fi, err := f.Stat()
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rememberLocked(key, fi, ix)
}

func (s *Store) rememberLocked(key string, fi os.FileInfo, ix *engine.SnapshotIndex) {
	if _, ok := s.known[key]; !ok && len(s.known) >= maxKnown {
		for k := range s.known { // any one: an index is only a shortcut
			delete(s.known, k)
			break
		}
	}
	s.known[key] = known{fi: fi, ix: ix}
}

func (s *Store) forget(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.known, key)
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
	seq, ix, err := m.RestoreSnapshot(bufio.NewReaderSize(ctxio.Reader(ctx, f), 256<<10), opt)
	if err != nil {
		if errors.Is(err, engine.ErrSnapshotCorrupt) || errors.Is(err, engine.ErrSnapshotMismatch) {
			s.discard(key, path, f)
			return nil, fmt.Errorf("%w: %s: %w", ErrDiscarded, key, err)
		}
		return nil, fmt.Errorf("kvcache: load %s: %w", key, err)
	}
	if canLock {
		s.loaded(key, path, f, ix)
	}
	now := time.Now()
	_ = os.Chtimes(path, now, now)
	return seq, nil
}

// discard deletes path if it is still the file f (not a newer snapshot
// renamed over it meanwhile).
func (s *Store) discard(key, path string, f *os.File) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err1 := f.Stat()
	b, err2 := os.Stat(path)
	if err1 == nil && err2 == nil && os.SameFile(a, b) {
		os.Remove(path)
		delete(s.known, key)
	}
}

// loaded records the index of a file Load read, unless the file is no
// longer key's or this process already knows more of it (a Save that
// appended while the file was read).
func (s *Store) loaded(key, path string, f *os.File, ix *engine.SnapshotIndex) {
	fi, err := f.Stat()
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, err := os.Stat(path); err != nil || !os.SameFile(fi, cur) {
		return
	}
	if k, ok := s.known[key]; ok && os.SameFile(k.fi, fi) && k.ix.End >= ix.End {
		return
	}
	s.rememberLocked(key, fi, ix)
}

// Stat describes the snapshot under key, reading only its header and its
// segments' token ids (nothing when this process knows the file as it is).
func (s *Store) Stat(key string) (Entry, bool) {
	e, _, ok := s.stat(key, false)
	return e, ok
}

// StatTokens is Stat with the token ids the snapshot holds (nil when it
// cannot be read), so that a caller can tell how much of a prompt it
// would serve without loading it.
func (s *Store) StatTokens(key string) (Entry, []int32, bool) {
	return s.stat(key, true)
}

func (s *Store) stat(key string, withTokens bool) (Entry, []int32, bool) {
	if checkKey(key) != nil {
		return Entry{}, nil, false
	}
	f, err := os.Open(s.path(key))
	if err != nil {
		return Entry{}, nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return Entry{}, nil, false
	}
	e := Entry{Key: key, Bytes: st.Size(), Modified: st.ModTime()}
	ix := s.knownIndex(key, st)
	if ix == nil || ix.End+ix.Tail != st.Size() {
		ix, err = engine.ScanSnapshot(f, st.Size(), engine.ScanOptions{})
	}
	var ids []int32
	if err == nil {
		e.Tokens, e.Identity = len(ix.Tokens), ix.Identity
		if withTokens {
			ids = slices.Clone(ix.Tokens)
		}
	} else if info, err := engine.ReadSnapshotInfo(io.NewSectionReader(f, 0, st.Size())); err == nil {
		// A damaged body is found when the file is read (and then
		// deleted); until then the header says what it is for.
		e.Identity = info.Identity
	}
	return e, ids, true
}

// Delete removes the snapshot under key; a missing one is not an error.
func (s *Store) Delete(key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.known, key)
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
	clear(s.known)
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
		delete(s.known, strings.TrimSuffix(f.name, ext))
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
