package session

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/churon/churon/app/store"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/chat"
)

// liveAnswer is an answer's text as it streams; liveMu guards it.
type liveAnswer struct {
	conv      int64
	text      []byte
	committed int // length of text at the last save
}

// generate runs one answer on its own goroutine. It owns seq (the
// conversation's KV cache, nil when there is none yet) until it hands it
// back through jobDone. Store writes use a background context: an answer
// that is cancelled must still be saved.
//
// Stats and Done go back with the result for the scheduler to send once
// it has marked the conversation idle, so that a command sent in reaction
// to Done (Send, Regenerate) never finds the conversation still busy.
func (m *Manager) generate(j *job, model *engine.Model, seq *engine.Sequence) {
	res := jobResult{job: j}
	defer func() { m.jobDone <- res }()
	bg := context.Background()
	conv, set := j.conv, j.settings
	fail := func(msg int64, err error) {
		if j.ctx.Err() != nil {
			res.events = append(res.events, Done{Conv: conv, Msg: msg, Reason: ReasonCancelled})
			return
		}
		res.events = append(res.events, Done{Conv: conv, Msg: msg, Reason: ReasonError, Err: err})
	}

	seed, err := pickSeed(set.Seed)
	if err != nil {
		fail(0, err)
		return
	}
	used := set
	used.Seed = int64(seed)
	info := model.Info()
	hist, err := m.st.Messages(bg, conv)
	if err != nil {
		fail(0, fmt.Errorf("session: read conversation: %w", err))
		return
	}
	ans, err := m.st.AppendAssistant(bg, conv, store.Message{
		Model: filepath.Base(info.Path), Quant: info.FileType, Sampler: used.encode(),
	})
	if err != nil {
		fail(0, fmt.Errorf("session: save answer: %w", err))
		return
	}
	m.emit(MessageAdded{Message: ans})
	final := store.Message{ID: ans.ID, Model: ans.Model, Quant: ans.Quant, Sampler: ans.Sampler}
	save := func(reason Reason) {
		final.FinishReason = string(reason)
		if err := m.st.FinishMessage(bg, final); err != nil {
			m.emit(Error{Conv: conv, Op: "save answer", Err: err})
		}
	}
	abort := func(err error) {
		reason := ReasonError
		if j.ctx.Err() != nil {
			reason, err = ReasonCancelled, nil
		}
		save(reason)
		res.events = append(res.events, Done{Conv: conv, Msg: ans.ID, Reason: reason, Err: err})
	}

	msgs := make([]chat.Message, 0, len(hist)+1)
	if set.SystemPrompt != "" {
		msgs = append(msgs, chat.Message{Role: "system", Content: set.SystemPrompt})
	}
	for _, h := range hist {
		msgs = append(msgs, chat.Message{Role: string(h.Role), Content: h.Content})
	}
	ids, _, err := model.ChatTokens(j.ctx, msgs)
	if err != nil {
		abort(err)
		return
	}
	ctxLen := set.Context
	if ctxLen <= 0 {
		ctxLen = min(info.ContextLength, engine.DefaultContext)
		if ctxLen <= 0 {
			ctxLen = engine.DefaultContext
		}
	}
	if seq == nil || seq.Context() != ctxLen {
		seq = nil // free the old cache before making the new one
		seq, err = model.NewSequence(engine.SequenceOptions{Context: ctxLen, KVType: m.opt.KVType})
		if err != nil {
			abort(err)
			return
		}
	}
	if len(ids) >= seq.Context() {
		res.seq = seq
		abort(fmt.Errorf("%w: %d prompt tokens, context %d", ErrTooLong, len(ids), seq.Context()))
		return
	}
	// Reuse the cache: keep the longest common prefix of what it holds and
	// the new prompt, and feed only the rest. At least one token is fed,
	// because the logits after a truncation belong to a later position.
	reused := commonPrefix(seq.Tokens(), ids)
	if reused == len(ids) {
		reused--
	}
	if err := seq.Truncate(reused); err != nil {
		abort(err)
		return
	}

	m.liveMu.Lock()
	m.live[ans.ID] = &liveAnswer{conv: conv}
	m.liveMu.Unlock()
	stopSaving := m.saveEvery(conv, ans.ID)

	generated := 0
	result, err := seq.Generate(j.ctx, ids[reused:], engine.GenerateOptions{
		MaxTokens: set.MaxTokens, Sampling: set.Params(seed), Stop: set.Stop,
	}, func(t engine.Token) error {
		if t.ID >= 0 {
			generated++
		}
		if t.Text != "" {
			m.liveMu.Lock()
			la := m.live[ans.ID]
			off := len(la.text)
			la.text = append(la.text, t.Text...)
			m.liveMu.Unlock()
			m.emit(Token{Conv: conv, Msg: ans.ID, Offset: off, Text: t.Text, Tokens: generated, Elapsed: t.Elapsed})
		}
		if m.opt.tokenHook != nil {
			m.opt.tokenHook(conv, generated)
		}
		return nil
	})
	stopSaving()

	reason := Reason(result.Finish)
	switch {
	case j.ctx.Err() != nil:
		reason, err = ReasonCancelled, nil
	case err != nil:
		reason = ReasonError
	case result.Finish == engine.FinishContext:
		reason = ReasonContext
	}
	m.liveMu.Lock()
	final.Content = string(m.live[ans.ID].text)
	m.liveMu.Unlock()
	final.PromptTokens, final.GenTokens = len(ids), len(result.Tokens)
	final.TTFT, final.PromptTPS, final.GenTPS = result.TTFT, result.PromptTPS, result.GenTPS
	save(reason)
	// Until the final save the live text stood in for the saved one.
	m.liveMu.Lock()
	delete(m.live, ans.ID)
	m.liveMu.Unlock()
	if err := m.st.SetModelPath(bg, conv, info.Path); err != nil && !errors.Is(err, store.ErrNotFound) {
		m.emit(Error{Conv: conv, Op: "save conversation", Err: err})
	}
	res.events = append(res.events, Stats{
		Conv: conv, Msg: ans.ID, PromptTokens: len(ids), Reused: reused, Processed: len(ids) - reused,
		GenTokens: len(result.Tokens), TTFT: result.TTFT, PromptTPS: result.PromptTPS, GenTPS: result.GenTPS, Seed: seed,
	})
	res.events = append(res.events, Done{Conv: conv, Msg: ans.ID, Reason: reason, Err: err})
	if reason != ReasonError {
		res.seq = seq
	}
}

// saveEvery saves the answer's text every CommitEvery while it grows, on
// its own goroutine so that a slow disk never delays a token. The returned
// function stops it and waits; the final save is the caller's.
func (m *Manager) saveEvery(conv, msg int64) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(m.opt.CommitEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			m.liveMu.Lock()
			la := m.live[msg]
			text, changed := string(la.text), len(la.text) != la.committed
			m.liveMu.Unlock()
			if !changed {
				continue
			}
			if err := m.st.UpdateMessage(context.Background(), msg, text); err != nil {
				m.emit(Error{Conv: conv, Op: "save answer", Err: err})
				continue
			}
			m.liveMu.Lock()
			la.committed = len(text)
			m.liveMu.Unlock()
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}
}

func commonPrefix(a, b []int32) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// pickSeed returns the seed to use: the setting, or a fresh random one
// for -1 (63 bits, so it fits the stored settings' int64).
func pickSeed(setting int64) (uint64, error) {
	if setting >= 0 {
		return uint64(setting), nil
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, fmt.Errorf("session: seed: %w", err)
	}
	return binary.LittleEndian.Uint64(b[:]) >> 1, nil
}
