package session

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/chat"
)

// liveAnswer is an answer's text as it streams, its reasoning apart;
// liveMu guards it.
type liveAnswer struct {
	conv      int64
	text      []byte
	reasoning []byte
	committed int // length of text and reasoning at the last save
}

// answerSaved follows an answer's final save: its live text, which
// stood in for the saved one until then, is dropped, and the model file
// that wrote it (a remote's path for a remote model) is recorded on the
// conversation, which may have been deleted meanwhile.
func (m *Manager) answerSaved(conv, msg int64, modelPath string) {
	m.liveMu.Lock()
	delete(m.live, msg)
	m.liveMu.Unlock()
	if err := m.st.SetModelPath(context.Background(), conv, modelPath); err != nil && !errors.Is(err, store.ErrNotFound) {
		m.emit(api.Error{Conv: conv, Op: "save conversation", Err: err})
	}
}

// startLive begins answer msg's live text, which stands in for the saved
// one while it streams.
func (m *Manager) startLive(conv, msg int64) {
	m.liveMu.Lock()
	m.live[msg] = &liveAnswer{conv: conv}
	m.liveMu.Unlock()
}

// liveText is answer msg's text and reasoning as streamed so far.
func (m *Manager) liveText(msg int64) (text, reasoning string) {
	m.liveMu.Lock()
	defer m.liveMu.Unlock()
	la := m.live[msg]
	return string(la.text), string(la.reasoning)
}

// fail queues the Done of an answer that was not stored: cancelled when
// its job was stopped, else failed with err.
func (res *jobResult) fail(err error) {
	if res.job.ctx.Err() != nil {
		res.events = append(res.events, api.Done{Conv: res.job.conv, Reason: api.ReasonCancelled})
		return
	}
	res.events = append(res.events, api.Done{Conv: res.job.conv, Reason: api.ReasonError, Err: err})
}

// answerDone queues the Done of answer final, ended for reason, and
// deletes the answer when it was stopped before its first word: an empty
// answer is nothing to keep (a regenerated one leaves the version it
// replaced shown).
func (m *Manager) answerDone(res *jobResult, final store.Message, reason api.Reason, err error) {
	conv := res.job.conv
	res.events = append(res.events, api.Done{Conv: conv, Msg: final.ID, Reason: reason, Err: err})
	if reason == api.ReasonCancelled && final.Content == "" && final.Reasoning == "" {
		if err := m.st.DeleteMessage(context.Background(), final.ID); err == nil {
			res.events = append(res.events, api.MessagesChanged{Conv: conv})
		}
	}
}

// generate prepares one answer on its own goroutine, runs it in the
// model's batch and saves it. It owns seq (the conversation's KV cache,
// nil when there is none yet) until it hands it back through jobDone.
// Store writes use a background context: an answer that is cancelled
// must still be saved.
//
// Stats and Done go back with the result for the scheduler to send once
// it has marked the conversation idle, so that a command sent in reaction
// to Done (Send, Regenerate) never finds the conversation still busy.
func (m *Manager) generate(j *job, model *engine.Model, batch *Batch, seq *engine.Sequence) {
	start := time.Now()
	res := jobResult{job: j}
	defer func() { m.jobDone <- res }()
	bg := context.Background()
	conv, set := j.conv, j.settings

	seed, err := pickSeed(set.Seed)
	if err != nil {
		res.fail(err)
		return
	}
	used := set
	used.Seed = int64(seed)
	info := model.Info()
	hist, parent, err := m.history(j)
	if err != nil {
		res.fail(err)
		return
	}
	ctxLen := contextOf(set, info)
	pr, perr := buildPrompt(j.ctx, model, set, hist, ctxLen)
	if j.ctx.Err() != nil {
		// Stopped before its answer began (Stop right after Send): there
		// is nothing to store, not even an empty answer.
		res.fail(nil)
		return
	}
	if perr == nil && pr.notice != nil {
		// Stored before the answer, so the chat reads: question, notice,
		// answer. A new notice after an old one (a regenerated answer that
		// drops more) is a version of it, not a second notice in a row.
		var n store.Message
		var err error
		if last := len(hist) - 1; last >= 0 && hist[last].Role == store.RoleNotice && hist[last].ID == parent {
			n, err = m.st.AddVersion(bg, parent, *pr.notice)
		} else {
			pr.notice.ParentID = parent
			n, err = m.st.AddMessage(bg, *pr.notice)
		}
		if err != nil {
			m.emit(api.Error{Conv: conv, Op: "save notice", Err: err})
		} else {
			parent = n.ID
			m.emit(api.MessageAdded{Message: n})
		}
	}
	ans, err := m.st.AddMessage(bg, store.Message{
		ConversationID: conv, Role: store.RoleAssistant, ParentID: parent,
		Model: filepath.Base(info.Path), Quant: info.FileType, Sampler: encodeSettings(used),
	})
	m.endCut(j)
	if err != nil {
		res.fail(fmt.Errorf("session: save answer: %w", err))
		return
	}
	m.emit(api.MessageAdded{Message: ans})
	final := store.Message{ID: ans.ID, Model: ans.Model, Quant: ans.Quant, Sampler: ans.Sampler}
	save := func(reason api.Reason) {
		final.FinishReason = string(reason)
		if err := m.st.FinishMessage(bg, final); err != nil {
			m.emit(api.Error{Conv: conv, Op: "save answer", Err: err})
		}
	}
	abort := func(err error) {
		reason := api.ReasonError
		if j.ctx.Err() != nil {
			reason, err = api.ReasonCancelled, nil
		}
		save(reason)
		res.events = append(res.events, api.Done{Conv: conv, Msg: ans.ID, Reason: reason, Err: err})
	}

	if perr != nil {
		res.seq = seq
		abort(perr)
		return
	}
	ids := pr.ids
	// The cache: the one in memory, else the snapshot on disk, else a new
	// one (a cold prefill).
	from, restoreTook := api.CacheRAM, time.Duration(0)
	opts := engine.SequenceOptions{Context: ctxLen, KVType: m.opt.KVType}
	if seq != nil && seq.Context() != ctxLen {
		// The context setting changed: free the old cache first (no save
		// of it is in flight: a job waits for its conversation's save).
		seq.Close()
		seq = nil
	}
	if seq == nil {
		from = api.CacheDisk
		seq, restoreTook = m.restore(j.ctx, conv, model, opts)
	}
	if seq == nil {
		from = api.CacheNone
		seq, err = model.NewSequence(opts)
		if err != nil {
			abort(err)
			return
		}
	}
	// Reuse the cache: keep as much of what it holds as spells the new
	// prompt's start — the answers' generated ids included, where the
	// tokenizer would have made other ids of their text — and feed only
	// the rest. At least one token is fed, because the logits after a
	// truncation belong to a later position.
	if kept, ok := keepAnswer(j.ctx, model, set, hist, pr, seq.Tokens(), ctxLen); ok {
		ids = kept
	}
	// Aligned, a prompt may grow: never past what the overflow policy
	// measured it against.
	ids, reused := model.AlignPrompt(seq.Tokens(), ids, max(len(ids), ctxLen-answerRoom(set, ctxLen)))
	if reused == len(ids) {
		reused--
	}
	if err := seq.Truncate(reused); err != nil {
		abort(err)
		return
	}
	// Cut further back than a sliding-window model's rings reach, the
	// cache runs the kept tokens again too: nothing of it is reused; cut
	// a recurrent model (Qwen 3.5), it resumes from its newest checkpoint
	// at or before the cut and runs the tokens after it again.
	kept := min(reused, seq.Reused())
	if kept == 0 {
		from = api.CacheNone
	}

	m.startLive(conv, ans.ID)
	stopSaving := m.saveEvery(conv, ans.ID)
	// What the person waits for before the first token includes reading
	// the conversation, rendering it and restoring or allocating the cache.
	prep := time.Since(start)

	// The generated text is split into the answer and its reasoning as
	// it streams (chat.OutputParser); Harmony's markers are control
	// tokens, rendered so that the parser sees them.
	format := chat.OutputFormatOf(model.Template())
	out := answerParts{m: m, conv: conv, msg: ans.ID, parser: chat.NewOutputParser(format, pr.text), sink: j.sink}
	if j.sink != nil { // an API request asked for it: it hears the answer too
		j.sink.push(api.AnswerStarted{PromptTokens: len(ids), Cached: kept, Conversation: conv})
	}
	tok := model.Tokenizer()
	generated := 0
	run, err := batch.Start(j.ctx, seq, ids[reused:], j.options(set, seed, format), func(t engine.Token) error {
		if t.ID >= 0 {
			generated++
			if j.sink != nil && j.sink.firstAt.IsZero() {
				j.sink.firstAt = time.Now()
			}
			if j.logprobs {
				out.lps = append(out.lps, logprobOf(tok, t))
			}
		}
		reasoning := out.add(out.parser.Feed(t.Text), generated, t.Elapsed)
		if t.ID >= 0 && (reasoning || out.parser.Thinking()) {
			out.reasTokens, out.reasTime = out.reasTokens+1, t.Elapsed
		}
		if m.opt.tokenHook != nil {
			m.opt.tokenHook(conv, generated)
		}
		return nil
	})
	var result engine.Result
	if err == nil && m.opt.joinHook != nil {
		m.opt.joinHook(conv)
	}
	if err == nil {
		result, err = run.Wait()
	} else if errors.Is(err, engine.ErrContextFull) {
		result.Finish = engine.FinishContext
	}
	out.add(out.parser.Flush(), generated, result.TTFT+result.GenTime)
	stopSaving()

	reason, err := endReason(j.ctx.Err(), err, result.Finish)
	final.Content, final.Reasoning = m.liveText(ans.ID)
	final.ReasoningTokens, final.ReasoningTime = out.reasTokens, out.reasTime
	ttft := result.TTFT
	if ttft > 0 {
		ttft += prep
	}
	final.PromptTokens, final.PromptReused, final.GenTokens = len(ids), kept, len(result.Tokens)
	final.Sampler = withFingerprint(final.Sampler, ids, pr.text)
	final.TTFT, final.PromptTPS, final.GenTPS = ttft, result.PromptTPS, result.GenTPS
	if sk := j.sink; sk != nil {
		sk.usage = api.Usage{PromptTokens: len(ids), CachedTokens: kept, CompletionTokens: len(result.Tokens),
			GenTPS: result.GenTPS, Conversation: conv}
		if !sk.firstAt.IsZero() {
			sk.usage.TTFT = sk.firstAt.Sub(sk.asked)
		}
		if out.lps != nil {
			sk.push(api.AnswerText{Logprobs: out.lps, Tokens: len(result.Tokens)})
		}
	}
	save(reason)
	m.answerSaved(conv, ans.ID, info.Path)
	res.events = append(res.events, api.Stats{
		Conv: conv, Msg: ans.ID, PromptTokens: len(ids), Reused: kept, Processed: len(ids) - kept,
		GenTokens: len(result.Tokens), TTFT: ttft, PromptTPS: result.PromptTPS, GenTPS: result.GenTPS, Seed: seed,
		From: from, Restore: restoreTook, Dropped: pr.dropped,
		ReasoningTokens: out.reasTokens, ReasoningTime: out.reasTime,
	})
	m.answerDone(&res, final, reason, err)
	if reason != api.ReasonError {
		res.seq = seq
	}
}

// history is the branch job j answers and the message its answer follows:
// the branch it was asked on, whatever is chosen meanwhile.
func (m *Manager) history(j *job) (hist []api.Message, parent int64, err error) {
	hist, err = m.branch(j.conv, j.parent)
	if err != nil {
		return nil, 0, fmt.Errorf("session: read conversation: %w", err)
	}
	parent = j.parent
	if parent == 0 && len(hist) > 0 {
		parent = hist[len(hist)-1].ID
	}
	return hist, parent, nil
}

// branch is the history an answer after message parent answers: the
// messages from the start to parent (0: the whole branch shown).
func (m *Manager) branch(conv, parent int64) ([]api.Message, error) {
	if parent == 0 {
		return m.st.Messages(context.Background(), conv)
	}
	all, err := m.st.AllMessages(context.Background(), conv)
	if err != nil {
		return nil, err
	}
	by := make(map[int64]api.Message, len(all))
	for _, x := range all {
		by[x.ID] = x
	}
	var rev []api.Message
	for id := parent; id != 0 && len(rev) <= len(all); id = by[id].ParentID {
		x, ok := by[id]
		if !ok {
			return nil, fmt.Errorf("session: message %d is not in conversation %d: %w", id, conv, store.ErrNotFound)
		}
		rev = append(rev, x)
	}
	slices.Reverse(rev)
	return rev, nil
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
			text, reasoning := string(la.text), string(la.reasoning)
			changed := len(text)+len(reasoning) != la.committed
			m.liveMu.Unlock()
			if !changed {
				continue
			}
			if err := m.st.UpdateAnswer(context.Background(), msg, text, reasoning); err != nil {
				m.emit(api.Error{Conv: conv, Op: "save answer", Err: err})
				continue
			}
			m.liveMu.Lock()
			la.committed = len(text) + len(reasoning)
			m.liveMu.Unlock()
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}
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

// contextOf is an answer's KV cache length: its setting, else the model's
// trained context, at most engine.DefaultContext.
func contextOf(set api.Settings, info engine.Info) int {
	if set.Context > 0 {
		return set.Context
	}
	if n := min(info.ContextLength, engine.DefaultContext); n > 0 {
		return n
	}
	return engine.DefaultContext
}

// options are an answer's engine options: its settings' sampling with
// seed, stop strings and cap, control tokens shown where the output
// format needs them, the logprobs an API request asked for. An answer
// cut at its cap ends with a token sampled but not fed: FeedTail feeds
// it, so that the cache holds the whole answer and a follow-up reuses
// all of it (keepAnswer).
func (j *job) options(set api.Settings, seed uint64, format chat.OutputFormat) engine.GenerateOptions {
	return engine.GenerateOptions{
		MaxTokens: set.MaxTokens, Sampling: Params(set, seed), Stop: set.Stop,
		RenderSpecial: format == chat.OutputHarmony, FeedTail: true,
		Logprobs: j.logprobs, TopLogprobs: j.topLogprobs,
	}
}

// endReason is how a local answer ended, from its context's error, the
// run's error and the engine's finish; a cancelled answer carries no
// error (cancelling is what the person asked for).
func endReason(ctxErr, err error, finish engine.FinishReason) (api.Reason, error) {
	switch {
	case ctxErr != nil:
		return api.ReasonCancelled, nil
	case err != nil:
		return api.ReasonError, err
	case finish == engine.FinishContext:
		return api.ReasonContext, nil
	}
	return api.Reason(finish), nil
}
