package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/churon/churon/engine/arch"
)

// DecodeBatch feeds tokens[i] to seqs[i] for every i in one forward pass:
// each weight is read from memory once for all the sequences, which is
// what makes decoding several conversations (or a list of prompts) at
// once nearly as fast per step as decoding one. Afterwards each
// sequence's Logits predicts its next token. The sequences must belong
// to m and be distinct; none may be used by another goroutine during the
// call. The logits equal those of feeding each sequence alone.
func (m *Model) DecodeBatch(ctx context.Context, seqs []*Sequence, tokens []int32) error {
	if len(seqs) == 0 && len(tokens) == 0 {
		return nil
	}
	if err := m.checkBatch(seqs, len(tokens), "tokens"); err != nil {
		return err
	}
	for i, s := range seqs {
		if s.Len() >= s.ctxLen {
			return fmt.Errorf("%w: sequence %d holds %d tokens", ErrContextFull, i, s.Len())
		}
		if err := m.checkTokens(tokens[i : i+1]); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, s := range seqs {
		if err := s.refill(ctx); err != nil {
			return err
		}
	}
	lead := seqs[0]
	bt := &lead.bt
	bt.Tokens = append(lead.btoks[:0], tokens...)
	bt.Pos = lead.bpos[:0]
	bt.Groups = bt.Groups[:0]
	bt.OutRows = bt.OutRows[:0]
	for i, s := range seqs {
		bt.Pos = append(bt.Pos, int32(s.Len()))
		bt.Groups = append(bt.Groups, arch.Group{Start: i, End: i + 1})
		bt.OutRows = append(bt.OutRows, i)
	}
	lead.btoks, lead.bpos = bt.Tokens, bt.Pos
	if err := m.forwardBatch(lead, seqs, seqs); err != nil {
		return err
	}
	for i, s := range seqs {
		s.tokens = append(s.tokens, tokens[i])
		if err := s.stored(); err != nil {
			return err
		}
	}
	return nil
}

// FeedBatch appends toks[i] to seqs[i] for every i, running the prompts
// of all the sequences through the model together in forward passes of
// up to the first sequence's batch size (SequenceOptions.Batch) rows.
// Afterwards each sequence's Logits predicts the token after its last.
// Empty entries are allowed. The same rules as DecodeBatch apply.
func (m *Model) FeedBatch(ctx context.Context, seqs []*Sequence, toks [][]int32) error {
	if len(seqs) == 0 && len(toks) == 0 {
		return nil
	}
	if err := m.checkBatch(seqs, len(toks), "token lists"); err != nil {
		return err
	}
	for i, s := range seqs {
		if s.Len()+len(toks[i]) > s.ctxLen {
			return fmt.Errorf("%w: sequence %d: %d cached + %d new tokens > %d", ErrContextFull, i, s.Len(), len(toks[i]), s.ctxLen)
		}
		if err := m.checkTokens(toks[i]); err != nil {
			return err
		}
	}
	for _, s := range seqs {
		if err := s.refill(ctx); err != nil {
			return err
		}
	}
	for i, s := range seqs {
		s.prompting(len(toks[i]))
	}
	lead := seqs[0]
	done := make([]int, len(seqs)) // tokens of each sequence fed so far
	took := make([]int, len(seqs)) // tokens each takes in this pass
	var want []*Sequence
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		bt := &lead.bt
		bt.Tokens, bt.Pos = lead.btoks[:0], lead.bpos[:0]
		bt.Groups, bt.OutRows = bt.Groups[:0], bt.OutRows[:0]
		lead.bseqs = lead.bseqs[:0]
		want = want[:0]
		room := lead.batch
		for i, s := range seqs {
			rest := toks[i][done[i]:]
			k := s.chunk(len(rest), room)
			took[i] = k
			if k == 0 {
				continue
			}
			start := len(bt.Tokens)
			bt.Tokens = append(bt.Tokens, rest[:k]...)
			for j := range k {
				bt.Pos = append(bt.Pos, int32(s.Len()+j))
			}
			bt.Groups = append(bt.Groups, arch.Group{Start: start, End: start + k})
			lead.bseqs = append(lead.bseqs, s)
			if k == len(rest) {
				// The prompt ends in this pass: its last row's logits are wanted.
				bt.OutRows = append(bt.OutRows, start+k-1)
				want = append(want, s)
			}
			room -= k
		}
		lead.btoks, lead.bpos = bt.Tokens, bt.Pos
		if len(bt.Tokens) == 0 {
			return nil
		}
		if err := m.forwardBatch(lead, lead.bseqs, want); err != nil {
			return err
		}
		for i, s := range seqs {
			s.tokens = append(s.tokens, toks[i][done[i]:done[i]+took[i]]...)
			done[i] += took[i]
			if took[i] > 0 {
				if err := s.stored(); err != nil {
					return err
				}
			}
		}
	}
}

// checkBatch rejects a batch call's arguments unless it has one of its n
// per-sequence entries (its what: tokens, prompts) for each sequence, the
// model is open, and the sequences are its own, open and distinct.
func (m *Model) checkBatch(seqs []*Sequence, n int, what string) error {
	if len(seqs) != n {
		return fmt.Errorf("%w: %d sequences, %d %s", ErrBatch, len(seqs), n, what)
	}
	if m.file == nil {
		return ErrClosed
	}
	for i, s := range seqs {
		if s == nil || s.m != m {
			return fmt.Errorf("%w: sequence %d does not belong to this model", ErrBatch, i)
		}
		if s.closed {
			return ErrClosed
		}
		for _, t := range seqs[:i] {
			if t == s {
				return fmt.Errorf("%w: sequence %d appears twice", ErrBatch, i)
			}
		}
	}
	return nil
}

// forwardBatch runs lead.bt, whose group i is groups[i]'s rows, and
// copies logits row j (of OutRows) to want[j].
func (m *Model) forwardBatch(lead *Sequence, groups, want []*Sequence) error {
	vocab := m.info.VocabSize
	n := len(want) * vocab
	if cap(lead.blogits) < n {
		lead.blogits = make([]float32, n)
	}
	lead.blogits = lead.blogits[:n]
	m.exec.Lock()
	err := m.forward(&lead.bt, groups, lead.blogits)
	m.exec.Unlock()
	if err != nil {
		return err
	}
	for j, s := range want {
		copy(s.logits, lead.blogits[j*vocab:(j+1)*vocab])
	}
	return nil
}

// Stream is one completion whose forward passes are run by Model.Step,
// together with other streams': a scheduler that owns several answers
// (continuous batching) makes a stream when an answer starts, calls Step
// while any of its streams runs and drops each one as it ends. A stream
// samples, stops and streams its text as Sequence.Generate does: the
// same sequence, prompt and options give the same tokens and text,
// whatever else shares its passes (see Step for the exception on AMX
// CPUs). A stream, its sequence included, belongs to one goroutine: the
// one that calls Step and Cancel.
type Stream struct {
	g      *gen
	opt    GenerateOptions
	prompt []int32 // prompt tokens not fed yet
	next   int32   // the token to feed in the next pass
	state  streamState
	err    error

	// When this stream leads a pass (it is the first that runs), the
	// pass's sequences, streams and the sequences whose logits are
	// wanted, reused so that steady decoding does not allocate.
	seqs, want []*Sequence
	members    []*Stream
}

type streamState uint8

const (
	streamPrefill streamState = iota // prompt tokens left to feed
	streamReady                      // the logits predict the next token: sample it
	streamDecode                     // next is sampled and waits for its pass
	streamTail                       // ended at MaxTokens; next is fed (FeedTail), then done
	streamDone
)

// NewStream starts a completion of prompt (tokens to append to s; empty
// if s already holds them) for Model.Step to run. It fails as Generate
// would before its first pass: bad sampling parameters, an empty prompt,
// a token outside the vocabulary, a prompt that does not fit in the
// context (ErrContextFull).
func (s *Sequence) NewStream(prompt []int32, opt GenerateOptions, onToken func(Token) error) (*Stream, error) {
	st := &Stream{opt: opt, prompt: prompt}
	g, err := s.newGen(prompt, &st.opt, time.Now(), onToken)
	st.g = g
	if err == nil && (s.m.file == nil || s.closed) {
		err = ErrClosed
	}
	if err == nil && s.Len()+len(prompt) > s.ctxLen {
		g.res.Finish = FinishContext
		err = fmt.Errorf("%w: %d cached + %d new tokens > %d", ErrContextFull, s.Len(), len(prompt), s.ctxLen)
	}
	if err == nil {
		err = s.m.checkTokens(prompt)
	}
	if err != nil {
		st.state, st.err = streamDone, err
		return nil, err
	}
	if s.Refills() {
		// Truncate cut further back than a sliding-window layer's ring
		// reaches, or cut a recurrent model: the held tokens after where
		// the cache resumes run again, as the start of the prompt, in the
		// same chunks between the other streams' steps that a prompt
		// takes (Feed would run them in one go and hold the batch).
		again, err := s.rewind()
		if err != nil {
			st.state, st.err = streamDone, err
			return nil, err
		}
		st.prompt = append(again, prompt...)
	}
	s.prompting(len(st.prompt))
	if len(st.prompt) == 0 {
		st.state = streamReady
		g.prompted(time.Now())
	}
	return st, nil
}

// Sequence is the stream's sequence.
func (st *Stream) Sequence() *Sequence { return st.g.s }

// Done reports whether the stream has ended (Result is final).
func (st *Stream) Done() bool { return st.state == streamDone }

// Decoding reports whether the stream's prompt is processed: it takes one
// row of each pass from now on.
func (st *Stream) Decoding() bool { return st.state != streamPrefill && st.state != streamDone }

// PromptLeft is the number of prompt tokens still to feed.
func (st *Stream) PromptLeft() int { return len(st.prompt) }

// Result is the completion's summary and, when it failed, why: an error
// of onToken or of a forward pass it was part of.
func (st *Stream) Result() (Result, error) { return st.g.res, st.err }

// Cancel ends the stream with FinishCancelled, releasing the text held
// back (through onToken), unless it has ended already.
func (st *Stream) Cancel() {
	switch st.state {
	case streamDone:
		return
	case streamTail: // the answer is complete; only its last token is not fed
		st.state = streamDone
		return
	}
	st.state = streamDone
	if _, err := st.g.finish(FinishCancelled); err != nil {
		st.err = err
	}
}

// sample draws the next token from the sequence's logits and moves the
// stream on.
func (st *Stream) sample() {
	id, err := st.g.step()
	switch {
	case err != nil:
		st.state, st.err = streamDone, err
	case !st.g.done:
		st.next, st.state = id, streamDecode
	case st.opt.FeedTail && st.g.tail && st.g.s.Len() < st.g.s.ctxLen:
		st.next, st.state = id, streamTail
	default:
		st.state = streamDone
	}
}

// fail ends the stream because a pass it was part of failed.
func (st *Stream) fail(err error) {
	st.state, st.err = streamDone, err
	st.g.done = true
	st.g.res.Finish = FinishError
}

// Step runs one forward pass for streams, which must belong to m and to
// distinct sequences: every decoding stream feeds its sampled token (one
// row each), and the streams whose prompts are not processed yet feed
// up to prefill of their prompt tokens between them, the earliest in the
// slice first (prefill <= 0: up to the first such stream's batch size,
// SequenceOptions.Batch). Then every stream whose logits now predict a
// new token samples it, calling its onToken; Step returns once all of
// them have. Streams that have ended are skipped; the caller drops them.
//
// A stream's tokens do not depend on which other streams share its
// passes nor on how its prompt is split: every row of a pass is computed
// with the arithmetic of a pass of its own — except on CPUs with AMX
// (quant.AMX), where a pass of 16 rows or more runs its matrix products
// on tile kernels, so that there a decode step that shares a pass with a
// prompt chunk, or with 15 other answers, can differ from the answer run
// alone in the last bits of its logits (CHURON_NOAMX=1 restores exact
// equality, at the cost of prompt speed).
//
// When the pass fails, every stream in it ends with FinishError and the
// error, which Step returns as well.
func (m *Model) Step(streams []*Stream, prefill int) error {
	var leader *Stream
	for i, st := range streams {
		if st.state == streamDone {
			continue
		}
		s := st.g.s
		if s.m != m {
			return fmt.Errorf("%w: stream %d does not belong to this model", ErrBatch, i)
		}
		for _, o := range streams[:i] {
			if o.state != streamDone && o.g.s == s {
				return fmt.Errorf("%w: streams %d and another share a sequence", ErrBatch, i)
			}
		}
	}
	for _, st := range streams {
		if st.state == streamReady {
			st.sample() // a prompt that was empty: the logits were there
		}
		if prefill <= 0 && st.state == streamPrefill {
			prefill = st.g.s.batch
		}
		if leader == nil && st.state != streamDone {
			leader = st
		}
	}
	if leader == nil {
		return nil
	}
	lead := leader.g.s
	if m.file == nil {
		return ErrClosed
	}
	bt := &lead.bt
	bt.Tokens, bt.Pos = lead.btoks[:0], lead.bpos[:0]
	bt.Groups, bt.OutRows = bt.Groups[:0], bt.OutRows[:0]
	leader.seqs, leader.members, leader.want = leader.seqs[:0], leader.members[:0], leader.want[:0]
	room := prefill
	for _, st := range streams {
		var toks []int32
		switch st.state {
		case streamDecode, streamTail:
			st.g.s.one[0] = st.next
			toks = st.g.s.one[:]
		case streamPrefill:
			// chunk keeps a pass within what a ring may take at once.
			toks = st.prompt[:st.g.s.chunk(len(st.prompt), room)]
			room -= len(toks)
		}
		if len(toks) == 0 {
			continue
		}
		s, start := st.g.s, len(bt.Tokens)
		bt.Tokens = append(bt.Tokens, toks...)
		for j := range toks {
			bt.Pos = append(bt.Pos, int32(s.Len()+j))
		}
		bt.Groups = append(bt.Groups, arch.Group{Start: start, End: start + len(toks)})
		leader.seqs = append(leader.seqs, s)
		leader.members = append(leader.members, st)
		if st.state == streamDecode || st.state == streamPrefill && len(toks) == len(st.prompt) {
			bt.OutRows = append(bt.OutRows, start+len(toks)-1)
			leader.want = append(leader.want, s)
		}
	}
	lead.btoks, lead.bpos = bt.Tokens, bt.Pos
	if len(bt.Tokens) == 0 {
		return nil
	}
	if err := m.forwardBatch(lead, leader.seqs, leader.want); err != nil {
		for _, st := range leader.members {
			st.fail(err)
		}
		return err
	}
	now := time.Now()
	for i, st := range leader.members {
		s := st.g.s
		g := bt.Groups[i]
		s.tokens = append(s.tokens, bt.Tokens[g.Start:g.End]...)
		if err := s.stored(); err != nil {
			st.fail(err)
			continue
		}
		switch st.state {
		case streamTail:
			st.state = streamDone
		case streamDecode:
			st.sample()
		case streamPrefill:
			st.prompt = st.prompt[g.End-g.Start:]
			if len(st.prompt) == 0 {
				st.g.prompted(now)
				st.sample()
			}
		}
	}
	return nil
}

// SequenceBytes is the memory a sequence made with opt holds for its
// cache — every layer's KV rows for the whole context, any layer's state
// and its checkpoints — so that a scheduler can count what its answers take before
// it makes them.
func (m *Model) SequenceBytes(opt SequenceOptions) int64 {
	kvType, err := opt.KVType.quantType()
	if err != nil || m.net == nil {
		return 0
	}
	var n int64
	for _, l := range m.net.CacheSpec(kvType, m.contextFor(opt)) {
		if l.KV != nil {
			n += l.KV.Bytes()
		}
		n += int64(l.StateBytes)
		if l.StateBytes > 0 {
			ck := opt.MaxCheckpoints
			if ck <= 0 {
				ck = DefaultMaxCheckpoints
			}
			n += int64(ck) * int64(l.StateBytes) // the checkpoints, at most
		}
	}
	return n
}
