package session

import (
	"context"
	"fmt"
	"time"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/chat"
	"github.com/churon/churon/engine/tokenizer"
)

// APISlots is how many KV caches the API requests that no conversation
// stores keep between them, under the same memory budget as the
// conversations' and on disk as "api-N" snapshots: each holds a recent
// request's prompt and answer, and a request whose prompt starts with
// them (a client's next turn) reuses the one it shares most tokens with,
// across restarts too.
const APISlots = 16

// slotID is API slot i's place among the conversations' caches: below
// zero, where no conversation is.
func slotID(i int) int64 { return -int64(i + 1) }

// slotTokens reads what each API slot's snapshot on disk holds, for the
// sequences of model at ctxLen (nil for a slot whose snapshot is missing
// or serves another model). It runs on a request's goroutine: the
// scheduler never waits on the disk.
func (m *Manager) slotTokens(model *engine.Model, ctxLen int) map[int64][]int32 {
	out := map[int64][]int32{}
	if m.opt.Disk == nil {
		return out
	}
	mine := model.Identity()
	for i := range APISlots {
		id := slotID(i)
		e, toks, ok := m.opt.Disk.StatTokens(diskKey(id))
		if ok && sameModel(e.Identity, mine, m.opt.KVType) && e.Identity.Context == ctxLen {
			out[id] = toks
		}
	}
	return out
}

// claimSlot gives an API request the slot whose cache its prompt ids
// continue, sharing the most tokens with it (disk: what the slots'
// snapshots hold), else an unused one, else the least recently used. It returns the
// slot's cache in memory (nil: restore its snapshot, or start cold), or
// a channel to wait on when the best slot's snapshot is being written.
// It runs on the scheduling goroutine.
func (m *Manager) claimSlot(j *job, ids []int32, disk map[int64][]int32) (seq *engine.Sequence, wait <-chan struct{}, err error) {
	if j.ctx.Err() != nil {
		return nil, nil, j.ctx.Err()
	}
	if m.s.closing || m.s.want != nil {
		return nil, nil, context.Canceled
	}
	best, bestN := int64(0), 0
	var cold int64
	var coldUsed int64 = -1
	for i := range APISlots {
		id := slotID(i)
		cs := m.s.convs[id]
		if cs != nil && cs.job != nil {
			continue
		}
		toks := disk[id]
		if cs != nil && cs.seq != nil {
			toks = cs.seq.Tokens()
		}
		// A slot the prompt continues: more than the first token (a BOS
		// every prompt starts with), and at least half of what it holds
		// (as llama-server's slot similarity), so that a request sharing
		// only the template's opening does not write over a long history.
		if n := engine.CommonPrefix(toks, ids); n > 1 && 2*n >= len(toks) && n > bestN {
			best, bestN = id, n
		}
		used := int64(0)
		if cs != nil {
			used = cs.used
		}
		if (cs == nil || !cs.saving) && (coldUsed < 0 || used < coldUsed || used == coldUsed && len(toks) == 0) {
			cold, coldUsed = id, used
		}
	}
	pick := best
	if pick == 0 {
		pick = cold
	}
	if pick == 0 {
		return nil, m.savedSignal(), nil // every slot busy or being written
	}
	cs := m.conv(pick)
	if cs.saving {
		return nil, m.savedSignal(), nil
	}
	j.conv = pick
	cs.job = j
	seq = cs.seq
	cs.seq = nil
	cs.held, cs.heldTokens, cs.heldBytes = seq != nil, 0, 0
	if seq != nil {
		cs.heldTokens, cs.heldBytes = seq.Len(), seq.KVBytes()
	}
	return seq, nil, nil
}

// savedSignal is closed when the next snapshot write ends.
func (m *Manager) savedSignal() <-chan struct{} {
	if m.s.savedCh == nil {
		m.s.savedCh = make(chan struct{})
	}
	return m.s.savedCh
}

// complete prepares an API request's answer that no conversation stores
// (its KV cache is an API slot's), runs it in the batch and hands the
// slot's cache back. It runs on its own goroutine, as generate does.
func (m *Manager) complete(j *job, model *engine.Model, batch *Batch) {
	res := jobResult{job: j}
	defer func() { m.jobDone <- res }()
	sk, req := j.sink, j.req
	set := req.Settings
	fail := func(err error) {
		if j.ctx.Err() != nil {
			res.events = append(res.events, api.Done{Conv: j.conv, Reason: api.ReasonCancelled})
			return
		}
		res.events = append(res.events, api.Done{Conv: j.conv, Reason: api.ReasonError, Err: err})
	}
	queued := time.Since(sk.asked)
	seed, err := pickSeed(set.Seed)
	if err != nil {
		fail(err)
		return
	}
	ctxLen := contextOf(set, model.Info())
	var ids []int32
	var text string
	chatting := len(req.Messages) > 0
	if chatting {
		msgs := make([]chat.Message, len(req.Messages))
		for i, msg := range req.Messages {
			msgs[i] = chat.Message{Role: msg.Role, Content: msg.Content}
		}
		ids, text, err = model.ChatTokensWith(j.ctx, msgs, templateVars(set))
		if err != nil {
			fail(fmt.Errorf("session: render the chat: %w", err))
			return
		}
	} else {
		text = req.Prompt
		ids = model.TokenizePrompt(text, true, true)
	}
	switch {
	case len(ids) >= ctxLen:
		fail(fmt.Errorf("%w: %d prompt tokens, context %d", api.ErrTooLong, len(ids), ctxLen))
		return
	case set.MaxTokens > 0 && len(ids)+set.MaxTokens > ctxLen:
		fail(fmt.Errorf("%w: %d prompt tokens + max_tokens %d > context %d", api.ErrTooLong, len(ids), set.MaxTokens, ctxLen))
		return
	}

	// A slot: the one whose cache serves most of the prompt.
	opts := engine.SequenceOptions{Context: ctxLen, KVType: m.opt.KVType}
	disk := m.slotTokens(model, ctxLen)
	var seq *engine.Sequence
	for {
		var wait <-chan struct{}
		var cerr error
		if err := m.call(func() error {
			seq, wait, cerr = m.claimSlot(j, ids, disk)
			return nil
		}); err != nil {
			cerr = err
		}
		if cerr != nil {
			fail(cerr)
			return
		}
		if wait == nil {
			break
		}
		select {
		case <-wait:
		case <-j.ctx.Done():
			fail(j.ctx.Err())
			return
		}
	}
	if seq != nil && seq.Context() != ctxLen {
		seq.Close()
		seq = nil
	}
	if seq == nil && len(disk[j.conv]) > 1 && engine.CommonPrefix(disk[j.conv], ids) > 1 {
		seq, _ = m.restore(j.ctx, j.conv, model, opts)
	}
	if seq == nil {
		if seq, err = model.NewSequence(opts); err != nil {
			fail(err)
			return
		}
	}
	ids, reused := model.AlignPrompt(seq.Tokens(), ids, ctxLen-1)
	if reused == len(ids) {
		reused--
	}
	if err := seq.Truncate(reused); err != nil {
		fail(err)
		return
	}
	res.seq = seq
	// What the cache really skips: a recurrent model cut back resumes
	// from a checkpoint (engine.Sequence.Reused).
	cached := min(reused, seq.Reused())
	sk.push(api.AnswerStarted{PromptTokens: len(ids), Cached: cached})

	var parser *chat.OutputParser
	format := chat.OutputPlain
	if chatting {
		format = chat.OutputFormatOf(model.Template())
		parser = chat.NewOutputParser(format, text)
	}
	tok := model.Tokenizer()
	generated := 0
	run, err := batch.Start(j.ctx, seq, ids[reused:], j.options(set, seed, format), func(t engine.Token) error {
		if t.ID >= 0 {
			if generated++; generated == 1 {
				sk.firstAt = time.Now()
			}
		}
		var lps []api.TokenLogprob
		if j.logprobs && t.ID >= 0 {
			lps = []api.TokenLogprob{logprobOf(tok, t)}
		}
		if parser == nil {
			if t.Text != "" || lps != nil {
				sk.push(api.AnswerText{Text: t.Text, Logprobs: lps, Tokens: generated})
			}
			return nil
		}
		pushParts(sk, parser.Feed(t.Text), lps, generated)
		return nil
	})
	var result engine.Result
	if err == nil {
		result, err = run.Wait()
	}
	if parser != nil {
		pushParts(sk, parser.Flush(), nil, generated)
	}
	reason, err := endReason(j.ctx.Err(), err, result.Finish)
	if reason == api.ReasonError {
		res.seq = nil // a failed run's cache is not handed back
		seq.Close()
	}
	sk.usage = api.Usage{
		PromptTokens: len(ids), CachedTokens: cached, CompletionTokens: len(result.Tokens),
		GenTPS: result.GenTPS, Queued: queued,
	}
	if !sk.firstAt.IsZero() {
		sk.usage.TTFT = sk.firstAt.Sub(sk.asked)
	}
	res.events = append(res.events, api.Done{Conv: j.conv, Reason: reason, Err: err})
}

// pushParts sends parsed output to a request's sink: the answer's text,
// its reasoning apart; tool calls, which Churon does not run, as notes of
// its reasoning. The logprobs go with the first part (or alone).
func pushParts(sk *sink, parts []chat.Part, lps []api.TokenLogprob, generated int) {
	for _, p := range parts {
		text := p.Text
		if p.Kind == chat.PartToolCall {
			text = toolCallNote(p)
		}
		if text == "" {
			continue
		}
		sk.push(api.AnswerText{Text: text, Reasoning: p.Kind != chat.PartContent, Logprobs: lps, Tokens: generated})
		lps = nil
	}
	if lps != nil {
		sk.push(api.AnswerText{Logprobs: lps, Tokens: generated})
	}
}

// logprobOf is a generated token's logprobs as the API gives them: its
// text (an incomplete character as is) and bytes, those of the most
// likely tokens at its place.
func logprobOf(tok *tokenizer.Tokenizer, t engine.Token) api.TokenLogprob {
	piece := tok.Piece(t.ID, false)
	out := api.TokenLogprob{Token: string(piece), Bytes: piece, Logprob: t.Logprob}
	for _, top := range t.Top {
		b := tok.Piece(top.ID, false)
		out.Top = append(out.Top, api.TopLogprob{Token: string(b), Bytes: b, Logprob: top.Logprob})
	}
	return out
}
