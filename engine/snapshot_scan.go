package engine

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
)

// ScanSnapshot and Model.RestoreSnapshot). Its Tokens are its own.
type SnapshotIndex struct {
	SnapshotInfo
	// Tokens are the token ids of the state the whole segments leave.
	Tokens []int32
	// Held is, per layer, the first position whose rows the state holds:
	// 0 but in a sliding-window layer's ring, which holds its last rows
	// only (format 3; all 0 in a format 2 file, which records no rings).
	Held     []int
	Segments int   // whole segments, at least 1
	End      int64 // bytes of the header and the whole segments
	// Tail is the bytes after End: a torn final segment (0 if none).
	Tail int64
	// Sum is the checksum that ends the last whole segment (bytes
	// [End-4, End)): ScanSnapshot checks that a file still holds the
	// state an index describes before it reads on from End.
	Sum uint32
}

// held is ix.Held, nil for no index.
func (ix *SnapshotIndex) held() []int {
	if ix == nil {
		return nil
	}
	return ix.Held
}

// LogitsOffset is where in the file the state's logits start: the last
// whole segment's, Vocab float32s before its final checksum.
func (ix *SnapshotIndex) LogitsOffset() int64 { return ix.End - 4 - 4*int64(ix.Vocab) }

// ScanOptions tune ScanSnapshot.
type ScanOptions struct {
	// From is an index of this file read before: when the file still
	// holds its state (same header, and the checksum at From.End-4), the
	// scan goes on from From.End instead of the start.
	From *SnapshotIndex
	// VerifyLast reads the last whole segment found (by this scan) whole
	// and checks its checksum; one that fails is a torn tail. Without it
	// only the segments' first checksums are checked: a torn append that
	// left the right length but other bytes (a crash the file system
	// did not order) is then seen by Model.RestoreSnapshot only.
	VerifyLast bool
}

// ScanSnapshot reads what a snapshot of size bytes holds — its header,
// the token ids of its state and where its whole segments end — without
// reading KV data: per segment, a header, the token ids and the
// checksum over them. A torn final segment is left out of the state and
// counted in Tail. A file whose header is wrong, or with a segment that
// cannot be right and more data after it, gives an error wrapping
// ErrSnapshotCorrupt (or ErrSnapshotMismatch for another format version).
// It never panics, whatever r holds.
func ScanSnapshot(r io.ReaderAt, size int64, opt ScanOptions) (*SnapshotIndex, error) {
	le := binary.LittleEndian
	sr := &snapReader{r: io.NewSectionReader(r, 0, size)}
	info, hsum, lay, err := readHeader(sr)
	if err != nil {
		return nil, err
	}
	ix := &SnapshotIndex{SnapshotInfo: info, End: sr.off, Sum: hsum, Held: make([]int, info.Layers)}
	// ReadAt may report io.EOF with every byte read, at the end.
	readAt := func(p []byte, off int64) error {
		if n, err := r.ReadAt(p, off); n < len(p) {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("engine: scan snapshot: at byte %d: %w", off, err)
		}
		return nil
	}
	var b [4]byte
	if f := opt.From; f != nil && f.SnapshotInfo == info && f.Segments > 0 && f.End >= ix.End && f.End <= size {
		if readAt(b[:], f.End-4) == nil && le.Uint32(b[:]) == f.Sum && len(f.Held) == info.Layers {
			ix.Tokens, ix.Segments, ix.End, ix.Sum = slices.Clone(f.Tokens), f.Segments, f.End, f.Sum
			ix.Held = slices.Clone(f.Held)
		}
	}
	// The state before the last whole segment, to fall back on when
	// VerifyLast finds it torn.
	var prev SnapshotIndex
	last := int64(-1)
	head := make([]byte, lay.headSize())
	first := make([]int, info.Layers)
	var torn error
	for off := ix.End; off < size; {
		if size-off < int64(len(head)) {
			torn = corrupt("truncated at byte %d, in a segment header", size)
			break
		}
		if err := readAt(head, off); err != nil {
			return nil, err
		}
		start, n, k, err := lay.checkSegHead(head, off, len(ix.Tokens), first)
		if err != nil {
			return nil, err
		}
		ext := lay.size(n, start+n, first, k)
		if ext > size-off {
			torn = corrupt("truncated at byte %d, in the segment at byte %d", size, off)
			break
		}
		tb := make([]byte, 4*n+4)
		if err := readAt(tb, off+int64(len(head))); err != nil {
			return nil, err
		}
		c := crc32.Update(crc32.Checksum(head, castagnoli), castagnoli, tb[:4*n])
		if got := le.Uint32(tb[4*n:]); got != c {
			err := corrupt("segment at byte %d: checksum of its token ids %08x, computed %08x", off, got, c)
			if off+ext == size {
				torn = err
				break
			}
			return nil, err
		}
		toks, err := segTokens(tb[:4*n], info.Vocab)
		if err != nil {
			return nil, err
		}
		prev = *ix
		if start < len(ix.Tokens) {
			prev.Tokens = slices.Clone(ix.Tokens)
		}
		prev.Held = slices.Clone(ix.Held)
		ix.Tokens = append(ix.Tokens[:start], toks...)
		for l := range ix.Held {
			ix.Held[l] = segHeld(ix.Held[l], start, first[l], start+n, lay.ring(l))
		}
		if err := readAt(b[:], off+ext-4); err != nil {
			return nil, err
		}
		ix.Segments, ix.End, ix.Sum = ix.Segments+1, off+ext, le.Uint32(b[:])
		last = off
		off += ext
	}
	if opt.VerifyLast && last >= 0 {
		h := crc32.New(castagnoli)
		if _, err := io.Copy(h, io.NewSectionReader(r, last, ix.End-4-last)); err != nil {
			return nil, fmt.Errorf("engine: scan snapshot: %w", err)
		}
		if got := h.Sum32(); got != ix.Sum {
			torn = corrupt("segment at byte %d: checksum %08x, computed %08x", last, ix.Sum, got)
			*ix = prev
		}
	}
	if ix.Segments == 0 {
		if torn != nil {
			return nil, torn
		}
		return nil, corrupt("no segment after the header")
	}
	ix.Tail = size - ix.End
	return ix, nil
}
