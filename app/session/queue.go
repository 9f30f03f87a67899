package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/churon/churon/app/store"
)

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
	m.uncut(j)
}

// uncut ends what a regenerate that stored no answer hid: the chat reads
// on past its parent again (Messages), and is told to read it again.
func (m *Manager) uncut(j *job) {
	m.liveMu.Lock()
	cut := m.cuts[j.conv] == j
	if cut {
		delete(m.cuts, j.conv)
	}
	m.liveMu.Unlock()
	if cut {
		m.emit(MessagesChanged{Conv: j.conv})
	}
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
		m.uncut(j)
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
	m.emit(m.cacheState(r.job.conv))
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
