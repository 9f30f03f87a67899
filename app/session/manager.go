package session

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/engine"
)

// Options configure a Manager.
type Options struct {
	// Threads, InMemory: how models are loaded (see engine.LoadOptions).
	Threads  int
	InMemory bool
	// Device and GPULayers choose where a model's layers run besides the
	// CPU (see engine.LoadOptions): "" tries the registered accelerators,
	// "cpu" uses none; GPULayers 0 offloads as many layers as fit.
	Device    string
	GPULayers int
	// KVType is how conversations' KV caches store keys and values: F16
	// by default, as llama.cpp does.
	KVType engine.KVType
	// CommitEvery is how often a streaming answer is saved; 0 means once a
	// second. The answer is also saved when it ends.
	CommitEvery time.Duration
	// KVBudget bounds the memory of the KV caches kept for idle
	// conversations, so that a follow-up does not re-read the history;
	// least recently used caches are spilled to Disk (or dropped, without
	// one) first. 0 means the budget stored by SetKVBudget, else
	// DefaultKVBudget().
	KVBudget int64
	// Disk, when set, keeps KV caches on disk: a snapshot is written after
	// every answer (in the background), when a cache is evicted, and when
	// the model is unloaded or the manager closes; a conversation without
	// a cache in memory reads its snapshot back before its next answer.
	// The manager does not close it.
	Disk DiskCache
	// Logger receives what concerns the program rather than the person:
	// snapshots discarded or not written. nil means slog.Default().
	Logger *slog.Logger
	// TrashKeep is how long a deleted conversation stays in the trash
	// before New removes it for good; 0 means DefaultTrashKeep, negative
	// keeps the trash forever.
	TrashKeep time.Duration
	// Defaults are the settings of new conversations; nil means
	// DefaultSettings().
	Defaults *api.Settings

	// MaxAnswers caps the answers generated at once (the batch); the
	// rest wait their turn. 0 means the app setting SettingMaxAnswers,
	// else DefaultMaxAnswers for the loaded model.
	MaxAnswers int
	// Prefill is the prompt tokens a batch step feeds while other answers
	// decode (BatchOptions.Prefill); 0 chooses it from the step's cost.
	Prefill int
	// OnStep, for measurements, sees every batch step (BatchOptions.OnStep).
	OnStep func(StepInfo)
	// Remote finds the connections of remote models (app/remote): with
	// it, LoadModel takes a RemotePath; nil refuses them (ErrNoRemotes).
	Remote api.RemoteEngines

	// tokenHook, for tests, runs on the batch's goroutine after each
	// generated token with the number generated so far.
	tokenHook func(conv int64, generated int)
	// joinHook, for tests, runs on the answer's goroutine once the
	// answer has joined its model's batch: it is in the batch's next step.
	joinHook func(conv int64)
}

// Manager runs conversations against one loaded model. Its methods are
// safe to call from any goroutine (the UI's included): each is a command
// that one scheduling goroutine carries out in the order received, and each
// returns as soon as the command is accepted or refused — none waits for a
// model to load or an answer to finish. What happens afterwards arrives on
// Events.
//
// Answers run together, in one batch (see Batch and the package
// documentation's Scheduling), up to a cap; beyond it an answer waits its
// turn (a Queued event says so), and the person can meanwhile read,
// switch conversations, start a new one or type. A conversation generates
// at most one answer at a time: Send, Regenerate and Edit on a
// conversation that is generating or waiting are refused with ErrBusy.
type Manager struct {
	st       *store.Store
	opt      Options
	defaults api.Settings
	box      *outbox

	cmds     chan func()
	jobDone  chan jobResult
	loadDone chan loadResult
	saveDone chan saveResult
	log      *slog.Logger
	quit     chan struct{} // closed when the scheduler has exited
	closing  sync.Once

	set *settings // the app's settings (records.go)

	// budgetView is the KV budget as KVBudget reports it, without a trip
	// to the scheduler.
	budgetMu   sync.Mutex
	budgetView struct {
		bytes int64
		set   bool
	}

	liveMu sync.Mutex
	live   map[int64]*liveAnswer // answer message id → text so far
	// cuts: conversations whose regenerated answer is not stored yet;
	// Messages shows them up to the job's parent, as they will read.
	cuts map[int64]*job

	// Owned by the scheduling goroutine.
	s sched
}

// sched is the scheduler's state; only the scheduling goroutine touches it.
type sched struct {
	model   *engine.Model
	remote  *remoteModel // a remote model, loaded instead of model
	batch   *Batch       // the model's, while it is loaded
	autoCap int          // DefaultMaxAnswers for the model
	loading *loadJob
	want    *modelRequest // a load or unload waiting for the running answers to stop
	convs   map[int64]*convState
	queue   []*job
	active  []*job // started: being prepared, in the batch or being saved
	// exclusive counts those who hold the machine (Exclusive): no answer
	// starts and the batch stands still meanwhile.
	exclusive int
	closing   bool
	clock     int64
	saves     int           // snapshot writes in flight
	savedCh   chan struct{} // closed when the next one ends (savedSignal)

	budget    int64 // RAM budget of idle KV caches
	budgetSet bool  // budget chosen by the person, not DefaultKVBudget
}

type convState struct {
	seq     *engine.Sequence // nil while the running job holds it, or when dropped
	used    int64
	job     *job // queued or running
	deleted bool

	// held: the running job has the cache (heldTokens, heldBytes when it
	// took it), for CacheState.
	held       bool
	heldTokens int
	heldBytes  int64
	// dirty: seq holds tokens its disk snapshot lacks. saving: a snapshot
	// of seq is being written, so seq must not be fed (a job waits).
	// drop: free seq once that write ends (it was evicted).
	dirty, saving, drop bool
	// flushed: flushDirty has started a write of the cache as it is (it
	// is tried once before a model change, not again until it changes).
	flushed bool
}

type job struct {
	conv     int64
	settings api.Settings
	ctx      context.Context
	cancel   context.CancelFunc
	notified int // last queue position announced
	// source is who asked (SourceWindow, or an API client): beyond the
	// cap, the next answer to start is the oldest of the source with the
	// fewest answers running, so one client's flood cannot starve the
	// window.
	source string
	// sink, for an answer an API request asked for, receives its text and
	// end (nil for the window's).
	sink *sink
	// req is an API request's answer that no conversation stores (its
	// cache is an API slot's); nil for a conversation's.
	req *request
	// logprobs, topLogprobs: an API request's ask (GenerateOptions).
	logprobs    bool
	topLogprobs int
	// parent: the answer follows this message, as a new version of what
	// follows it now (Regenerate); 0: after the branch shown.
	parent int64
}

type jobResult struct {
	job    *job
	seq    *engine.Sequence // nil when the cache should not be kept
	events []api.Event      // Stats and Done, sent once the conversation is idle
}

type modelRequest struct{ path string } // "" = unload

type loadJob struct {
	path string
	// restore is the model that was loaded before this one, loaded again
	// should this load fail after Check passed (out of memory, a device
	// that faults): a failed change never leaves the person with none.
	restore string
	ctx     context.Context
	cancel  context.CancelFunc
}

type loadResult struct {
	job    *loadJob
	model  *engine.Model
	remote *remoteModel
	err    error
}

// New starts a manager over the store. Close it when done.
func New(st *store.Store, opt Options) *Manager {
	if opt.CommitEvery <= 0 {
		opt.CommitEvery = time.Second
	}
	defaults := DefaultSettings()
	if opt.Defaults != nil {
		defaults = *opt.Defaults
	}
	m := &Manager{
		st: st, opt: opt, defaults: defaults, box: newOutbox(),
		cmds: make(chan func()), jobDone: make(chan jobResult), loadDone: make(chan loadResult),
		saveDone: make(chan saveResult), log: opt.Logger,
		quit: make(chan struct{}), live: map[int64]*liveAnswer{}, cuts: map[int64]*job{},
		s: sched{convs: map[int64]*convState{}, budget: opt.KVBudget, budgetSet: opt.KVBudget > 0},
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	m.openSettings()
	if m.s.budget <= 0 {
		m.s.budget = api.DefaultKVBudget()
		if v, ok, err := st.Setting(context.Background(), settingKVBudget); err == nil && ok {
			if b, err := strconv.ParseInt(v, 10, 64); err == nil && b > 0 {
				m.s.budget, m.s.budgetSet = b, true
			}
		}
	}
	m.publishBudget()
	m.applyDiskBudget()
	m.tidy()
	go m.loop()
	return m
}

// Events delivers what happens, in order. The consumer must keep draining
// it until it is closed (after Close): events are never dropped, and while
// the consumer lags, an answer's Token events are merged into larger ones
// (see outbox.go for the policy).
func (m *Manager) Events() <-chan api.Event { return m.box.out }

// Close cancels every answer (each is saved as cancelled), writes the KV
// caches that are not on disk yet (with a disk cache), unloads the model
// and stops the manager. Events is closed after the last event.
func (m *Manager) Close() error {
	m.closing.Do(func() {
		_ = m.call(func() error {
			m.s.closing = true
			m.cancelAll()
			if m.s.loading != nil {
				m.s.loading.cancel()
			}
			return nil
		})
		<-m.quit
		m.closeSettings()
		m.box.close()
	})
	return nil
}

func (m *Manager) emit(ev api.Event) { m.box.push(ev) }

// call runs f on the scheduling goroutine and returns its error.
func (m *Manager) call(f func() error) error {
	done := make(chan error, 1)
	select {
	case m.cmds <- func() { done <- f() }:
		return <-done
	case <-m.quit:
		return api.ErrClosed
	}
}

func (m *Manager) loop() {
	defer close(m.quit)
	for {
		select {
		case f := <-m.cmds:
			f()
		case r := <-m.jobDone:
			m.finished(r)
		case r := <-m.loadDone:
			m.loaded(r)
		case r := <-m.saveDone:
			m.saved(r)
		}
		m.schedule()
		if m.s.closing && len(m.s.active) == 0 && m.s.loading == nil && m.s.saves == 0 {
			m.dropModel()
			return
		}
	}
}

// schedule starts what can start: a pending model change once no answer
// runs (and no snapshot is being written with the old model), else the
// queued answers, fairly, while fewer than the cap run, each once its
// conversation's snapshot, if one is being written, is done.
func (m *Manager) schedule() {
	s := &m.s
	idle := len(s.active) == 0
	if idle && s.loading == nil && (s.want != nil || s.closing) {
		m.flushDirty() // the model is about to close: its caches go to disk first
	}
	if idle && s.loading == nil && s.want != nil && s.saves == 0 {
		req := s.want
		s.want = nil
		prev := ""
		if s.model != nil {
			prev = s.model.Info().Path
		}
		m.dropModel()
		switch {
		case req.path == "" || s.closing:
		case api.IsRemote(req.path):
			m.startRemote(req.path)
		default:
			m.startLoad(req.path, prev)
		}
	}
	if idle && s.loading == nil && s.model == nil && s.remote == nil {
		m.failQueued(api.ErrNoModel)
	}
	for (s.model != nil || s.remote != nil) && s.want == nil && s.exclusive == 0 && len(s.active) < m.maxAnswers() {
		i := m.nextJob()
		if i < 0 {
			break
		}
		j := s.queue[i]
		s.queue = append(s.queue[:i], s.queue[i+1:]...)
		m.start(j)
	}
	ahead := 0
	if len(s.active) > 0 || s.exclusive > 0 {
		ahead = 1
	}
	for i, j := range s.queue {
		if pos := ahead + i; j.notified != pos {
			j.notified = pos
			if j.conv > 0 { // an API slot's answer is no conversation's
				m.emit(api.Queued{Conv: j.conv, Position: pos})
			}
		}
	}
}

// answering reports whether conversation id has an answer queued or
// running. Scheduling goroutine only.
func (m *Manager) answering(id int64) bool {
	cs := m.s.convs[id]
	return cs != nil && cs.job != nil
}

func (m *Manager) conv(id int64) *convState {
	cs := m.s.convs[id]
	if cs == nil {
		cs = &convState{}
		m.s.convs[id] = cs
	}
	return cs
}

// The manager is the service front ends hold (app/api/session).
var _ api.Service = (*Manager)(nil)
