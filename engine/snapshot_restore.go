package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/churon/churon/engine/backend"
)

// ReadSnapshot restores a sequence written by WriteSnapshot, or by
// WriteSnapshotHeader and WriteSnapshotSegment calls; see RestoreSnapshot.
func (m *Model) ReadSnapshot(r io.Reader, opt SequenceOptions) (*Sequence, error) {
	s, _, err := m.RestoreSnapshot(r, opt)
	return s, err
}

// RestoreSnapshot restores the state a snapshot holds and says where its
// whole segments end. opt sizes the new sequence as for NewSequence, and
// the snapshot must have been made with the same context length and KV
// type, by a sequence of this very model (Identity) and in this format
// version; otherwise the error wraps ErrSnapshotMismatch. A damaged
// snapshot, or one that is not a snapshot at all, gives an error wrapping
// ErrSnapshotCorrupt; other read errors are returned wrapped as they are.
// A torn final segment (see the format above) is no error: the state
// before it is restored, and the index counts its bytes in Tail.
//
// Nothing in the file is trusted before it is checked: lengths are
// bounded by the header and the header by the model's shape, token ids by
// the vocabulary, and a segment's rows and logits become the sequence's
// only after its checksum matched (rows it overwrote are put back if it
// did not). It never panics, whatever r yields.
//
// The restored sequence holds the same tokens, logits and KV rows as the
// one written, bit for bit: fed the same tokens, both compute the same
// logits.
func (m *Model) RestoreSnapshot(r io.Reader, opt SequenceOptions) (*Sequence, *SnapshotIndex, error) {
	if m.file == nil {
		return nil, nil, ErrClosed
	}
	sr := &snapReader{r: r}
	info, hsum, lay, err := readHeader(sr)
	if err != nil {
		return nil, nil, err
	}
	mine := m.Identity()
	mine.Context = m.contextFor(opt)
	mine.KVType = opt.KVType
	cfg := m.net.Config()
	switch {
	case mine.Hash == [32]byte{}:
		return nil, nil, fmt.Errorf("engine: read snapshot: the model's identity cannot be computed")
	case info.FileSize != mine.FileSize || info.Hash != mine.Hash || info.Architecture != snapArch(mine.Architecture):
		return nil, nil, mismatch("made with another model (%s %d bytes sha256:%x…, this is %s %d bytes sha256:%x…)",
			info.Architecture, info.FileSize, info.Hash[:6], mine.Architecture, mine.FileSize, mine.Hash[:6])
	case info.KVType != mine.KVType:
		return nil, nil, mismatch("KV cache type %v, want %v", info.KVType, mine.KVType)
	case info.Context != mine.Context:
		return nil, nil, mismatch("context of %d tokens, want %d", info.Context, mine.Context)
	case info.Layers != cfg.Layers || info.KVDim != cfg.KVDim() || info.Vocab != cfg.Vocab:
		return nil, nil, mismatch("shape %d layers × %d, vocabulary %d; the model has %d × %d, %d",
			info.Layers, info.KVDim, info.Vocab, cfg.Layers, cfg.KVDim(), cfg.Vocab)
	}
	s, err := m.NewSequence(opt)
	if err != nil {
		return nil, nil, fmt.Errorf("engine: read snapshot: %w", err)
	}
	restored := false
	defer func() {
		if !restored {
			s.Close() // its cache may hold an accelerator's memory
		}
	}()
	if s.ctxLen != info.Context || kvTypeOf(s.kvType) != info.KVType {
		return nil, nil, mismatch("the sequence made from the options has context %d, %v", s.ctxLen, kvTypeOf(s.kvType))
	}
	own := s.layout()
	if s.recurrent() && (lay.format != SnapshotFormat || lay.stateBytes != s.stateBytes) {
		return nil, nil, mismatch("format %d with recurrent states of %d bytes; this model's recurrent layers keep %d (format %d)",
			lay.format, lay.stateBytes, s.stateBytes, SnapshotFormat)
	}
	if lay.stateBytes != s.stateBytes {
		return nil, nil, mismatch("recurrent states of %d bytes for a model without recurrent layers", lay.stateBytes)
	}
	if lay.rings != nil && !slices.Equal(lay.rings, own.rings) {
		return nil, nil, mismatch("sliding-window rings of %v rows, this engine keeps %v", lay.rings, own.rings)
	}
	ix := &SnapshotIndex{SnapshotInfo: info, End: sr.off, Sum: hsum}
	sg := &segReader{sr: sr, s: s, ix: ix, lay: lay, logits: make([]float32, len(s.logits)),
		first: make([]int, cfg.Layers), held: make([]int, cfg.Layers)}
	for {
		err := sg.next()
		if err == io.EOF {
			break
		}
		var torn *tornError
		if errors.As(err, &torn) {
			if ix.Segments == 0 {
				return nil, nil, torn.err
			}
			ix.Tail = sr.off - ix.End
			break
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if ix.Segments == 0 {
		return nil, nil, corrupt("no segment after the header")
	}
	if s.recurrent() {
		k := len(s.ckpts)
		if k == 0 || s.ckpts[k-1].pos != len(s.tokens) {
			return nil, nil, corrupt("no recurrent state at the end of the snapshot's %d tokens", len(s.tokens))
		}
		if err := s.setState(s.ckpts[k-1].state); err != nil {
			return nil, nil, fmt.Errorf("engine: read snapshot: %w", err)
		}
	}
	ix.Tokens = slices.Clone(s.tokens)
	ix.Held = make([]int, cfg.Layers)
	for l := range ix.Held {
		ix.Held[l] = s.held.cache.Held(l)
	}
	restored = true
	return s, ix, nil
}

// segReader applies segments to a fresh sequence, one at a time.
type segReader struct {
	sr     *snapReader
	s      *Sequence
	ix     *SnapshotIndex
	lay    *segLayout
	logits []float32 // the segment's, until its checksum matched
	saved  []byte    // rows of the state the segment overwrites
	first  []int     // per layer, the first position the segment has rows of
	held   []int     // per layer, what the state held before the segment
	kept   []span    // the positions whose rows are in saved, per half
	states []checkpoint
}

// span is a range of positions of one half (keys or values) of a layer.
type span struct {
	layer  int
	values bool
	p0, p1 int
}

// next reads and applies one segment. It returns io.EOF at the end of
// the data, a *tornError for a torn final segment (the state is left as
// it was), or another error.
func (g *segReader) next() error {
	sr, s, le := g.sr, g.s, binary.LittleEndian
	c := s.held.cache
	off := sr.off
	sr.startSum()
	h, err := sr.read(g.lay.headSize(), "segment header")
	var short *shortError
	if errors.As(err, &short) {
		if short.got == 0 {
			return io.EOF
		}
		return &tornError{err}
	}
	if err != nil {
		return err
	}
	start, n, k, err := g.lay.checkSegHead(h, off, len(s.tokens), g.first)
	if err != nil {
		return err
	}
	end := start + n
	rs := s.rowSize()
	payload := g.lay.size(n, end, g.first, k) - int64(g.lay.headSize()) - 4*int64(n) - 4
	tb, err := sr.read(4*n, "segment's token ids")
	if err != nil {
		return tornIfShort(err)
	}
	tb = bytes.Clone(tb)
	want := sr.crc
	cs, err := sr.read(4, "checksum of the segment's token ids")
	if err != nil {
		return tornIfShort(err)
	}
	if got := le.Uint32(cs); got != want {
		err := corrupt("segment at byte %d: checksum of its token ids %08x, computed %08x", off, got, want)
		return g.tornAtEnd(err, payload)
	}
	toks, err := segTokens(tb, len(s.logits))
	if err != nil {
		return err
	}
	// Keep the rows of the state this segment overwrites, to put back
	// should it be torn: in each layer the positions it writes or, in a
	// ring, those that share their rows.
	g.saved, g.kept = g.saved[:0], g.kept[:0]
	for l, values := range s.kvHalves() {
		if !values {
			g.held[l] = c.Held(l)
		}
		sp := c.KV(l).Spec()
		w0 := max(g.first[l], end-sp.Rows())
		for _, q := range overwritten(sp, g.held[l], len(s.tokens), w0, end) {
			if g.saved, err = s.appendRows(g.saved, l, values, q[0], q[1]); err != nil {
				// The rows are in range (checkSegHead): this is the
				// device, not the file.
				return fmt.Errorf("engine: read snapshot: %w", err)
			}
			g.kept = append(g.kept, span{l, values, q[0], q[1]})
		}
	}
	restore := func() {
		saved := g.saved
		for _, k := range g.kept {
			b := (k.p1 - k.p0) * rs
			_ = s.setRows(k.layer, k.values, k.p0, saved[:b])
			saved = saved[b:]
		}
	}
	rows := max(1, snapChunk/rs)
	for l, values := range s.kvHalves() {
		w0 := max(g.first[l], end-c.KV(l).Spec().Rows())
		for p := g.first[l]; p < end; p += rows {
			k := min(end-p, rows)
			b, err := sr.read(k*rs, "KV cache")
			if err != nil {
				restore()
				return tornIfShort(err)
			}
			// Rows older than a ring keeps (a version 2 file's) are read
			// past.
			if skip := min(k, max(0, w0-p)); skip < k {
				if err := s.setRows(l, values, p+skip, b[skip*rs:]); err != nil {
					return fmt.Errorf("engine: read snapshot: %w", err)
				}
			}
		}
	}
	for done := 0; done < len(g.logits); {
		k := min(len(g.logits)-done, snapChunk/4)
		b, err := sr.read(4*k, "logits")
		if err != nil {
			restore()
			return tornIfShort(err)
		}
		for i := range k {
			g.logits[done+i] = math.Float32frombits(le.Uint32(b[4*i:]))
		}
		done += k
	}
	// The recurrent states, kept aside until the checksum says they are
	// the segment's.
	g.states = g.states[:0]
	for i := range k {
		b, err := sr.read(4, "a recurrent state's position")
		if err != nil {
			restore()
			return tornIfShort(err)
		}
		pos := int(le.Uint32(b))
		// Read straight into the checkpoint's memory: a state is
		// megabytes, copied once.
		st := make([]byte, g.lay.stateBytes)
		if err := sr.readInto(st, "a recurrent state"); err != nil {
			restore()
			return tornIfShort(err)
		}
		prev := start - 1
		if i > 0 {
			prev = g.states[i-1].pos
		}
		if pos <= prev || pos > end || (i == k-1 && pos != end) {
			restore()
			return corrupt("segment at byte %d: a recurrent state at position %d (after %d, in [%d,%d])", off, pos, prev, start, end)
		}
		g.states = append(g.states, checkpoint{pos: pos, state: st})
	}
	want = sr.crc
	cs, err = sr.read(4, "segment's checksum")
	if err != nil {
		restore()
		return tornIfShort(err)
	}
	got := le.Uint32(cs)
	if got != want {
		restore()
		return g.tornAtEnd(corrupt("segment at byte %d: checksum %08x, computed %08x", off, got, want), 0)
	}
	s.tokens = append(s.tokens[:start], toks...)
	for l := range g.first {
		if kv := c.KV(l); kv != nil {
			c.SetHeld(l, segHeld(g.held[l], start, g.first[l], end, kv.Spec().Ring))
		}
	}
	if k > 0 {
		keep := len(s.ckpts)
		for keep > 0 && s.ckpts[keep-1].pos >= g.states[0].pos {
			keep--
		}
		s.ckpts = append(s.ckpts[:keep], g.states...)
		g.states = nil
		for len(s.ckpts) > s.ckMax {
			i := s.evictable()
			s.ckpts = slices.Delete(s.ckpts, i, i+1)
		}
	}
	copy(s.logits, g.logits)
	g.ix.Segments, g.ix.End, g.ix.Sum = g.ix.Segments+1, sr.off, got
	return nil
}

// overwritten lists, as ranges, the positions of [held, length) whose
// rows writing the positions [w0, end) of a cache of spec sp replaces:
// the same positions, or in a ring those stored in the same rows.
func overwritten(sp backend.KVSpec, held, length, w0, end int) [][2]int {
	if sp.Ring == 0 {
		if p0, p1 := max(held, w0), min(length, end); p0 < p1 {
			return [][2]int{{p0, p1}}
		}
		return nil
	}
	var out [][2]int
	r0, n := sp.Row(w0), end-w0
	for q := max(held, length-sp.Ring); q < length; q++ {
		if (sp.Row(q)-r0+sp.Ring)%sp.Ring >= n {
			continue
		}
		if k := len(out) - 1; k >= 0 && out[k][1] == q {
			out[k][1]++
		} else {
			out = append(out, [2]int{q, q + 1})
		}
	}
	return out
}

// tornAtEnd decides what a failed checksum is: a torn tail if the data
// ends within the rest bytes the segment still claims, corruption if more
// follows them.
func (g *segReader) tornAtEnd(err error, rest int64) error {
	all, rerr := g.sr.skip(rest)
	if rerr != nil {
		return rerr
	}
	if !all {
		return &tornError{err}
	}
	end, rerr := g.sr.atEnd()
	if rerr != nil {
		return rerr
	}
	if end {
		return &tornError{err}
	}
	return fmt.Errorf("%w, and more data follows", err)
}
