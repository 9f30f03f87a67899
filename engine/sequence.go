package engine

import (
	"context"
	"fmt"
	"runtime"
	"strings"

	"github.com/churon/churon/engine/arch"
	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// SequenceOptions size a sequence's KV cache.
type SequenceOptions struct {
	// Context is the cache capacity in tokens; 0 means the model's trained
	// context, capped at DefaultContext.
	Context int
	// KVType is how keys and values are stored: F16 by default, as
	// llama.cpp does.
	KVType KVType
	// Batch is the most tokens run through the model in one forward pass
	// while feeding a prompt; 0 means DefaultBatch.
	Batch int
	// CheckpointEvery and MaxCheckpoints bound the checkpoints of a model
	// with recurrent layers (recurrent.go): taken every CheckpointEvery
	// positions (0: DefaultCheckpointEvery) and at turn boundaries, at
	// most MaxCheckpoints kept (0: DefaultMaxCheckpoints).
	CheckpointEvery, MaxCheckpoints int
}

// KVType selects the KV cache's storage type. The values are written in
// KV snapshots: new types are appended, never renumbered.
type KVType int

const (
	KVF16 KVType = iota // half precision: llama.cpp's default
	KVF32               // full precision: twice the memory
	// KVQ8_0 stores keys and values as Q8_0 blocks: 8.5 bits a value,
	// 53 % of F16's memory (and of its snapshots). It needs a KV width
	// (KV heads × head size) that is a multiple of 32, as every real
	// model's is. Quality against F16 (TestKVQ8Quality): on stories260K
	// the logits keep a mean cosine of 0.99986 (min 0.9959) and 64 of 64
	// greedy tokens; on a random-weight Qwen2-shaped model the mean
	// cosine is 0.9984, about 2.4× the deviation of F16 from F32.
	KVQ8_0
)

// String names the type as settings and snapshots spell it.
func (t KVType) String() string {
	switch t {
	case KVF16:
		return "f16"
	case KVF32:
		return "f32"
	case KVQ8_0:
		return "q8_0"
	}
	return fmt.Sprintf("kvtype(%d)", int(t))
}

// ParseKVType reads a KV cache type name: f16, f32 or q8_0 (any case).
func ParseKVType(s string) (KVType, error) {
	for _, t := range []KVType{KVF16, KVF32, KVQ8_0} {
		if strings.EqualFold(s, t.String()) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("engine: unknown KV cache type %q (want f16, f32 or q8_0)", s)
}

// quantType is the storage type of the cache.
func (t KVType) quantType() (quant.Type, error) {
	switch t {
	case KVF16:
		return quant.F16, nil
	case KVF32:
		return quant.F32, nil
	case KVQ8_0:
		return quant.Q8_0, nil
	}
	return 0, fmt.Errorf("engine: unknown KV cache type %d", int(t))
}

// kvTypeOf is quantType's inverse, for a cache's storage type.
func kvTypeOf(t quant.Type) KVType {
	switch t {
	case quant.F32:
		return KVF32
	case quant.Q8_0:
		return KVQ8_0
	}
	return KVF16
}

// DefaultContext caps the context of a new sequence when none is asked
// for, so a model trained on 128k tokens does not claim gigabytes of KV
// cache by default.
const DefaultContext = 4096

// DefaultBatch is the prompt chunk size.
const DefaultBatch = 256

// Sequence is one stream of tokens with its own KV cache: a conversation
// owns one. It is not safe for concurrent use.
type Sequence struct {
	m       *Model
	held    *heldCache // every layer's state, on its layer's device
	closed  bool
	ctxLen  int
	kvType  quant.Type
	tokens  []int32
	logits  []float32 // logits after the last fed token
	batch   int
	run     int // the most positions a pass may add (Cache.MaxRun); 0: no limit
	pos     []int32
	outRows []int
	one     [1]int32 // the token a decode step feeds, without allocating

	// Recurrent layers (recurrent.go): the bytes of their states, the
	// checkpoints' spacing and number, the checkpoints (by position), the
	// position before the last token of the prompt being fed (a turn
	// boundary, checkpointed), and whether Truncate left the live states
	// at a later position than the tokens.
	stateBytes     int
	ckEvery, ckMax int
	ckpts          []checkpoint
	mark           int
	stale          bool

	// Buffers for the batched calls this sequence leads (FeedBatch uses
	// the first sequence's), reused so steady decoding does not allocate.
	bt      arch.Batch
	btoks   []int32
	bpos    []int32
	bseqs   []*Sequence // the sequence of each group of bt
	blogits []float32
	self    [1]*Sequence
}

// NewSequence allocates a sequence and its KV cache.
func (m *Model) NewSequence(opt SequenceOptions) (*Sequence, error) {
	if m.file == nil {
		return nil, ErrClosed
	}
	cfg := m.net.Config()
	ctxLen := m.contextFor(opt)
	kvType, err := opt.KVType.quantType()
	if err != nil {
		return nil, err
	}
	if opt.KVType == KVQ8_0 && cfg.KVDim()%32 != 0 {
		return nil, fmt.Errorf("engine: a Q8_0 KV cache needs a KV width that is a multiple of 32; this model's is %d (use f16)", cfg.KVDim())
	}
	if err := (backend.KVSpec{Type: kvType, Context: ctxLen, Dim: cfg.KVDim()}).Check(); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	batch := opt.Batch
	if batch <= 0 {
		batch = DefaultBatch
	}
	s := &Sequence{m: m, ctxLen: ctxLen, kvType: kvType, batch: batch, logits: make([]float32, cfg.Vocab), held: &heldCache{m: m}}
	for _, l := range m.net.CacheSpec(kvType, ctxLen) {
		s.stateBytes += l.StateBytes
	}
	s.ckEvery, s.ckMax = opt.CheckpointEvery, opt.MaxCheckpoints
	if s.ckEvery <= 0 {
		s.ckEvery = DefaultCheckpointEvery
	}
	if s.ckMax <= 0 {
		s.ckMax = DefaultMaxCheckpoints
	}
	m.exec.Lock()
	err = m.withFallback(func() error { return m.revive(s) })
	m.exec.Unlock()
	if err != nil {
		return nil, err
	}
	s.run = s.held.cache.MaxRun()
	// Device memory goes back when a sequence nobody closed is collected.
	runtime.AddCleanup(s, (*heldCache).release, s.held)
	return s, nil
}

// heldCache is a sequence's cache, apart from the sequence so that the
// cleanup of a sequence nobody closed can release it (a cleanup must not
// hold what it cleans up after).
type heldCache struct {
	m     *Model
	cache *backend.Cache
}

func (h *heldCache) release() {
	h.m.exec.Lock()
	defer h.m.exec.Unlock()
	if h.cache != nil {
		h.cache.Release()
	}
}

// Close returns the sequence's cache memory to its devices. The sequence
// must not be used afterwards. Closing is optional on the CPU, where the
// garbage collector frees the cache, but gives an accelerator's memory
// back at once.
func (s *Sequence) Close() {
	s.m.exec.Lock()
	defer s.m.exec.Unlock()
	if s.held.cache != nil {
		s.held.cache.Release()
	}
	s.held.cache, s.closed = nil, true
}

// contextFor is the capacity NewSequence gives a sequence made with opt.
func (m *Model) contextFor(opt SequenceOptions) int {
	ctxLen := opt.Context
	if ctxLen <= 0 {
		ctxLen = min(m.net.Config().Context, DefaultContext)
	}
	if ctxLen <= 0 {
		ctxLen = DefaultContext
	}
	return ctxLen
}

// Len is the number of tokens in the cache.
func (s *Sequence) Len() int { return len(s.tokens) }

// Context is the cache capacity in tokens.
func (s *Sequence) Context() int { return s.ctxLen }

// Tokens returns the tokens in the cache (do not modify).
func (s *Sequence) Tokens() []int32 { return s.tokens }

// Logits returns the logits predicting the token after the last one fed
// (do not modify; valid until the next Feed).
func (s *Sequence) Logits() []float32 { return s.logits }

// KVBytes is the memory held by the sequence's cache: every layer's KV
// rows and state, and the recurrent states' checkpoints.
func (s *Sequence) KVBytes() int64 {
	if s.held.cache == nil {
		return 0
	}
	return s.held.cache.Bytes() + s.CheckpointBytes()
}

// Truncate drops cached tokens from position n on, so the next Feed
// continues from there. Entries past n are simply overwritten later.
// A model's recurrent layers resume from the newest checkpoint at or
// before n (see Reused), running the tokens after it again.
// A sliding-window layer keeps only the last rows of its ring
// (backend.RingMargin beyond its window): cut back further than that, the
// sequence no longer holds what position n needs, and the next Feed first
// runs the first n tokens through the model again — what a cold prefill
// of them would cost, with the same logits.
func (s *Sequence) Truncate(n int) error {
	if n < 0 || n > len(s.tokens) {
		return fmt.Errorf("engine: truncate to %d: sequence holds %d tokens", n, len(s.tokens))
	}
	s.cutCheckpoints(n)
	s.tokens = s.tokens[:n]
	if s.held.cache != nil {
		s.held.cache.Cut(n)
	}
	return nil
}

// Refills reports whether the next Feed runs some of the sequence's held
// tokens again before its own: Truncate cut it further back than its
// sliding-window layers' rings reach (all of them), or cut a model with
// recurrent layers (those after the checkpoint it resumes from, Reused).
func (s *Sequence) Refills() bool {
	return s.held.cache != nil && (s.stale || !s.held.cache.Holds(len(s.tokens)))
}

// chunk is how many of rest tokens the next pass of s feeds, at most
// limit: up to a checkpoint's position at most.
func (s *Sequence) chunk(rest, limit int) int {
	n := min(limit, rest)
	if s.run > 0 {
		n = min(n, s.run)
	}
	if b := s.boundary(len(s.tokens)); b > 0 {
		n = min(n, b-len(s.tokens))
	}
	return n
}

// prompting marks the position before the last of n tokens about to be
// fed as a turn boundary, checkpointed on the way.
func (s *Sequence) prompting(n int) {
	s.mark = 0
	if n >= 2 {
		s.mark = len(s.tokens) + n - 1
	}
}

// refill runs the sequence's tokens through the model again from the
// start when its cache no longer holds the rows its next position needs
// (Truncate). Cancelled, it leaves the sequence holding the tokens it
// ran so far.
func (s *Sequence) refill(ctx context.Context) error {
	if !s.Refills() {
		return nil
	}
	toks, err := s.rewind()
	if err != nil {
		return err
	}
	return s.feed(ctx, toks, nil)
}

// Feed appends tokens to the sequence, running them through the model in
// batches. Afterwards Logits holds the prediction after the last token.
func (s *Sequence) Feed(ctx context.Context, toks []int32) error {
	return s.feed(ctx, toks, nil)
}

// FeedAll is Feed that also returns the logits after every fed token,
// len(toks)×vocab floats: the conformance tests and the quality metrics
// of the compare view use it.
func (s *Sequence) FeedAll(ctx context.Context, toks []int32) ([]float32, error) {
	all := make([]float32, len(toks)*s.m.info.VocabSize)
	if err := s.feed(ctx, toks, all); err != nil {
		return nil, err
	}
	return all, nil
}

// checkTokens refuses token ids outside the model's vocabulary.
func (m *Model) checkTokens(toks []int32) error {
	vocab := m.info.VocabSize
	for _, t := range toks {
		if t < 0 || int(t) >= vocab {
			return fmt.Errorf("engine: token id %d outside vocabulary of %d", t, vocab)
		}
	}
	return nil
}

func (s *Sequence) feed(ctx context.Context, toks []int32, all []float32) error {
	if s.m.file == nil || s.closed {
		return ErrClosed
	}
	if len(toks) == 0 {
		return nil
	}
	if len(s.tokens)+len(toks) > s.ctxLen {
		return fmt.Errorf("%w: %d cached + %d new tokens > %d", ErrContextFull, len(s.tokens), len(toks), s.ctxLen)
	}
	if err := s.m.checkTokens(toks); err != nil {
		return err
	}
	if err := s.refill(ctx); err != nil {
		return err
	}
	vocab := s.m.info.VocabSize
	s.prompting(len(toks))
	for done := 0; done < len(toks); {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := s.chunk(len(toks)-done, s.batch)
		chunk := toks[done : done+n]
		s.pos = s.pos[:0]
		for i := range n {
			s.pos = append(s.pos, int32(len(s.tokens)+i))
		}
		s.outRows = s.outRows[:0]
		out := s.logits
		if all != nil {
			for i := range n {
				s.outRows = append(s.outRows, i)
			}
			out = all[done*vocab : (done+n)*vocab]
		} else if done+n == len(toks) {
			s.outRows = append(s.outRows, n-1)
		}
		s.bt.Tokens, s.bt.Pos, s.bt.OutRows = chunk, s.pos, s.outRows
		s.bt.Groups = append(s.bt.Groups[:0], arch.Group{Start: 0, End: n})
		s.self[0] = s
		s.m.exec.Lock()
		err := s.m.forward(&s.bt, s.self[:], out)
		s.m.exec.Unlock()
		if err != nil {
			return err
		}
		s.tokens = append(s.tokens, chunk...)
		done += n
		if err := s.stored(); err != nil {
			return err
		}
	}
	if all != nil {
		copy(s.logits, all[(len(toks)-1)*vocab:])
	}
	return nil
}
