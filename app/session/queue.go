package session

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/engine"
)

// SourceWindow is the source of the answers the window (or `churon chat`)
// asks for; an API request's source is its client's.
const SourceWindow = "window"

// SettingMaxAnswers is the app setting that caps the answers generated at
// once (decimal; absent or 0: DefaultMaxAnswers for the loaded model).
const SettingMaxAnswers = "session.max_answers"

// MaxAnswersLimit bounds the cap: past it a step's batch stops paying.
const MaxAnswersLimit = 64

// modelComing reports whether an answer asked for now will find a model.
func (m *Manager) modelComing() bool {
	s := &m.s
	if s.want != nil {
		return s.want.path != ""
	}
	return s.model != nil || s.remote != nil || s.loading != nil
}

// enqueue queues an answer in conv (a conversation, or an API slot) and
// returns it.
func (m *Manager) enqueue(conv int64, set api.Settings, source string) *job {
	ctx, cancel := context.WithCancel(context.Background())
	j := &job{conv: conv, settings: set, ctx: ctx, cancel: cancel, notified: -1, source: source}
	if conv != 0 { // 0: an API request's, which claims its slot when it starts
		m.conv(conv).job = j
	}
	m.s.queue = append(m.s.queue, j)
	return j
}

// maxAnswers is the cap on answers running at once: Options.MaxAnswers,
// else the person's setting, else the loaded model's default.
func (m *Manager) maxAnswers() int {
	if n := m.opt.MaxAnswers; n > 0 {
		return min(n, MaxAnswersLimit)
	}
	if v, ok := m.Setting(SettingMaxAnswers); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
			return min(n, MaxAnswersLimit)
		}
	}
	return max(m.s.autoCap, 1)
}

// DefaultMaxAnswers is the cap on answers at once for model when the
// person sets none: as many sequences as a quarter of the memory
// available now holds (each sequence's KV cache at the default context),
// between 1 and 16 — past 16, on a CPU, a step's cost grows with the
// answers as fast as the answers do.
func DefaultMaxAnswers(model *engine.Model, kv engine.KVType) int {
	per := model.SequenceBytes(engine.SequenceOptions{KVType: kv})
	if per <= 0 {
		return 16
	}
	return int(min(max(api.DefaultKVBudget()/per, 1), 16))
}

// nextJob is the index in the queue of the answer to start next, -1 for
// none: among those whose conversation's snapshot is not being written,
// the oldest of the source with the fewest answers running.
func (m *Manager) nextJob() int {
	running := map[string]int{}
	for _, j := range m.s.active {
		running[j.source]++
	}
	best := -1
	for i, j := range m.s.queue {
		if m.conv(j.conv).saving {
			continue
		}
		if best < 0 || running[j.source] < running[m.s.queue[best].source] {
			best = i
		}
	}
	return best
}

// stop cancels a conversation's answer: a running one stops within one
// token; a waiting one ends at once with Done{cancelled}.
func (m *Manager) stop(conv int64) {
	cs := m.s.convs[conv]
	if cs == nil || cs.job == nil {
		return
	}
	m.drop(cs.job)
}

// ended says an answer ended: on Events for a conversation's, to its
// requester for an API request's.
func (m *Manager) ended(j *job, d api.Done) {
	if j.conv > 0 {
		m.emit(d)
	}
	if j.sink != nil {
		j.sink.end(d)
	}
}

// uncut ends what a regenerate that stored no answer hid: the chat reads
// on past its parent again (Messages), and is told to read it again.
func (m *Manager) uncut(j *job) {
	if m.endCut(j) {
		m.emit(api.MessagesChanged{Conv: j.conv})
	}
}

// endCut ends the cut job j put on its conversation (Manager.cuts), if it
// is still there, and reports whether it was.
func (m *Manager) endCut(j *job) bool {
	m.liveMu.Lock()
	defer m.liveMu.Unlock()
	if m.cuts[j.conv] != j {
		return false
	}
	delete(m.cuts, j.conv)
	return true
}

func (m *Manager) cancelAll() {
	for _, j := range m.s.active {
		j.cancel()
	}
	for len(m.s.queue) > 0 {
		m.drop(m.s.queue[0])
	}
}

func (m *Manager) failQueued(err error) {
	for _, j := range m.s.queue {
		j.cancel()
		if j.conv != 0 {
			m.s.convs[j.conv].job = nil
		}
		m.ended(j, api.Done{Conv: j.conv, Reason: api.ReasonError, Err: err})
		m.uncut(j)
	}
	m.s.queue = nil
}

func (m *Manager) start(j *job) {
	m.s.active = append(m.s.active, j)
	if r := m.s.remote; r != nil {
		if j.req != nil {
			go func() {
				m.jobDone <- jobResult{job: j, events: []api.Event{api.Done{Conv: j.conv, Reason: api.ReasonError, Err: errRemoteAPI}}}
			}()
			return
		}
		go m.generateRemote(j, r)
		return
	}
	if j.req != nil { // it claims its slot, and its cache, once it knows its prompt
		go m.complete(j, m.s.model, m.s.batch)
		return
	}
	cs := m.conv(j.conv)
	seq := cs.seq
	cs.seq = nil
	cs.held, cs.heldTokens, cs.heldBytes = seq != nil, 0, 0
	if seq != nil {
		cs.heldTokens, cs.heldBytes = seq.Len(), seq.KVBytes()
	}
	go m.generate(j, m.s.model, m.s.batch, seq)
}

func (m *Manager) finished(r jobResult) {
	s := &m.s
	if i := slices.Index(s.active, r.job); i >= 0 {
		s.active = slices.Delete(s.active, i, i+1)
	}
	r.job.cancel()       // release the context's resources
	if r.job.conv == 0 { // an API request that ended before it had a slot
		for _, ev := range r.events {
			if d, ok := ev.(api.Done); ok {
				m.ended(r.job, d)
			}
		}
		return
	}
	cs := m.conv(r.job.conv)
	cs.job = nil
	cs.held = false
	for _, ev := range r.events {
		if d, ok := ev.(api.Done); ok {
			m.ended(r.job, d)
			continue
		}
		if r.job.conv > 0 {
			m.emit(ev)
		}
	}
	m.uncut(r.job) // a regenerate that ended before storing its answer
	// Kept even when a model change waits: the change writes it to disk
	// before the model closes.
	if r.seq != nil && !cs.deleted {
		s.clock++
		cs.seq, cs.used, cs.dirty, cs.flushed = r.seq, s.clock, true, false
		// Written now, off the answer's path (Done is already out), so that
		// a process killed later loses at most the next answer's cache.
		m.snapshot(r.job.conv, cs, false)
	}
	m.evict(cs)
	m.emitCache(r.job.conv)
}

// ready checks that an answer can be queued in conv (text, when not
// empty, is the message that asks for it) and returns its settings.
func (m *Manager) ready(conv int64, text ...string) (api.Settings, error) {
	if m.s.closing {
		return api.Settings{}, api.ErrClosed
	}
	for _, t := range text {
		if strings.TrimSpace(t) == "" {
			return api.Settings{}, api.ErrEmptyMessage
		}
	}
	if m.answering(conv) {
		return api.Settings{}, api.ErrBusy
	}
	if !m.modelComing() {
		return api.Settings{}, api.ErrNoModel
	}
	c, err := m.st.Conversation(context.Background(), conv)
	if err != nil {
		return api.Settings{}, fmt.Errorf("session: %w", err)
	}
	if c.Deleted() {
		return api.Settings{}, fmt.Errorf("session: conversation %d is deleted: %w", conv, store.ErrNotFound)
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
