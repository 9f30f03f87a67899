package session

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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
	Defaults *Settings

	// tokenHook, for tests, runs on the generating goroutine after each
	// generated token with the number generated so far.
	tokenHook func(conv int64, generated int)
}

// Manager runs conversations against one loaded model. Its methods are
// safe to call from any goroutine (the UI's included): each is a command
// that one scheduling goroutine carries out in the order received, and each
// returns as soon as the command is accepted or refused — none waits for a
// model to load or an answer to finish. What happens afterwards arrives on
// Events.
//
// Generations run one at a time (they saturate the CPU; two at once would
// each run at half speed): an answer asked for while another is generating
// waits its turn (a Queued event says so), and the person can meanwhile
// read, switch conversations, start a new one or type. A conversation
// generates at most one answer at a time: Send, Regenerate and Edit on a
// conversation that is generating or waiting are refused with ErrBusy.
type Manager struct {
	st       *store.Store
	opt      Options
	defaults Settings
	box      *outbox

	cmds     chan func()
	jobDone  chan jobResult
	loadDone chan loadResult
	saveDone chan saveResult
	log      *slog.Logger
	quit     chan struct{} // closed when the scheduler has exited
	closing  sync.Once

	liveMu sync.Mutex
	live   map[int64]*liveAnswer // answer message id → text so far

	// Owned by the scheduling goroutine.
	s sched
}

// sched is the scheduler's state; only the scheduling goroutine touches it.
type sched struct {
	model   *engine.Model
	loading *loadJob
	want    *modelRequest // a load or unload waiting for the running answer to stop
	convs   map[int64]*convState
	queue   []*job
	running *job
	closing bool
	clock   int64
	saves   int // snapshot writes in flight

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
}

type job struct {
	conv     int64
	settings Settings
	ctx      context.Context
	cancel   context.CancelFunc
	notified int // last queue position announced
}

type jobResult struct {
	job    *job
	seq    *engine.Sequence // nil when the cache should not be kept
	events []Event          // Stats and Done, sent once the conversation is idle
}

type modelRequest struct{ path string } // "" = unload

type loadJob struct {
	path   string
	ctx    context.Context
	cancel context.CancelFunc
}

type loadResult struct {
	job   *loadJob
	model *engine.Model
	err   error
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
		quit: make(chan struct{}), live: map[int64]*liveAnswer{},
		s: sched{convs: map[int64]*convState{}, budget: opt.KVBudget, budgetSet: opt.KVBudget > 0},
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	if m.s.budget <= 0 {
		m.s.budget = DefaultKVBudget()
		if v, ok, err := st.Setting(context.Background(), settingKVBudget); err == nil && ok {
			if b, err := strconv.ParseInt(v, 10, 64); err == nil && b > 0 {
				m.s.budget, m.s.budgetSet = b, true
			}
		}
	}
	m.applyDiskBudget()
	m.tidy()
	go m.loop()
	return m
}

// Events delivers what happens, in order. The consumer must keep draining
// it until it is closed (after Close): events are never dropped, and while
// the consumer lags, an answer's Token events are merged into larger ones
// (see outbox.go for the policy).
func (m *Manager) Events() <-chan Event { return m.box.out }

// Store is the database the manager writes to.
func (m *Manager) Store() *store.Store { return m.st }

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
		m.box.close()
	})
	return nil
}

func (m *Manager) emit(ev Event) { m.box.push(ev) }

// call runs f on the scheduling goroutine and returns its error.
func (m *Manager) call(f func() error) error {
	done := make(chan error, 1)
	select {
	case m.cmds <- func() { done <- f() }:
		return <-done
	case <-m.quit:
		return ErrClosed
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
		if m.s.closing && m.s.running == nil && m.s.loading == nil && m.s.saves == 0 {
			m.dropModel()
			return
		}
	}
}

// schedule starts what can start: a pending model change once nothing
// runs (and no snapshot is being written with the old model), else the
// next queued answer once its conversation's snapshot, if one is being
// written, is done.
func (m *Manager) schedule() {
	s := &m.s
	if s.running == nil && s.loading == nil && s.want != nil && s.saves == 0 {
		req := s.want
		s.want = nil
		m.dropModel()
		if req.path != "" && !s.closing {
			m.startLoad(req.path)
		}
	}
	if s.running == nil && s.loading == nil && s.model == nil {
		m.failQueued(ErrNoModel)
	}
	if s.running == nil && s.model != nil && s.want == nil && len(s.queue) > 0 && !m.conv(s.queue[0].conv).saving {
		j := s.queue[0]
		s.queue = s.queue[1:]
		m.start(j)
	}
	ahead := 0
	if s.running != nil {
		ahead = 1
	}
	for i, j := range s.queue {
		if pos := ahead + i; j.notified != pos {
			j.notified = pos
			m.emit(Queued{Conv: j.conv, Position: pos})
		}
	}
}

func (m *Manager) conv(id int64) *convState {
	cs := m.s.convs[id]
	if cs == nil {
		cs = &convState{}
		m.s.convs[id] = cs
	}
	return cs
}

// modelComing reports whether an answer asked for now will find a model.
func (m *Manager) modelComing() bool {
	s := &m.s
	if s.want != nil {
		return s.want.path != ""
	}
	return s.model != nil || s.loading != nil
}

func (m *Manager) enqueue(conv int64, set Settings) {
	ctx, cancel := context.WithCancel(context.Background())
	j := &job{conv: conv, settings: set, ctx: ctx, cancel: cancel, notified: -1}
	m.conv(conv).job = j
	m.s.queue = append(m.s.queue, j)
}

// stop cancels a conversation's answer: the running one stops within one
// token; a waiting one ends at once with Done{cancelled}.
func (m *Manager) stop(conv int64) {
	cs := m.s.convs[conv]
	if cs == nil || cs.job == nil {
		return
	}
	j := cs.job
	j.cancel()
	if j == m.s.running {
		return
	}
	for i, q := range m.s.queue {
		if q == j {
			m.s.queue = append(m.s.queue[:i], m.s.queue[i+1:]...)
			break
		}
	}
	cs.job = nil
	m.emit(Done{Conv: conv, Reason: ReasonCancelled})
}

func (m *Manager) cancelAll() {
	if r := m.s.running; r != nil {
		r.cancel()
	}
	for len(m.s.queue) > 0 {
		m.stop(m.s.queue[0].conv)
	}
}

func (m *Manager) failQueued(err error) {
	for _, j := range m.s.queue {
		j.cancel()
		m.s.convs[j.conv].job = nil
		m.emit(Done{Conv: j.conv, Reason: ReasonError, Err: err})
	}
	m.s.queue = nil
}

func (m *Manager) start(j *job) {
	cs := m.conv(j.conv)
	m.s.running = j
	seq := cs.seq
	cs.seq = nil
	cs.held, cs.heldTokens, cs.heldBytes = seq != nil, 0, 0
	if seq != nil {
		cs.heldTokens, cs.heldBytes = seq.Len(), seq.KVBytes()
	}
	go m.generate(j, m.s.model, seq)
}

func (m *Manager) finished(r jobResult) {
	s := &m.s
	s.running = nil
	cs := m.conv(r.job.conv)
	cs.job = nil
	cs.held = false
	r.job.cancel() // release the context's resources
	for _, ev := range r.events {
		m.emit(ev)
	}
	// Kept even when a model change waits: the change writes it to disk
	// before the model closes.
	if r.seq != nil && !cs.deleted {
		s.clock++
		cs.seq, cs.used, cs.dirty = r.seq, s.clock, true
		// Written now, off the answer's path (Done is already out), so that
		// a process killed later loses at most the next answer's cache.
		m.snapshot(r.job.conv, cs, false)
	}
	m.evict(cs)
	m.emit(m.cacheState(r.job.conv))
}

func (m *Manager) startLoad(path string) {
	ctx, cancel := context.WithCancel(context.Background())
	l := &loadJob{path: path, ctx: ctx, cancel: cancel}
	m.s.loading = l
	m.emit(ModelLoading{Path: path, Progress: 0})
	go func() {
		// The model the fallback describes: set before the model reaches
		// the scheduler, so before any pass that could fail.
		var mod *engine.Model
		mod, err := loadEngine(ctx, path, engine.LoadOptions{
			Threads: m.opt.Threads, InMemory: m.opt.InMemory,
			Device: m.opt.Device, GPULayers: m.opt.GPULayers, KVType: m.opt.KVType,
			Progress: func(f float64) {
				if f > 0 { // 0 was announced when the load was started
					m.emit(ModelLoading{Path: path, Progress: f})
				}
			},
			OnFallback: func(reason error) {
				m.emit(DeviceFallback{Path: path, Err: reason})
				if mod != nil {
					m.emit(ModelLoaded{Info: mod.Info()})
				}
			},
		})
		m.loadDone <- loadResult{job: l, model: mod, err: err}
	}()
}

func (m *Manager) loaded(r loadResult) {
	s := &m.s
	s.loading = nil
	superseded := r.job.ctx.Err() != nil
	r.job.cancel()
	switch {
	case r.err != nil:
		if !superseded {
			m.emit(Error{Op: "load model", Err: r.err})
		}
		m.emit(ModelUnloaded{Path: r.job.path})
	case superseded:
		r.model.Close()
		m.emit(ModelUnloaded{Path: r.job.path})
	default:
		s.model = r.model
		m.emit(ModelLoaded{Info: r.model.Info()})
	}
}

// dropModel writes the KV caches that are not on disk yet (with a disk
// cache), then closes the model and every cache made from it. Nothing may
// be running or being written.
func (m *Manager) dropModel() {
	for id, cs := range m.s.convs {
		if cs.seq == nil {
			continue
		}
		if m.opt.Disk != nil && cs.dirty && !cs.deleted && m.s.model != nil {
			// Rare: caches are written after every answer, so only one whose
			// write failed gets here. The model is about to close, so this
			// one is written now, on this goroutine.
			if _, err := m.opt.Disk.Save(diskKey(id), cs.seq); err != nil {
				m.log.Warn("session: could not write a KV cache snapshot", "conversation", id, "err", err)
			}
		}
		cs.seq.Close()
		cs.seq, cs.dirty = nil, false
		if !m.s.closing {
			m.emit(m.cacheState(id))
		}
	}
	if m.s.model == nil {
		return
	}
	path := m.s.model.Info().Path
	if err := m.s.model.Close(); err != nil {
		m.emit(Error{Op: "unload model", Err: err})
	}
	m.s.model = nil
	m.emit(ModelUnloaded{Path: path})
}

// NewConversation creates an empty conversation with the default
// settings. An empty title is replaced by the start of the first message.
func (m *Manager) NewConversation(title string) (Conversation, error) {
	var c Conversation
	err := m.call(func() error {
		if m.s.closing {
			return ErrClosed
		}
		var err error
		c, err = m.newConversation(title, m.defaults)
		return err
	})
	return c, err
}

// newConversation stores a conversation with the given settings and says
// so. It runs on the scheduling goroutine.
func (m *Manager) newConversation(title string, set Settings) (Conversation, error) {
	c, err := m.st.CreateConversation(context.Background(), store.Conversation{
		Title: title, SystemPrompt: set.SystemPrompt, Sampler: set.encode(),
	})
	if err != nil {
		return c, fmt.Errorf("session: new conversation: %w", err)
	}
	m.emit(ConversationChanged{Conv: c.ID})
	return c, nil
}

// Send stores the person's message and queues an answer. It returns the
// stored message; the answer arrives as MessageAdded, Token…, Stats and
// Done events. It fails with ErrBusy while the conversation generates and
// ErrNoModel when no model is loaded or loading.
func (m *Manager) Send(conv int64, text string) (Message, error) {
	var msg Message
	err := m.call(func() error {
		set, err := m.ready(conv, text)
		if err != nil {
			return err
		}
		ctx := context.Background()
		msg, err = m.st.AddMessage(ctx, store.Message{ConversationID: conv, Role: store.RoleUser, Content: text})
		if err != nil {
			return fmt.Errorf("session: send: %w", err)
		}
		m.emit(MessageAdded{Message: msg})
		if c, err := m.st.Conversation(ctx, conv); err == nil && c.Title == "" {
			if err := m.st.RenameConversation(ctx, conv, titleFrom(text)); err == nil {
				m.emit(ConversationChanged{Conv: conv})
			}
		}
		m.enqueue(conv, set)
		return nil
	})
	return msg, err
}

// ready checks that an answer can be queued in conv (text, when not
// empty, is the message that asks for it) and returns its settings.
func (m *Manager) ready(conv int64, text ...string) (Settings, error) {
	if m.s.closing {
		return Settings{}, ErrClosed
	}
	for _, t := range text {
		if strings.TrimSpace(t) == "" {
			return Settings{}, ErrEmptyMessage
		}
	}
	if cs := m.s.convs[conv]; cs != nil && cs.job != nil {
		return Settings{}, ErrBusy
	}
	if !m.modelComing() {
		return Settings{}, ErrNoModel
	}
	c, err := m.st.Conversation(context.Background(), conv)
	if err != nil {
		return Settings{}, fmt.Errorf("session: %w", err)
	}
	if c.Deleted() {
		return Settings{}, fmt.Errorf("session: conversation %d is deleted: %w", conv, store.ErrNotFound)
	}
	return decodeSettings(c.SystemPrompt, c.Sampler, m.defaults)
}

// Stop stops a conversation's answer within one token (or drops it from
// the queue). The text so far is kept, with finish reason "cancelled".
// Stopping a conversation that is not generating does nothing.
func (m *Manager) Stop(conv int64) error {
	return m.call(func() error {
		m.stop(conv)
		return nil
	})
}

// Regenerate answers again: msg is an answer (it and everything after it
// are replaced) or a person's message (everything after it is replaced).
func (m *Manager) Regenerate(conv, msg int64) error {
	return m.call(func() error {
		set, err := m.ready(conv)
		if err != nil {
			return err
		}
		ctx := context.Background()
		target, err := m.message(conv, msg)
		if err != nil {
			return err
		}
		keep := target.Position
		if target.Role != store.RoleUser {
			keep--
		}
		msgs, err := m.st.Messages(ctx, conv)
		if err != nil {
			return fmt.Errorf("session: regenerate: %w", err)
		}
		var prev *Message
		for i := range msgs {
			if msgs[i].Position <= keep {
				prev = &msgs[i]
			}
		}
		if prev == nil || prev.Role != store.RoleUser {
			return ErrNoPrompt
		}
		if _, err := m.st.TruncateConversation(ctx, conv, keep); err != nil {
			return fmt.Errorf("session: regenerate: %w", err)
		}
		m.emit(MessagesChanged{Conv: conv})
		m.enqueue(conv, set)
		return nil
	})
}

// Edit replaces the text of one of the person's messages, deletes
// everything after it and answers again.
func (m *Manager) Edit(conv, msg int64, text string) error {
	return m.call(func() error {
		set, err := m.ready(conv, text)
		if err != nil {
			return err
		}
		target, err := m.message(conv, msg)
		if err != nil {
			return err
		}
		if target.Role != store.RoleUser {
			return ErrNotUserMessage
		}
		ctx := context.Background()
		if err := m.st.UpdateMessage(ctx, msg, text); err != nil {
			return fmt.Errorf("session: edit: %w", err)
		}
		if _, err := m.st.TruncateConversation(ctx, conv, target.Position); err != nil {
			return fmt.Errorf("session: edit: %w", err)
		}
		m.emit(MessagesChanged{Conv: conv})
		m.enqueue(conv, set)
		return nil
	})
}

func (m *Manager) message(conv, id int64) (Message, error) {
	msg, err := m.st.Message(context.Background(), id)
	if err != nil {
		return msg, fmt.Errorf("session: %w", err)
	}
	if msg.ConversationID != conv {
		return msg, fmt.Errorf("%w: message %d is in conversation %d, not %d", ErrWrongConversation, id, msg.ConversationID, conv)
	}
	return msg, nil
}

// Delete stops the conversation's answer and moves the conversation to the
// trash; Undo brings it back.
func (m *Manager) Delete(conv int64) error {
	return m.call(func() error {
		if err := m.st.DeleteConversation(context.Background(), conv); err != nil {
			return fmt.Errorf("session: %w", err)
		}
		m.stop(conv)
		cs := m.conv(conv)
		cs.deleted = true
		if cs.saving {
			cs.drop = true
		} else if cs.seq != nil {
			cs.seq.Close()
			cs.seq = nil
		}
		m.emit(ConversationChanged{Conv: conv, Deleted: true})
		return nil
	})
}

// Undo restores a deleted conversation.
func (m *Manager) Undo(conv int64) error {
	return m.call(func() error {
		if err := m.st.RestoreConversation(context.Background(), conv); err != nil {
			return fmt.Errorf("session: %w", err)
		}
		m.conv(conv).deleted = false
		m.emit(ConversationChanged{Conv: conv})
		return nil
	})
}

// Rename sets a conversation's title.
func (m *Manager) Rename(conv int64, title string) error {
	return m.call(func() error {
		if err := m.st.RenameConversation(context.Background(), conv, title); err != nil {
			return fmt.Errorf("session: %w", err)
		}
		m.emit(ConversationChanged{Conv: conv})
		return nil
	})
}

// SetPinned pins a conversation to the top of the list, or unpins it.
func (m *Manager) SetPinned(conv int64, pinned bool) error {
	return m.call(func() error {
		if err := m.st.SetPinned(context.Background(), conv, pinned); err != nil {
			return fmt.Errorf("session: %w", err)
		}
		m.emit(ConversationChanged{Conv: conv})
		return nil
	})
}

// SetSettings stores a conversation's settings; they apply from its next
// answer.
func (m *Manager) SetSettings(conv int64, set Settings) error {
	if err := set.Validate(); err != nil {
		return err
	}
	return m.call(func() error {
		ctx := context.Background()
		c, err := m.st.Conversation(ctx, conv)
		if err != nil {
			return fmt.Errorf("session: %w", err)
		}
		c.SystemPrompt, c.Sampler = set.SystemPrompt, set.encode()
		if err := m.st.UpdateConversation(ctx, c); err != nil {
			return fmt.Errorf("session: %w", err)
		}
		m.emit(ConversationChanged{Conv: conv})
		return nil
	})
}

// Settings returns a conversation's settings.
func (m *Manager) Settings(conv int64) (Settings, error) {
	c, err := m.st.Conversation(context.Background(), conv)
	if err != nil {
		return Settings{}, fmt.Errorf("session: %w", err)
	}
	return decodeSettings(c.SystemPrompt, c.Sampler, m.defaults)
}

// LoadModel unloads the current model (stopping every answer) and loads
// the GGUF file at path in the background: ModelLoading events report
// progress, then ModelLoaded or Error+ModelUnloaded. Messages sent
// meanwhile wait for it. It fails at once if the file cannot be opened.
func (m *Manager) LoadModel(path string) error {
	if !IsDemo(path) {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("session: load model: %w", err)
		}
		f.Close()
	}
	return m.changeModel(path)
}

// UnloadModel stops every answer and frees the model.
func (m *Manager) UnloadModel() error { return m.changeModel("") }

func (m *Manager) changeModel(path string) error {
	return m.call(func() error {
		if m.s.closing {
			return ErrClosed
		}
		m.requestModel(path)
		return nil
	})
}

// requestModel stops every answer and asks for path to be loaded ("" for
// none). It runs on the scheduling goroutine.
func (m *Manager) requestModel(path string) {
	m.cancelAll()
	if m.s.loading != nil {
		m.s.loading.cancel()
	}
	m.s.want = &modelRequest{path: path}
}

// Status is a snapshot of what the manager is doing.
type Status struct {
	Model      *engine.Info // nil when none is loaded
	Loading    string       // path of the model being loaded, or ""
	Generating int64        // conversation answering now, or 0
	Queued     []int64      // conversations waiting, in order
}

// Status reports what the manager is doing.
func (m *Manager) Status() (Status, error) {
	var st Status
	err := m.call(func() error {
		if m.s.model != nil {
			in := m.s.model.Info()
			st.Model = &in
		}
		if m.s.loading != nil {
			st.Loading = m.s.loading.path
		} else if m.s.want != nil {
			st.Loading = m.s.want.path
		}
		if m.s.running != nil {
			st.Generating = m.s.running.conv
		}
		for _, j := range m.s.queue {
			st.Queued = append(st.Queued, j.conv)
		}
		return nil
	})
	return st, err
}

// ListConversations lists conversations, pinned first, then the most
// recently active.
func (m *Manager) ListConversations() ([]Conversation, error) {
	return m.st.ListConversations(context.Background(), store.ListOptions{})
}

// Trash lists deleted conversations that have not been purged.
func (m *Manager) Trash() ([]Conversation, error) {
	return m.st.ListConversations(context.Background(), store.ListOptions{Deleted: true})
}

// Conversation returns one conversation.
func (m *Manager) Conversation(conv int64) (Conversation, error) {
	return m.st.Conversation(context.Background(), conv)
}

// Search finds messages containing every term of query (see
// store.Search).
func (m *Manager) Search(query string, limit int) ([]SearchHit, error) {
	return m.st.Search(context.Background(), query, limit)
}

// Messages returns a conversation's messages. An answer that is streaming
// has the text generated so far, which may be ahead of what is saved.
func (m *Manager) Messages(conv int64) ([]Message, error) {
	// Snapshot the live text before reading the store: whichever of the
	// two is longer is the newer (both are prefixes of the final answer).
	m.liveMu.Lock()
	snap := make(map[int64]string, len(m.live))
	for id, la := range m.live {
		if la.conv == conv {
			snap[id] = string(la.text)
		}
	}
	m.liveMu.Unlock()
	msgs, err := m.st.Messages(context.Background(), conv)
	if err != nil {
		return nil, err
	}
	for i := range msgs {
		if t, ok := snap[msgs[i].ID]; ok && len(t) > len(msgs[i].Content) {
			msgs[i].Content = t
		}
	}
	return msgs, nil
}

// titleFrom makes a conversation title from its first message.
func titleFrom(text string) string {
	const max = 48
	line := strings.TrimSpace(text)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = strings.TrimSpace(line[:i])
	}
	line = strings.Join(strings.Fields(line), " ")
	if utf8.RuneCountInString(line) <= max {
		return line
	}
	r := []rune(line)
	return strings.TrimSpace(string(r[:max])) + "…"
}
