package engine

import (
	"encoding/binary"
	"hash/crc32"
)

// SnapshotFormat is the version of the KV snapshot format this engine
// writes and reads. It is bumped whenever the layout changes, and also
// whenever the engine computes different keys or values for the same
// tokens (a new kernel that rounds differently, a RoPE fix): a snapshot
// from before would still load, but a restored conversation would no
// longer continue exactly as a cold prefill does.
//
// Version 2 made snapshots append-only (a header, then segments); files
// of version 1 read as a mismatch and are replaced.
const SnapshotFormat uint32 = 2

// The snapshot file, all integers little-endian, is a header and then
// segments, each a checked piece of the sequence's history:
//
//	header
//	0       8       magic "CHURONKV"
//	8       4       format version (SnapshotFormat)
//	12      4       H: header length
//	16      H       file size u64, hash [32], architecture (u16 length +
//	                bytes), context u32, KV type u32, layers u32, KV
//	                width u32, vocabulary u32
//	16+H    4       CRC-32C of bytes [0, 16+H)
//
//	segment: n positions from start (L layers, rows of R bytes, V logits)
//	0       4       tag "KSEG"
//	4       4       start
//	8       4       n
//	12      4       CRC-32C of the segment's bytes before it
//	16      4n      token ids of positions [start, start+n), int32
//	16+4n   4       CRC-32C of the segment's bytes before it
//	20+4n   2·L·n·R per layer: the keys of positions [start, start+n),
//	                then their values, exactly as the cache stores them
//	…       4V      logits after the segment's last token, float32
//	end-4   4       CRC-32C of every byte of the segment before it
//
// The state a file holds starts empty; each segment truncates it to start
// (at most its length so far), then appends its n tokens with their rows,
// and its logits become the state's. WriteSnapshot writes the header and
// one segment from position 0. A store keeping a conversation appends a
// segment per save instead of rewriting the file: after a follow-up turn
// it writes only the new positions; after an edit or a regeneration a
// segment that starts before the end (the common prefix) and so cuts the
// rest first.
//
// Appending makes a torn write possible: a process killed, or a machine
// stopped, in the middle of an append leaves a final segment that is
// short or fails its checksum, with nothing after it. Since every segment
// before it is whole, the file still holds exactly the state of the save
// before, so a reader drops the torn tail and restores that state; the
// next append cuts the tail off first. A damaged segment with more data
// after it cannot be a torn write: that file is corrupt. So is a file
// without one whole segment (written whole, then renamed into place, a
// first snapshot is never torn).
//
// The header has its own checksum so that a flipped bit there reads as
// corruption, not as "another model", and so the header can be trusted
// before any size in it is used. A segment's first checksum lets its
// size be trusted, so a flipped bit in an earlier segment's length is
// corruption, never mistaken for a torn end; its second lets its token
// ids be trusted (ScanSnapshot) without reading its KV data. CRC-32C (hardware-accelerated, ~10 GB/s) rather than SHA-256
// because it guards against accidents (a torn write, a bad sector), not
// against someone forging a file: a file that matches the model's
// identity can only change numbers in a cache, never memory safety, since
// every length is checked against the model's own shape.
var (
	snapMagic  = [8]byte{'C', 'H', 'U', 'R', 'O', 'N', 'K', 'V'}
	snapSegTag = [4]byte{'K', 'S', 'E', 'G'}
)

const (
	snapPrefix   = 16
	snapMaxArch  = 64
	snapFixedHdr = 8 + 32 + 2 + 5*4 // header bytes besides the architecture name
	snapSegHead  = 16               // tag, start, n and their checksum
	snapSegFixed = snapSegHead + 8  // and the two other checksums
	snapChunk    = 1 << 20          // bytes per write or read of the body
	// Bounds on a header's shape, so that no size computed from one
	// overflows, whatever the file says.
	snapMaxTokens = 1 << 26
	snapMaxLayers = 1 << 12
	snapMaxKVDim  = 1 << 20
	snapMaxVocab  = 1 << 24
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// SnapshotInfo is what a snapshot's header says, read without a model.
// How many tokens the file holds is in its segments (see ScanSnapshot).
type SnapshotInfo struct {
	Identity
	Layers int
	KVDim  int // KV heads × head size
	Vocab  int
}

// rowSize is the bytes of one position's keys (or values) of one layer.
func (info *SnapshotInfo) rowSize() (int, bool) {
	qt, err := info.KVType.quantType()
	if err != nil {
		return 0, false
	}
	return qt.RowSize(info.KVDim)
}

// segmentSize is the bytes of a segment of n positions.
func (info *SnapshotInfo) segmentSize(n int, rowSize int) int64 {
	return segmentBytes(n, info.Layers, rowSize, info.Vocab)
}

// segmentBytes is the bytes of a segment of n positions of a model of
// the given layers and vocabulary, rowSize bytes a row: its head and
// checksums, the token ids, K and V rows per layer, and the logits.
func segmentBytes(n, layers, rowSize, vocab int) int64 {
	return snapSegFixed + 4*int64(n) + 2*int64(layers)*int64(n)*int64(rowSize) + 4*int64(vocab)
}

// snapArch is the architecture name as a header holds it.
func snapArch(a string) string {
	if len(a) > snapMaxArch {
		return a[:snapMaxArch]
	}
	return a
}

// SnapshotInfo is what the header of the sequence's snapshot says.
func (s *Sequence) SnapshotInfo() SnapshotInfo {
	id := s.Identity()
	id.Architecture = snapArch(id.Architecture)
	cfg := s.m.net.Config()
	return SnapshotInfo{Identity: id, Layers: cfg.Layers, KVDim: cfg.KVDim(), Vocab: cfg.Vocab}
}

func (s *Sequence) header() []byte {
	info := s.SnapshotInfo()
	arch := info.Architecture
	le := binary.LittleEndian
	b := make([]byte, 0, snapPrefix+snapFixedHdr+len(arch)+4)
	b = append(b, snapMagic[:]...)
	b = le.AppendUint32(b, SnapshotFormat)
	b = le.AppendUint32(b, uint32(snapFixedHdr+len(arch)))
	b = le.AppendUint64(b, uint64(info.FileSize))
	b = append(b, info.Hash[:]...)
	b = le.AppendUint16(b, uint16(len(arch)))
	b = append(b, arch...)
	for _, v := range []int{info.Context, int(info.KVType), info.Layers, info.KVDim, info.Vocab} {
		b = le.AppendUint32(b, uint32(v))
	}
	return le.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// SnapshotHeaderSize is the number of bytes WriteSnapshotHeader writes.
func (s *Sequence) SnapshotHeaderSize() int64 {
	return int64(snapPrefix + snapFixedHdr + len(snapArch(s.m.net.Config().Arch)) + 4)
}

// SnapshotSegmentSize is the number of bytes WriteSnapshotSegment(w,
// from) writes, for from in [0, Len()].
func (s *Sequence) SnapshotSegmentSize(from int) int64 {
	return segmentBytes(max(0, len(s.tokens)-from), s.m.net.Config().Layers, s.rowSize(), len(s.logits))
}

// SnapshotSize is the number of bytes WriteSnapshot writes: the header
// and one segment of every cached position.
func (s *Sequence) SnapshotSize() int64 {
	return s.SnapshotHeaderSize() + s.SnapshotSegmentSize(0)
}
