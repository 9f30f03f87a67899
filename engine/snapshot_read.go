package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// snapReader reads exact lengths, keeping the running checksum and the
// offset for error messages.
type snapReader struct {
	r   io.Reader
	buf []byte
	crc uint32
	off int64
}

func (sr *snapReader) startSum() { sr.crc = 0 }

// read returns the next n bytes (valid until the next call). n is always
// bounded by the caller: a constant, a checked header field, or a chunk.
func (sr *snapReader) read(n int, what string) ([]byte, error) {
	if cap(sr.buf) < n {
		sr.buf = make([]byte, n)
	}
	b := sr.buf[:n]
	if err := sr.readInto(b, what); err != nil {
		return nil, err
	}
	return b, nil
}

// readInto fills b with the next len(b) bytes, for data too large to
// pass through read's buffer and copy again.
func (sr *snapReader) readInto(b []byte, what string) error {
	got, err := io.ReadFull(sr.r, b)
	sr.off += int64(got)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return &shortError{off: sr.off, got: got, what: what}
		}
		return fmt.Errorf("engine: read snapshot: %s at byte %d: %w", what, sr.off, err)
	}
	sr.crc = crc32.Update(sr.crc, castagnoli, b)
	return nil
}

// atEnd reports whether the data ends here. It consumes a byte if not.
func (sr *snapReader) atEnd() (bool, error) {
	var one [1]byte
	n, err := io.ReadFull(sr.r, one[:])
	sr.off += int64(n)
	if n == 1 {
		return false, nil
	}
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	return false, fmt.Errorf("engine: read snapshot: at byte %d: %w", sr.off, err)
}

// skip reads past n bytes and reports whether they were all there.
func (sr *snapReader) skip(n int64) (bool, error) {
	for n > 0 {
		k := int(min(n, snapChunk))
		if _, err := sr.read(k, "skipped bytes"); err != nil {
			var se *shortError
			if errors.As(err, &se) {
				return false, nil
			}
			return false, err
		}
		n -= int64(k)
	}
	return true, nil
}

// readHeader reads and checks the prefix and header, up to and with the
// header's checksum, which it also returns with the layout of the
// segments that follow.
func readHeader(sr *snapReader) (SnapshotInfo, uint32, *segLayout, error) {
	var info SnapshotInfo
	le := binary.LittleEndian
	p, err := sr.read(snapPrefix, "prefix")
	if err != nil {
		return info, 0, nil, err
	}
	if !bytes.Equal(p[:8], snapMagic[:]) {
		return info, 0, nil, corrupt("not a KV snapshot (magic %q)", p[:8])
	}
	v := le.Uint32(p[8:])
	if v != SnapshotFormat && v != snapFormat2 && v != snapFormat3 {
		return info, 0, nil, mismatch("format version %d, this engine reads %d to %d", v, snapFormat2, SnapshotFormat)
	}
	maxRings := 0
	if v != snapFormat2 {
		maxRings = 4*snapMaxLayers + 4
	}
	hlen := int(le.Uint32(p[12:]))
	if hlen < snapFixedHdr || hlen > snapFixedHdr+snapMaxArch+maxRings {
		return info, 0, nil, corrupt("header length %d", hlen)
	}
	h, err := sr.read(hlen, "header")
	if err != nil {
		return info, 0, nil, err
	}
	h = bytes.Clone(h) // read reuses its buffer
	want := sr.crc
	c, err := sr.read(4, "header checksum")
	if err != nil {
		return info, 0, nil, err
	}
	if got := le.Uint32(c); got != want {
		return info, 0, nil, corrupt("header checksum %08x, computed %08x", got, want)
	}
	info.FileSize = int64(le.Uint64(h))
	copy(info.Hash[:], h[8:40])
	alen := int(le.Uint16(h[40:]))
	if alen > snapMaxArch || alen > hlen-snapFixedHdr {
		return info, 0, nil, corrupt("architecture name of %d bytes in a header of %d", alen, hlen)
	}
	info.Architecture = string(h[42 : 42+alen])
	var f [5]int
	for i := range f {
		v := le.Uint32(h[42+alen+4*i:])
		if v > math.MaxInt32 {
			return info, 0, nil, corrupt("header field %d is %d", i, v)
		}
		f[i] = int(v)
	}
	info.Context, info.KVType, info.Layers, info.KVDim, info.Vocab = f[0], KVType(f[1]), f[2], f[3], f[4]
	info.Format = v
	switch {
	case info.FileSize < 0 || info.Context < 1 || info.Context > snapMaxTokens:
		return info, 0, nil, corrupt("context of %d tokens, model of %d bytes", info.Context, info.FileSize)
	case info.Layers < 1 || info.Layers > snapMaxLayers || info.KVDim < 1 || info.KVDim > snapMaxKVDim ||
		info.Vocab < 1 || info.Vocab > snapMaxVocab:
		return info, 0, nil, corrupt("shape %d layers × %d, vocabulary %d", info.Layers, info.KVDim, info.Vocab)
	}
	rs, ok := info.rowSize()
	if !ok {
		return info, 0, nil, corrupt("KV type %v with a KV width of %d", info.KVType, info.KVDim)
	}
	g := &segLayout{format: v, layers: info.Layers, rowSize: rs, vocab: info.Vocab, context: info.Context}
	rings := hlen - snapFixedHdr - alen
	if v == snapFormat2 {
		if rings != 0 {
			return info, 0, nil, corrupt("architecture name of %d bytes in a header of %d", alen, hlen)
		}
		return info, want, g, nil
	}
	tail := 0 // the states' bytes (version 4)
	if v != snapFormat3 {
		tail = 4
	}
	if rings != 4*info.Layers+tail {
		return info, 0, nil, corrupt("a header of %d bytes for %d layers and an architecture name of %d", hlen, info.Layers, alen)
	}
	g.rings = make([]int, info.Layers)
	for l := range g.rings {
		r := le.Uint32(h[snapFixedHdr+alen+4*l:])
		switch {
		case r == snapNoRows && v != snapFormat3:
			g.rings[l] = -1
		case r >= uint32(info.Context):
			return info, 0, nil, corrupt("layer %d: a ring of %d rows in a context of %d", l, r, info.Context)
		default:
			g.rings[l] = int(r)
		}
	}
	if tail > 0 {
		sb := le.Uint32(h[snapFixedHdr+alen+4*info.Layers:])
		if sb > 1<<31-1 {
			return info, 0, nil, corrupt("recurrent states of %d bytes", sb)
		}
		g.stateBytes = int(sb)
	}
	return info, want, g, nil
}

// ReadSnapshotInfo reads a snapshot's header without a model: the model,
// context and cache shape it is for. It checks the header's own checksum,
// nothing after it.
func ReadSnapshotInfo(r io.Reader) (SnapshotInfo, error) {
	info, _, _, err := readHeader(&snapReader{r: r})
	return info, err
}

// SnapshotIndex is what a snapshot file holds, as far as its header and
// whole segments go. A store keeps it to know what to append (see

// checkSegHead checks a segment's head (tag, range, first rows, states,
// checksum) against the state so far (length tokens) and returns its
// start, length and the recurrent states it carries, and in first (one
// per layer) where each layer's rows start.
func (g *segLayout) checkSegHead(h []byte, off int64, length int, first []int) (int, int, int, error) {
	le := binary.LittleEndian
	k := len(h) - 4
	if got, want := le.Uint32(h[k:]), crc32.Checksum(h[:k], castagnoli); got != want {
		return 0, 0, 0, corrupt("segment at byte %d: checksum of its head %08x, computed %08x", off, got, want)
	}
	if !bytes.Equal(h[:4], snapSegTag[:]) {
		return 0, 0, 0, corrupt("byte %d: not a segment (tag %q)", off, h[:4])
	}
	s, c := int64(le.Uint32(h[4:])), int64(le.Uint32(h[8:]))
	if s > int64(length) || c > int64(g.context)-s {
		return 0, 0, 0, corrupt("segment at byte %d: positions [%d,%d) after a state of %d tokens, in a context of %d",
			off, s, s+c, length, g.context)
	}
	end := s + c
	for l := range first {
		if g.format == snapFormat2 {
			first[l] = int(s)
			continue
		}
		f := int64(le.Uint32(h[12+4*l:]))
		ring := int64(g.rings[l])
		switch {
		case f > end, ring == 0 && f != s, ring > 0 && end-f > ring, ring < 0 && f != end:
			return 0, 0, 0, corrupt("segment at byte %d: layer %d's rows from position %d, for positions [%d,%d) and a ring of %d",
				off, l, f, s, end, ring)
		}
		first[l] = int(f)
	}
	if g.format == snapFormat2 || g.format == snapFormat3 {
		return int(s), int(c), 0, nil
	}
	states := int64(le.Uint32(h[12+4*len(first):]))
	if (g.stateBytes == 0) != (states == 0) || states > min(c+1, snapMaxStates) {
		return 0, 0, 0, corrupt("segment at byte %d: %d recurrent states of %d bytes for positions [%d,%d)", off, states, g.stateBytes, s, end)
	}
	return int(s), int(c), int(states), nil
}

// segTokens decodes and checks a segment's token ids.
func segTokens(b []byte, vocab int) ([]int32, error) {
	toks := make([]int32, len(b)/4)
	for i := range toks {
		t := int32(binary.LittleEndian.Uint32(b[4*i:]))
		if t < 0 || int(t) >= vocab {
			return nil, corrupt("token id %d, outside the vocabulary of %d", t, vocab)
		}
		toks[i] = t
	}
	return toks, nil
}
