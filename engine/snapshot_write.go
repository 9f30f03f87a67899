package engine

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// checkSnapshot says why the sequence cannot be written now, if it
// cannot: closed, a cache that is not (or not only) KV rows, or a model
// without an identity.
func (s *Sequence) checkSnapshot() error {
	if s.m.file == nil || s.closed {
		return ErrClosed
	}
	// A cache left on a device that failed is rebuilt first: its rows
	// there are gone.
	s.m.exec.Lock()
	err := s.m.withFallback(func() error { return s.m.revive(s) })
	s.m.exec.Unlock()
	if err != nil {
		return err
	}
	for l := range s.held.cache.Layers() {
		if lc := s.held.cache.Layer(l); lc.KV != nil && lc.State != nil {
			return fmt.Errorf("engine: write snapshot: layer %d keeps both KV rows and a state, which snapshots do not hold", l)
		}
	}
	if s.stale {
		return fmt.Errorf("engine: write snapshot: the sequence was cut and not fed since: its recurrent states are not those of its last token")
	}
	if id := s.Identity(); id.Hash == ([32]byte{}) {
		return fmt.Errorf("engine: write snapshot: the model's identity cannot be computed")
	}
	return nil
}

// WriteSnapshot writes the sequence — its identity, token ids, the KV
// rows of every cached position, in the cache's own storage type, and the
// logits after the last token — so that Model.ReadSnapshot restores a
// sequence that continues bit for bit as this one would. It is
// WriteSnapshotHeader followed by WriteSnapshotSegment(w, 0): SnapshotSize
// bytes, written in chunks of at most 1 MiB; w need not be buffered. The
// sequence must not be used by another goroutine meanwhile.
//
// The logits are those Logits returns: after Truncate, until the next
// Feed, they are still the ones after the token that was dropped.
func (s *Sequence) WriteSnapshot(w io.Writer) error {
	if err := s.checkSnapshot(); err != nil {
		return err
	}
	sw := s.newSnapWriter(w, s.SnapshotSize())
	sw.buf = append(sw.buf, s.header()...)
	return s.writeSegment(sw, 0, nil)
}

// WriteSnapshotHeader writes the header a snapshot of the sequence starts
// with (SnapshotHeaderSize bytes): the model's identity and the cache's
// shape. A file of just a header is no snapshot yet; segments follow.
func (s *Sequence) WriteSnapshotHeader(w io.Writer) error {
	if err := s.checkSnapshot(); err != nil {
		return err
	}
	if _, err := w.Write(s.header()); err != nil {
		return fmt.Errorf("engine: write snapshot: %w", err)
	}
	return nil
}

// WriteSnapshotSegment writes one segment (SnapshotSegmentSize(from,
// onto) bytes): the token ids and KV rows of positions [from, Len()) and
// the logits. Appended to a snapshot of this model and cache shape whose
// state holds at least from tokens, of which the first from are this
// sequence's, it makes the file restore to this sequence: it cuts the
// file's state to from tokens, then appends the rest. With from == Len()
// it only sets the logits (and cuts). onto is what the file holds (its
// ScanSnapshot), so that a ring the cut leaves short of its window gets
// the rows it lacks; nil means a file that holds every row this
// sequence holds before from (one it wrote, unchanged since). The
// sequence must not be used by another goroutine meanwhile.
func (s *Sequence) WriteSnapshotSegment(w io.Writer, from int, onto *SnapshotIndex) error {
	if err := s.checkSnapshot(); err != nil {
		return err
	}
	if from < 0 || from > len(s.tokens) {
		return fmt.Errorf("engine: write snapshot segment from %d: the sequence holds %d tokens", from, len(s.tokens))
	}
	return s.writeSegment(s.newSnapWriter(w, s.SnapshotSegmentSize(from, onto)), from, onto.held())
}

// newSnapWriter makes a writer for size bytes: its buffer holds a chunk
// and the row (or token id, or logit) that crosses its end.
func (s *Sequence) newSnapWriter(w io.Writer, size int64) *snapWriter {
	return &snapWriter{w: w, buf: make([]byte, 0, min(size, snapChunk+int64(s.rowSize())))}
}

// writeSegment writes the segment of positions [from, Len()) onto a
// state whose layers hold rows from onto on (see segFirst).
func (s *Sequence) writeSegment(sw *snapWriter, from int, onto []int) error {
	le := binary.LittleEndian
	end := len(s.tokens)
	n := end - from
	first := s.segFirst(from, onto)
	// The recurrent states: some checkpoints after from, then the live
	// state at the end.
	var states []checkpoint
	if s.recurrent() {
		states = s.segCheckpoints(from)
		live, err := s.liveState()
		if err != nil {
			return fmt.Errorf("engine: write snapshot: %w", err)
		}
		states = append(states, checkpoint{pos: end, state: live})
	}
	sw.startSum()
	sw.buf = append(sw.buf, snapSegTag[:]...)
	sw.buf = le.AppendUint32(sw.buf, uint32(from))
	sw.buf = le.AppendUint32(sw.buf, uint32(n))
	for _, f := range first {
		sw.buf = le.AppendUint32(sw.buf, uint32(f))
	}
	sw.buf = le.AppendUint32(sw.buf, uint32(len(states)))
	sw.buf = le.AppendUint32(sw.buf, sw.sum())
	for _, t := range s.tokens[from:] {
		sw.buf = le.AppendUint32(sw.buf, uint32(t))
		sw.maybeFlush()
	}
	sw.buf = le.AppendUint32(sw.buf, sw.sum())
	rows := max(1, snapChunk/s.rowSize())
	for l, values := range s.kvHalves() {
		for p := first[l]; p < end; p += rows {
			var err error
			if sw.buf, err = s.appendRows(sw.buf, l, values, p, min(end, p+rows)); err != nil {
				return fmt.Errorf("engine: write snapshot: %w", err)
			}
			sw.maybeFlush()
		}
	}
	for _, f := range s.logits {
		sw.buf = le.AppendUint32(sw.buf, math.Float32bits(f))
		sw.maybeFlush()
	}
	for _, st := range states {
		sw.buf = le.AppendUint32(sw.buf, uint32(st.pos))
		for b := st.state; len(b) > 0; {
			k := min(len(b), snapChunk)
			sw.buf = append(sw.buf, b[:k]...)
			b = b[k:]
			sw.maybeFlush()
		}
	}
	sw.buf = le.AppendUint32(sw.buf, sw.sum())
	return sw.flush()
}

// snapWriter buffers what is written and keeps the running checksum of
// the bytes from the last startSum on.
type snapWriter struct {
	w    io.Writer
	buf  []byte
	from int // where in buf the checksummed bytes start
	crc  uint32
	err  error
}

func (sw *snapWriter) startSum() { sw.from, sw.crc = len(sw.buf), 0 }

// sum is the checksum of the bytes since startSum, written or buffered.
func (sw *snapWriter) sum() uint32 { return crc32.Update(sw.crc, castagnoli, sw.buf[sw.from:]) }

func (sw *snapWriter) maybeFlush() {
	if len(sw.buf) >= snapChunk {
		sw.flush()
	}
}

func (sw *snapWriter) flush() error {
	sw.crc, sw.from = sw.sum(), 0
	if sw.err != nil || len(sw.buf) == 0 {
		sw.buf = sw.buf[:0]
		return sw.err
	}
	if _, err := sw.w.Write(sw.buf); err != nil {
		sw.err = fmt.Errorf("engine: write snapshot: %w", err)
	}
	sw.buf = sw.buf[:0]
	return sw.err
}
