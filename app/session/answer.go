package session

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/chat"
	"github.com/churon/churon/engine/tokenizer"
	box "github.com/churon/churon/internal/outbox"
)

// The API's request types, under the manager's names.
type (
	Request        = api.Request
	RequestMessage = api.RequestMessage
	Answer         = api.Answer
	AnswerEvent    = api.AnswerEvent
	AnswerStarted  = api.AnswerStarted
	AnswerText     = api.AnswerText
	AnswerDone     = api.AnswerDone
	Usage          = api.Usage
	TokenLogprob   = api.TokenLogprob
	TopLogprob     = api.TopLogprob
)

// ErrBadRequest: see api.ErrBadRequest.
var ErrBadRequest = api.ErrBadRequest

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

// request is an API request's answer that no conversation stores.
type request struct {
	api.Request
}

// sink carries a request's answer to its requester: the Events of
// api.Answer, through an outbox (never blocking the batch, never
// dropping), text merged while the requester lags.
type sink struct {
	box   *box.Box[AnswerEvent]
	asked time.Time
	// usage and firstAt are set by the answer's goroutine before it hands
	// its result to the scheduler, which sends AnswerDone.
	usage   Usage
	firstAt time.Time
}

// pendingText is a queued AnswerText that later text may still grow.
type pendingText struct {
	AnswerText
	text strings.Builder
}

func (*pendingText) answerEvent() {}

func newSink() *sink {
	b := box.New(box.Hooks[AnswerEvent]{
		Wrap: func(ev AnswerEvent) AnswerEvent {
			if t, ok := ev.(AnswerText); ok {
				p := &pendingText{AnswerText: t}
				p.text.WriteString(t.Text)
				return p
			}
			return ev
		},
		Merge: func(last, next AnswerEvent) bool {
			p, ok := last.(*pendingText)
			t, isText := next.(AnswerText)
			if !ok || !isText || p.Reasoning != t.Reasoning {
				return false
			}
			p.text.WriteString(t.Text)
			p.Logprobs = append(p.Logprobs, t.Logprobs...)
			p.Tokens = t.Tokens
			return true
		},
		Unwrap: func(ev AnswerEvent) AnswerEvent {
			if p, ok := ev.(*pendingText); ok {
				p.AnswerText.Text = p.text.String()
				return p.AnswerText
			}
			return ev
		},
	})
	return &sink{box: b, asked: time.Now()}
}

func (s *sink) push(ev AnswerEvent) { s.box.Push(ev) }

// end sends the answer's AnswerDone and closes Events.
func (s *sink) end(d Done) {
	u := s.usage
	if u.Conversation == 0 && d.Conv > 0 {
		u.Conversation = d.Conv
	}
	s.box.Push(AnswerDone{Reason: d.Reason, Err: d.Err, Usage: u})
	s.box.Close()
}

// Answer queues an API request's answer (see api.Request) and returns
// its stream. It fails at once with ErrBadRequest (wrapped, with the
// reason) for a malformed request, a settings error, ErrNoModel, or, for
// a named conversation, what Send would fail with; an error found while
// the answer is prepared (ErrTooLong) comes as its AnswerDone. Cancelling
// ctx (the client went away) stops the answer within one token, or drops
// it from the queue.
func (m *Manager) Answer(ctx context.Context, req Request) (Answer, error) {
	if err := checkRequest(req); err != nil {
		return Answer{}, err
	}
	if req.Source == "" {
		req.Source = "api"
	}
	sk := newSink()
	var j *job
	err := m.call(func() error {
		if m.s.closing {
			return ErrClosed
		}
		if !m.modelComing() {
			return ErrNoModel
		}
		var err error
		switch {
		case req.Conversation > 0:
			j, err = m.askInConversation(req.Conversation, req)
		case req.Store:
			j, err = m.askStored(req)
		default:
			j = m.enqueue(0, req.Settings, req.Source)
			j.req = &request{Request: req}
		}
		if err != nil {
			return err
		}
		j.sink, j.logprobs, j.topLogprobs = sk, req.Logprobs, req.TopLogprobs
		return nil
	})
	if err != nil {
		sk.box.Close()
		return Answer{}, err
	}
	context.AfterFunc(ctx, func() {
		_ = m.call(func() error {
			m.drop(j)
			return nil
		})
	})
	return Answer{Events: sk.box.Out()}, nil
}

// checkRequest refuses a request the session cannot answer as it is.
func checkRequest(req Request) error {
	if err := Validate(req.Settings); err != nil {
		return fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	if req.TopLogprobs < 0 || req.TopLogprobs > 20 {
		return fmt.Errorf("%w: top_logprobs %d: want 0 to 20", ErrBadRequest, req.TopLogprobs)
	}
	if len(req.Messages) == 0 {
		if req.Prompt == "" {
			return fmt.Errorf("%w: neither messages nor a prompt", ErrBadRequest)
		}
		if req.Conversation > 0 || req.Store {
			return fmt.Errorf("%w: a plain completion cannot be stored in a conversation", ErrBadRequest)
		}
		return nil
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case "system", "user", "assistant":
		default:
			return fmt.Errorf("%w: message %d has role %q: want system, user or assistant", ErrBadRequest, i, msg.Role)
		}
	}
	if last := req.Messages[len(req.Messages)-1]; (req.Conversation > 0 || req.Store) && last.Role != "user" {
		return fmt.Errorf("%w: a stored conversation's turn must end with the user's message, not the %s's", ErrBadRequest, last.Role)
	}
	return nil
}

// drop cancels an answer: one running stops within one token; a waiting
// one ends at once as cancelled. An answer that has ended is left alone.
func (m *Manager) drop(j *job) {
	j.cancel()
	if slices.Contains(m.s.active, j) {
		return
	}
	i := slices.Index(m.s.queue, j)
	if i < 0 {
		return
	}
	m.s.queue = slices.Delete(m.s.queue, i, i+1)
	if cs := m.s.convs[j.conv]; j.conv != 0 && cs != nil && cs.job == j {
		cs.job = nil
	}
	m.ended(j, Done{Conv: j.conv, Reason: ReasonCancelled})
	m.uncut(j)
}

// requestSettings are a conversation's settings for an answer an API
// request asks for in it: the conversation's system prompt, context,
// overflow policy and thinking switch, the request's sampling.
func requestSettings(conv, req Settings) Settings {
	set := req
	set.SystemPrompt, set.Context, set.Overflow, set.ThinkingOff = conv.SystemPrompt, conv.Context, conv.Overflow, conv.ThinkingOff
	return set
}

// askInConversation stores a request's turn in conv and queues its
// answer there, as Send does. It runs on the scheduling goroutine.
func (m *Manager) askInConversation(conv int64, req Request) (*job, error) {
	var turn []RequestMessage
	for _, msg := range req.Messages {
		if msg.Role != "system" { // the conversation has its own system prompt
			turn = append(turn, msg)
		}
	}
	if len(turn) == 0 || strings.TrimSpace(turn[len(turn)-1].Content) == "" {
		return nil, ErrEmptyMessage
	}
	set, err := m.ready(conv, turn[len(turn)-1].Content)
	if err != nil {
		return nil, err
	}
	if err := m.addTurn(conv, turn); err != nil {
		return nil, err
	}
	return m.enqueue(conv, requestSettings(set, req.Settings), req.Source), nil
}

// addTurn stores messages at the end of conv's branch.
func (m *Manager) addTurn(conv int64, turn []RequestMessage) error {
	ctx := context.Background()
	for _, msg := range turn {
		stored, err := m.st.AddMessage(ctx, store.Message{ConversationID: conv, Role: store.Role(msg.Role), Content: msg.Content})
		if err != nil {
			return fmt.Errorf("session: store the request: %w", err)
		}
		m.emit(MessageAdded{Message: stored})
	}
	if c, err := m.st.Conversation(ctx, conv); err == nil && c.Title == "" {
		for _, msg := range turn {
			if msg.Role == "user" {
				if err := m.st.RenameConversation(ctx, conv, titleFrom(msg.Content)); err == nil {
					m.emit(ConversationChanged{Conv: conv})
				}
				break
			}
		}
	}
	return nil
}

// settingAPIConversations lists the conversations stored API requests
// made, newest first (decimal ids, comma-separated), so that a request
// that extends one continues it after a restart too.
const settingAPIConversations = "session.api_conversations"

// apiConversationsKept bounds that list: the conversations a request is
// compared with.
const apiConversationsKept = 32

// askStored stores a request (the person's switch is on) and queues its
// answer: in the conversation of an earlier request it extends — the
// same system prompt, that conversation's messages as its first — else
// in a new one. It runs on the scheduling goroutine.
func (m *Manager) askStored(req Request) (*job, error) {
	var system []string
	var rest []RequestMessage
	for _, msg := range req.Messages {
		if msg.Role == "system" {
			system = append(system, msg.Content)
		} else {
			rest = append(rest, msg)
		}
	}
	if len(rest) == 0 {
		return nil, fmt.Errorf("%w: no user message", ErrBadRequest)
	}
	sys := strings.Join(system, "\n\n")
	ctx := context.Background()
	ids := m.apiConversations()
	for _, id := range ids {
		c, err := m.st.Conversation(ctx, id)
		if err != nil || c.Deleted() || c.SystemPrompt != sys {
			continue
		}
		if cs := m.s.convs[id]; cs != nil && cs.job != nil {
			continue
		}
		hist, err := m.st.Messages(ctx, id)
		if err != nil {
			continue
		}
		n := 0
		for _, h := range hist {
			if h.Role == store.RoleNotice {
				continue
			}
			if n >= len(rest) || string(h.Role) != rest[n].Role || h.Content != rest[n].Content {
				n = -1
				break
			}
			n++
		}
		if n <= 0 || n >= len(rest) {
			continue
		}
		j, err := m.askInConversation(id, Request{Messages: rest[n:], Settings: req.Settings, Source: req.Source})
		if err != nil {
			return nil, err
		}
		m.rememberAPIConversation(id)
		return j, nil
	}
	set := m.defaults
	set.SystemPrompt = sys
	c, err := m.newConversation("", set)
	if err != nil {
		return nil, err
	}
	m.rememberAPIConversation(c.ID)
	if err := m.addTurn(c.ID, rest); err != nil {
		return nil, err
	}
	j := m.enqueue(c.ID, requestSettings(set, req.Settings), req.Source)
	return j, nil
}

func (m *Manager) apiConversations() []int64 {
	v, _ := m.Setting(settingAPIConversations)
	var ids []int64
	for _, f := range strings.Split(v, ",") {
		var id int64
		if _, err := fmt.Sscan(strings.TrimSpace(f), &id); err == nil && id > 0 {
			ids = append(ids, id)
		}
	}
	return ids
}

func (m *Manager) rememberAPIConversation(id int64) {
	ids := append([]int64{id}, slices.DeleteFunc(m.apiConversations(), func(x int64) bool { return x == id })...)
	ids = ids[:min(len(ids), apiConversationsKept)]
	parts := make([]string, len(ids))
	for i, x := range ids {
		parts[i] = fmt.Sprint(x)
	}
	_ = m.SetSetting(settingAPIConversations, strings.Join(parts, ","))
}

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
		if n := commonPrefix(toks, ids); n > 1 && 2*n >= len(toks) && n > bestN {
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

func commonPrefix(a, b []int32) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
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
			res.events = append(res.events, Done{Conv: j.conv, Reason: ReasonCancelled})
			return
		}
		res.events = append(res.events, Done{Conv: j.conv, Reason: ReasonError, Err: err})
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
		fail(fmt.Errorf("%w: %d prompt tokens, context %d", ErrTooLong, len(ids), ctxLen))
		return
	case set.MaxTokens > 0 && len(ids)+set.MaxTokens > ctxLen:
		fail(fmt.Errorf("%w: %d prompt tokens + max_tokens %d > context %d", ErrTooLong, len(ids), set.MaxTokens, ctxLen))
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
	if seq == nil && len(disk[j.conv]) > 1 && commonPrefix(disk[j.conv], ids) > 1 {
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
	sk.push(AnswerStarted{PromptTokens: len(ids), Cached: reused})

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
		var lps []TokenLogprob
		if j.logprobs && t.ID >= 0 {
			lps = []TokenLogprob{logprobOf(tok, t)}
		}
		if parser == nil {
			if t.Text != "" || lps != nil {
				sk.push(AnswerText{Text: t.Text, Logprobs: lps, Tokens: generated})
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
	reason := Reason(result.Finish)
	switch {
	case j.ctx.Err() != nil:
		reason, err = ReasonCancelled, nil
	case err != nil:
		reason = ReasonError
		res.seq = nil
		seq.Close()
	case result.Finish == engine.FinishContext:
		reason = ReasonContext
	}
	sk.usage = Usage{
		PromptTokens: len(ids), CachedTokens: reused, CompletionTokens: len(result.Tokens),
		GenTPS: result.GenTPS, Queued: queued,
	}
	if !sk.firstAt.IsZero() {
		sk.usage.TTFT = sk.firstAt.Sub(sk.asked)
	}
	res.events = append(res.events, Done{Conv: j.conv, Reason: reason, Err: err})
}

// pushParts sends parsed output to a request's sink: the answer's text,
// its reasoning apart; tool calls, which Churon does not run, as notes of
// its reasoning. The logprobs go with the first part (or alone).
func pushParts(sk *sink, parts []chat.Part, lps []TokenLogprob, generated int) {
	for _, p := range parts {
		text := p.Text
		if p.Kind == chat.PartToolCall {
			text = toolCallNote(p)
		}
		if text == "" {
			continue
		}
		sk.push(AnswerText{Text: text, Reasoning: p.Kind != chat.PartContent, Logprobs: lps, Tokens: generated})
		lps = nil
	}
	if lps != nil {
		sk.push(AnswerText{Logprobs: lps, Tokens: generated})
	}
}

// logprobOf is a generated token's logprobs as the API gives them: its
// text (an incomplete character as is) and bytes, those of the most
// likely tokens at its place.
func logprobOf(tok *tokenizer.Tokenizer, t engine.Token) TokenLogprob {
	piece := tok.Piece(t.ID, false)
	out := TokenLogprob{Token: string(piece), Bytes: piece, Logprob: t.Logprob}
	for _, top := range t.Top {
		b := tok.Piece(top.ID, false)
		out.Top = append(out.Top, TopLogprob{Token: string(b), Bytes: b, Logprob: top.Logprob})
	}
	return out
}

// Exclusive gives the caller the machine to itself (the Compare page while
// it measures): no answer starts and the batch stands still after its
// current step until release is called; answers asked for meanwhile
// wait. It returns once the batch stands still, or with ctx's error.
func (m *Manager) Exclusive(ctx context.Context) (release func(), err error) {
	var b *Batch
	if err := m.call(func() error {
		if m.s.closing {
			return ErrClosed
		}
		m.s.exclusive++
		b = m.s.batch
		return nil
	}); err != nil {
		return nil, err
	}
	resume := func() {}
	if b != nil {
		if resume, err = b.Pause(ctx); err != nil {
			resume = func() {}
		}
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			resume()
			_ = m.call(func() error {
				m.s.exclusive--
				return nil
			})
		})
	}
	if err != nil {
		release()
		return nil, err
	}
	return release, nil
}
