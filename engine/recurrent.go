package engine

import (
	"fmt"
	"slices"
)

// A recurrent layer (Qwen 3.5's Gated DeltaNet) keeps a fixed-size state
// per sequence instead of a row per position, and a state cannot be cut
// back to an earlier token. So a sequence of a model with such layers
// keeps checkpoints: copies of every recurrent layer's state after the
// first pos tokens, in host memory. They are taken every CheckpointEvery
// positions (the passes that feed a sequence stop there) and just before
// the last token of every prompt fed — a turn boundary, where a
// regeneration or an edit of the last message cuts back to. Truncate
// marks the live states stale; the next feed restores the newest
// checkpoint at or before the cut and runs the tokens from there again,
// which is what Reused counts as not reused. At most MaxCheckpoints are
// kept: beyond that the one whose loss leaves the shortest gap goes (the
// newest always stays), so a long conversation keeps checkpoints spread
// over it, denser towards its end.

// DefaultCheckpointEvery is how many positions apart a sequence's
// recurrent states are checkpointed by default.
const DefaultCheckpointEvery = 256

// DefaultMaxCheckpoints is how many checkpoints a sequence keeps by
// default: every DefaultCheckpointEvery positions of a DefaultContext
// context.
const DefaultMaxCheckpoints = 16

// checkpoint is every recurrent layer's state after the first pos
// tokens, the layers' states one after another in layer order.
type checkpoint struct {
	pos   int
	state []byte
}

// recurrent reports whether the sequence's model has layers with a state.
func (s *Sequence) recurrent() bool { return s.stateBytes > 0 }

// appendState appends every recurrent layer's live state to dst.
func (s *Sequence) appendState(dst []byte) ([]byte, error) {
	c := s.held.cache
	for l := range c.Layers() {
		if st := c.Layer(l).State; st != nil {
			var err error
			if dst, err = st.AppendTo(dst); err != nil {
				return dst, fmt.Errorf("engine: layer %d's state: %w", l, err)
			}
		}
	}
	return dst, nil
}

// setState makes every recurrent layer's live state src's (as
// appendState wrote it); nil zeroes them, the state before any token.
func (s *Sequence) setState(src []byte) error {
	if src != nil && len(src) != s.stateBytes {
		return fmt.Errorf("engine: a recurrent state of %d bytes for layers holding %d", len(src), s.stateBytes)
	}
	c := s.held.cache
	off := 0
	for l := range c.Layers() {
		st := c.Layer(l).State
		if st == nil {
			continue
		}
		n := st.Bytes()
		part := make([]byte, n)
		if src != nil {
			part = src[off : off+n]
		}
		if err := st.Set(part); err != nil {
			return fmt.Errorf("engine: layer %d's state: %w", l, err)
		}
		off += n
	}
	return nil
}

// boundary is the position the next pass of a sequence at position at
// must stop at so that a checkpoint can be taken there (0: none within
// reach).
func (s *Sequence) boundary(at int) int {
	if !s.recurrent() {
		return 0
	}
	b := (at/s.ckEvery + 1) * s.ckEvery
	if s.mark > at && s.mark < b {
		b = s.mark
	}
	return b
}

// stored is called after a pass appended tokens to the sequence: at a
// boundary it takes a checkpoint.
func (s *Sequence) stored() error {
	n := len(s.tokens)
	if !s.recurrent() || s.stale || n == 0 || (n%s.ckEvery != 0 && n != s.mark) {
		return nil
	}
	if k := len(s.ckpts); k > 0 && s.ckpts[k-1].pos >= n {
		return nil
	}
	var buf []byte
	// The oldest checkpoint's memory is reused when one must go anyway;
	// a new one is sized at once (appending layer by layer would copy
	// megabytes as it grew).
	if len(s.ckpts) >= s.ckMax {
		i := s.evictable()
		buf = s.ckpts[i].state[:0]
		s.ckpts = slices.Delete(s.ckpts, i, i+1)
	} else {
		buf = make([]byte, 0, s.stateBytes)
	}
	buf, err := s.appendState(buf)
	if err != nil {
		return err
	}
	s.ckpts = append(s.ckpts, checkpoint{pos: n, state: buf})
	return nil
}

// evictable is the checkpoint to drop for a new one: the one whose loss
// leaves the shortest gap between its neighbours (the first position
// counting as one), never the newest.
func (s *Sequence) evictable() int { return evictable(s.ckpts) }

// evictable is the checkpoint of cps (by position) whose loss leaves the
// shortest gap, never the last.
func evictable(cps []checkpoint) int {
	best, gap := 0, -1
	for i := 0; i < len(cps)-1; i++ {
		prev := 0
		if i > 0 {
			prev = cps[i-1].pos
		}
		if g := cps[i+1].pos - prev; gap < 0 || g < gap {
			best, gap = i, g
		}
	}
	return best
}

// cutCheckpoints drops the checkpoints past position n, and marks the
// live states stale when they are of a later position.
func (s *Sequence) cutCheckpoints(n int) {
	if !s.recurrent() || n >= len(s.tokens) {
		return
	}
	s.stale = true
	k := len(s.ckpts)
	for k > 0 && s.ckpts[k-1].pos > n {
		k--
	}
	clear(s.ckpts[k:])
	s.ckpts = s.ckpts[:k]
}

// resumeAt is the position the next feed of the sequence runs its held
// tokens again from: all held (len(tokens)) unless a ring lost rows the
// next position needs (0) or the recurrent states are stale (the newest
// checkpoint's position, 0 without one).
func (s *Sequence) resumeAt() int {
	n := len(s.tokens)
	if s.held.cache != nil && !s.held.cache.Holds(n) {
		n = 0
	}
	if s.recurrent() && (s.stale || n < len(s.tokens)) {
		from := 0
		for _, cp := range s.ckpts {
			if cp.pos <= n {
				from = cp.pos
			}
		}
		n = from
	}
	return n
}

// rewind makes the cache hold the sequence's first resumeAt() tokens —
// the recurrent states restored from that checkpoint — and returns the
// held tokens after them, which the caller must feed again.
func (s *Sequence) rewind() ([]int32, error) {
	from := s.resumeAt()
	if s.recurrent() && (s.stale || from < len(s.tokens)) {
		var src []byte
		for _, cp := range s.ckpts {
			if cp.pos == from {
				src = cp.state
			}
		}
		if err := s.setState(src); err != nil {
			return nil, err
		}
		s.cutCheckpoints(from)
		s.stale = false
	}
	toks := slices.Clone(s.tokens[from:])
	s.tokens = s.tokens[:from]
	s.held.cache.Cut(from)
	return toks, nil
}

// Reused is how many of the sequence's held tokens its next feed will not
// run through the model again: all of them, unless Truncate cut further
// back than a sliding-window layer's ring reaches (none), or cut a model
// with recurrent layers, whose states then resume from the newest
// checkpoint at or before the cut. What a front end reports as reused.
func (s *Sequence) Reused() int { return s.resumeAt() }

// CheckpointBytes is the host memory the sequence's recurrent-state
// checkpoints take.
func (s *Sequence) CheckpointBytes() int64 {
	var n int64
	for _, cp := range s.ckpts {
		n += int64(len(cp.state))
	}
	return n
}

// liveState is a copy of every recurrent layer's state now, read holding
// the model's lock (as cache rows are for a snapshot).
func (s *Sequence) liveState() ([]byte, error) {
	s.m.exec.Lock()
	defer s.m.exec.Unlock()
	if err := s.cacheCurrent(); err != nil {
		return nil, err
	}
	return s.appendState(make([]byte, 0, s.stateBytes))
}
