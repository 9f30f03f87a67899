package session

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/kvcache"
	"github.com/churon/churon/engine"
)

// DiskCache keeps conversations' KV caches on disk, so that an evicted
// cache, or one from before a restart, is read back instead of
// re-processing the history. *kvcache.Store implements it (see
// app/kvcache for the file format and its checks); the manager never
// trusts a snapshot it cannot load: Load deletes a file that does not
// match the model or is damaged and says why.
type DiskCache interface {
	// Save writes seq's snapshot under key (atomically) and returns its
	// size. The sequence is only read.
	Save(key string, seq *engine.Sequence) (int64, error)
	// Load reads key's snapshot into a new sequence made by m with opt.
	// A missing snapshot is an error wrapping kvcache.ErrNotFound.
	Load(ctx context.Context, key string, m *engine.Model, opt engine.SequenceOptions) (*engine.Sequence, error)
	// Stat tells what the snapshot under key holds, without reading it;
	// StatTokens also returns its token ids.
	Stat(key string) (kvcache.Entry, bool)
	StatTokens(key string) (kvcache.Entry, []int32, bool)
	Delete(key string) error
	// Keys lists the snapshots on disk, so the manager can delete those
	// of conversations that no longer exist.
	Keys() ([]string, error)
	Usage() (files int, bytes int64)
	Clear() error
	// SetBudget bounds the snapshots' bytes on disk, evicting the least
	// recently used beyond it (0: the store's default); Budget reads it.
	SetBudget(bytes int64)
	Budget() int64
}

var _ DiskCache = (*kvcache.Store)(nil)

// OpenDiskCache opens the KV snapshot folder (kvcache.DefaultDir, under
// the cache folder) with the given disk budget (0: kvcache's default).
func OpenDiskCache(budget int64) (*kvcache.Store, error) {
	s, err := kvcache.Open(kvcache.DefaultDir(), budget)
	if err != nil {
		return nil, fmt.Errorf("session: KV cache folder: %w", err)
	}
	return s, nil
}

// diskKey names a conversation's snapshot, or an API slot's (below 0).
func diskKey(conv int64) string {
	if conv < 0 {
		return "api-" + strconv.FormatInt(-conv-1, 10)
	}
	return "conv-" + strconv.FormatInt(conv, 10)
}

// convOfKey is diskKey's inverse; ok is false for keys it did not make.
func convOfKey(key string) (conv int64, ok bool) {
	rest, found := strings.CutPrefix(key, "conv-")
	if !found {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil && diskKey(id) == key
}

// DefaultTrashKeep is how long a deleted conversation stays in the trash
// (where Undo can bring it back) before it is removed for good.
const DefaultTrashKeep = 30 * 24 * time.Hour

// tidy runs once as the manager starts: it empties the trash of
// conversations deleted longer ago than Options.TrashKeep, then deletes
// the snapshots of conversations that no longer exist — nothing would
// ever read them, and they would hold disk space until the disk budget
// evicted them. A trashed conversation keeps its snapshot, so an undone
// delete resumes as fast as before.
func (m *Manager) tidy() {
	ctx := context.Background()
	if keep := m.opt.TrashKeep; keep >= 0 {
		if keep == 0 {
			keep = DefaultTrashKeep
		}
		n, err := m.st.PurgeDeleted(ctx, time.Now().Add(-keep))
		if err != nil {
			m.log.Warn("session: emptying the trash", "err", err)
		} else if n > 0 {
			m.log.Info("session: removed conversations deleted long ago", "conversations", n, "after", keep)
		}
	}
	if m.opt.Disk == nil {
		return
	}
	keys, err := m.opt.Disk.Keys()
	if err != nil {
		m.log.Warn("session: listing KV snapshots", "err", err)
		return
	}
	if len(keys) == 0 {
		return
	}
	// One query for the ids of every conversation there is (live and
	// trashed), not one per snapshot: this runs before the window opens.
	exists, err := m.st.ConversationIDs(ctx)
	if err != nil {
		m.log.Warn("session: listing conversations", "err", err)
		return
	}
	for _, k := range keys {
		if id, ok := convOfKey(k); !ok || exists[id] {
			continue
		}
		if err := m.opt.Disk.Delete(k); err != nil {
			m.log.Warn("session: deleting the KV snapshot of a removed conversation", "key", k, "err", err)
		}
	}
}

// settingKVBudget is the store setting that keeps the person's RAM budget
// (bytes, decimal); absent means DefaultKVBudget.
const settingKVBudget = "session.kv_budget"

// KVBudget returns the memory budget of idle KV caches and whether it was
// set by the person (false: DefaultKVBudget).
// It never waits for the scheduler (which may be waiting on the disk).
func (m *Manager) KVBudget() (int64, bool) {
	m.budgetMu.Lock()
	defer m.budgetMu.Unlock()
	return m.budgetView.bytes, m.budgetView.set
}

// publishBudget makes the scheduler's budget readable by KVBudget. It
// runs on the scheduling goroutine (or in New).
func (m *Manager) publishBudget() {
	m.budgetMu.Lock()
	m.budgetView.bytes, m.budgetView.set = m.s.budget, m.s.budgetSet
	m.budgetMu.Unlock()
}

// SetKVBudget sets the memory budget of idle KV caches (0: automatic,
// DefaultKVBudget), stores it for the next start and evicts at once what
// no longer fits (spilled to disk when a disk cache is set).
func (m *Manager) SetKVBudget(bytes int64) error {
	if bytes < 0 {
		return fmt.Errorf("session: KV budget %d is negative", bytes)
	}
	return m.call(func() error {
		ctx := context.Background()
		var err error
		if bytes == 0 {
			m.s.budget, m.s.budgetSet = api.DefaultKVBudget(), false
			err = m.st.DeleteSetting(ctx, settingKVBudget)
		} else {
			m.s.budget, m.s.budgetSet = bytes, true
			err = m.st.SetSetting(ctx, settingKVBudget, strconv.FormatInt(bytes, 10))
		}
		m.publishBudget()
		m.evict(nil)
		if err != nil {
			return fmt.Errorf("session: save KV budget: %w", err)
		}
		return nil
	})
}

// settingKVDiskBudget is the store setting that keeps the person's disk
// budget for KV snapshots (bytes, decimal); absent means the disk cache's
// default.
const settingKVDiskBudget = "session.kv_disk_budget"

// applyDiskBudget gives the disk cache the budget the person chose, once
// at start.
func (m *Manager) applyDiskBudget() {
	if m.opt.Disk == nil {
		return
	}
	v, ok, err := m.st.Setting(context.Background(), settingKVDiskBudget)
	if err != nil || !ok {
		return
	}
	if b, err := strconv.ParseInt(v, 10, 64); err == nil && b > 0 {
		m.opt.Disk.SetBudget(b)
	}
}

// KVDiskBudget returns the disk budget of KV snapshots and whether the
// person set it (false: the disk cache's default); zero without a disk
// cache.
func (m *Manager) KVDiskBudget() (int64, bool) {
	if m.opt.Disk == nil {
		return 0, false
	}
	_, ok, _ := m.st.Setting(context.Background(), settingKVDiskBudget)
	return m.opt.Disk.Budget(), ok
}

// SetKVDiskBudget sets the disk budget of KV snapshots (0: the disk
// cache's default), stores it for the next start and deletes at once the
// least recently used snapshots beyond it.
func (m *Manager) SetKVDiskBudget(bytes int64) error {
	if bytes < 0 {
		return fmt.Errorf("session: KV disk budget %d is negative", bytes)
	}
	if m.opt.Disk == nil {
		return nil
	}
	ctx := context.Background()
	var err error
	if bytes == 0 {
		err = m.st.DeleteSetting(ctx, settingKVDiskBudget)
	} else {
		err = m.st.SetSetting(ctx, settingKVDiskBudget, strconv.FormatInt(bytes, 10))
	}
	m.opt.Disk.SetBudget(bytes)
	if err != nil {
		return fmt.Errorf("session: save KV disk budget: %w", err)
	}
	return nil
}

// KVDiskUsage is what the KV snapshots take on disk (zeros without a disk
// cache).
func (m *Manager) KVDiskUsage() (files int, bytes int64) {
	if m.opt.Disk == nil {
		return 0, 0
	}
	return m.opt.Disk.Usage()
}

// ClearKVDisk deletes every KV snapshot. Caches in memory stay (and are
// written again after their next answer).
func (m *Manager) ClearKVDisk() error {
	if m.opt.Disk == nil {
		return nil
	}
	return m.call(func() error {
		if err := m.opt.Disk.Clear(); err != nil {
			return fmt.Errorf("session: clear KV snapshots: %w", err)
		}
		for id, cs := range m.s.convs {
			if cs.seq != nil {
				cs.dirty, cs.flushed = true, false
			}
			m.emitCache(id)
		}
		return nil
	})
}

// CacheState says where a conversation's KV cache is.
func (m *Manager) CacheState(conv int64) (api.CacheState, error) {
	var st api.CacheState
	err := m.call(func() error {
		st = m.cacheState(conv)
		return nil
	})
	return st, err
}

// emitCache says where conv's cache is now; an API slot's is no
// conversation's and is not said.
func (m *Manager) emitCache(conv int64) {
	if conv > 0 {
		m.emit(m.cacheState(conv))
	}
}

// cacheState runs on the scheduling goroutine.
func (m *Manager) cacheState(conv int64) api.CacheState {
	st := api.CacheState{Conv: conv, Where: api.CacheNone}
	cs := m.s.convs[conv]
	switch {
	case cs != nil && cs.seq != nil:
		st.Where, st.Tokens, st.Bytes = api.CacheRAM, cs.seq.Len(), cs.seq.KVBytes()
	case cs != nil && cs.held:
		st.Where, st.Tokens, st.Bytes = api.CacheRAM, cs.heldTokens, cs.heldBytes
	}
	if m.opt.Disk != nil && (cs == nil || !cs.deleted) {
		if e, ok := m.opt.Disk.Stat(diskKey(conv)); ok && m.fitsModel(e.Identity) {
			st.DiskTokens = e.Tokens
			if st.Where == api.CacheNone {
				st.Where, st.Tokens, st.Bytes = api.CacheDisk, e.Tokens, e.Bytes
			}
		}
	}
	return st
}

// fitsModel reports whether a snapshot made under id can serve the
// loaded model (any model when none is loaded): one made with another
// model is not shown as the conversation's cache, since the next answer
// would discard it. (Its context length is checked when it is read.)
func (m *Manager) fitsModel(id engine.Identity) bool {
	if m.s.model == nil {
		return true
	}
	return sameModel(id, m.s.model.Identity(), m.opt.KVType)
}

// sameModel reports whether a snapshot made under id is of the model
// whose identity is mine, with the KV type kv.
func sameModel(id, mine engine.Identity, kv engine.KVType) bool {
	return id.FileSize == mine.FileSize && id.Hash == mine.Hash && id.Architecture == mine.Architecture &&
		id.Format == mine.Format && id.KVType == kv
}

// saveResult is a finished snapshot write.
type saveResult struct {
	conv  int64
	seq   *engine.Sequence
	bytes int64
	took  time.Duration
	err   error
}

// snapshot writes conv's idle cache to disk in the background, then drops
// it from memory when drop is set (an eviction). The cache is not fed
// while it is written: a job for the conversation waits (see schedule).
// Without a disk cache, or when the disk already holds these tokens, a
// drop happens at once.
func (m *Manager) snapshot(conv int64, cs *convState, drop bool) {
	if cs.seq == nil {
		return
	}
	if cs.saving { // the write in flight covers the cache as it is
		cs.drop = cs.drop || drop
		return
	}
	if m.opt.Disk == nil || cs.deleted || !cs.dirty || m.s.model == nil {
		if drop {
			cs.seq.Close() // gives an accelerator's memory back at once
			cs.seq = nil
			m.emitCache(conv)
		}
		return
	}
	cs.saving, cs.drop = true, drop
	m.s.saves++
	seq, disk := cs.seq, m.opt.Disk
	go func() {
		start := time.Now()
		n, err := disk.Save(diskKey(conv), seq)
		m.saveDone <- saveResult{conv: conv, seq: seq, bytes: n, took: time.Since(start), err: err}
	}()
}

// saved ends a snapshot write (on the scheduling goroutine).
func (m *Manager) saved(r saveResult) {
	m.s.saves--
	if m.s.savedCh != nil { // requests waiting for a slot's snapshot
		close(m.s.savedCh)
		m.s.savedCh = nil
	}
	cs := m.conv(r.conv)
	cs.saving = false
	if r.err != nil {
		m.log.Warn("session: could not write a KV cache snapshot; the conversation will be processed again if its cache is dropped",
			"conversation", r.conv, "err", r.err)
	} else {
		if cs.seq == r.seq {
			cs.dirty = false
		}
		m.log.Debug("session: KV cache snapshot written", "conversation", r.conv, "tokens", r.seq.Len(), "bytes", r.bytes, "took", r.took)
	}
	if cs.drop {
		cs.drop = false
		if cs.job == nil && cs.seq == r.seq {
			cs.seq.Close()
			cs.seq = nil
		}
	}
	m.emitCache(r.conv)
}

// flushDirty starts, in the background, the snapshot of every cache that
// holds tokens its disk snapshot lacks (a rare case: caches are written
// after every answer, so only one whose write failed, or one still being
// filled when a model change was asked for, gets here). Each cache is
// tried once: a write that fails again is not retried until the cache
// changes, so a full disk cannot hold a model change up.
func (m *Manager) flushDirty() {
	if m.opt.Disk == nil || m.s.model == nil {
		return
	}
	for id, cs := range m.s.convs {
		if cs.seq != nil && cs.dirty && !cs.deleted && !cs.saving && !cs.flushed && cs.job == nil {
			cs.flushed = true
			m.snapshot(id, cs, false)
		}
	}
}

// evict spills the least recently used idle KV caches (to disk, when
// there is a disk cache) until the rest fit in the budget; keep (the one
// just used) stays, and so do caches a queued answer is about to use.
func (m *Manager) evict(keep *convState) {
	var total int64
	for _, cs := range m.s.convs {
		if cs.seq != nil && !cs.drop {
			total += cs.seq.KVBytes()
		}
	}
	for total > m.s.budget {
		var lru *convState
		var id int64
		for cid, cs := range m.s.convs {
			if cs.seq != nil && !cs.drop && cs != keep && cs.job == nil && (lru == nil || cs.used < lru.used) {
				lru, id = cs, cid
			}
		}
		if lru == nil {
			return
		}
		total -= lru.seq.KVBytes()
		m.snapshot(id, lru, true)
	}
}

// restore reads conv's snapshot for an answer that finds no cache in
// memory. Any failure but "there is none" is logged and answered with a
// cold prefill: a snapshot can save time, never change an answer.
func (m *Manager) restore(ctx context.Context, conv int64, model *engine.Model, opt engine.SequenceOptions) (*engine.Sequence, time.Duration) {
	if m.opt.Disk == nil {
		return nil, 0
	}
	start := time.Now()
	seq, err := m.opt.Disk.Load(ctx, diskKey(conv), model, opt)
	took := time.Since(start)
	switch {
	case err == nil:
		m.log.Debug("session: KV cache restored from disk", "conversation", conv, "tokens", seq.Len(), "took", took)
		return seq, took
	case errors.Is(err, kvcache.ErrNotFound), ctx.Err() != nil:
	default:
		m.log.Warn("session: KV cache snapshot discarded; processing the conversation from the start",
			"conversation", conv, "err", err)
	}
	return nil, 0
}
