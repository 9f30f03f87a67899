package engine

import (
	"encoding/binary"
	"hash/crc32"
	"slices"
)

// SnapshotFormat is the version of the KV snapshot format this engine
// writes. It is bumped whenever the layout changes, and also whenever the
// engine computes different keys or values for the same tokens (a new
// kernel that rounds differently, a RoPE fix): a snapshot from before
// would still load, but a restored conversation would no longer continue
// exactly as a cold prefill does.
//
// Version 2 made snapshots append-only (a header, then segments); files
// of version 1 read as a mismatch and are replaced. Version 3 keeps only
// the rows each layer holds — a sliding-window layer's ring the last
// ones — with each layer's rings in the header and each segment's first
// row per layer in its head. Version 2 files still read (their rows are
// the same computation; a ring keeps the last of them), and a store
// rewrites them whole at its next save. Version 4 holds the states of
// recurrent layers (Qwen 3.5's Gated DeltaNet): the header says how many
// bytes a state of all of them takes and marks the layers without KV
// rows, and each segment carries the states at some of its checkpoints
// (snapCheckpoints at most; a reader takes any number) and at its end.
// Versions 2 and 3 still read for models without recurrent layers; a
// model with them refuses them as a mismatch.
const SnapshotFormat uint32 = 4

// snapFormat2 is the last version before rings, snapFormat3 the last
// before recurrent states; both still read.
const (
	snapFormat2 uint32 = 2
	snapFormat3 uint32 = 3
)

// snapNoRows marks, in a version 4 header's rings, a layer without KV
// rows (a recurrent layer); segLayout.rings holds it as -1.
const snapNoRows = 0xFFFFFFFF

// snapMaxStates bounds the states one segment may carry.
const snapMaxStates = 1 << 10

// The snapshot file, all integers little-endian, is a header and then
// segments, each a checked piece of the sequence's history:
//
//	header
//	0       8       magic "CHURONKV"
//	8       4       format version (SnapshotFormat)
//	12      4       H: header length
//	16      H       file size u64, hash [32], architecture (u16 length +
//	                bytes), context u32, KV type u32, layers u32, KV
//	                width u32, vocabulary u32, then per layer the rows of
//	                its ring u32 (0: a row per position, snapNoRows: no
//	                rows; version 3), then the bytes B of the recurrent
//	                layers' states u32 (version 4)
//	16+H    4       CRC-32C of bytes [0, 16+H)
//
//	segment: n positions from start (L layers, rows of R bytes, V logits)
//	0       4       tag "KSEG"
//	4       4       start
//	8       4       n
//	12      4L      per layer, f: the first position it has rows of here
//	                (version 3; version 2 has no such field, f = start)
//	…       4       k: the recurrent states it carries (version 4)
//	…       4       CRC-32C of the segment's bytes before it
//	16+4L   4n      token ids of positions [start, start+n), int32
//	…       4       CRC-32C of the segment's bytes before it
//	…       per layer: the keys of positions [f, start+n), then their
//	                values, R bytes a row, exactly as the cache stores them
//	…       4V      logits after the segment's last token, float32
//	…       k(4+B)  (version 4) k states: the position u32 and B bytes of
//	                every recurrent layer's state after it, in layer
//	                order; positions ascending within [start, start+n],
//	                the last start+n
//	end-4   4       CRC-32C of every byte of the segment before it
//
// The state a file holds starts empty; each segment truncates it to start
// (at most its length so far), then appends its n tokens with their rows,
// and its logits become the state's. A layer that keeps a row per
// position has f = start. A ring (a sliding-window layer's) holds rows
// from some position on: a segment may send fewer rows than it has
// positions (no more than the ring holds) or more, from before start
// (rows the state lacks after a cut further back than its ring reaches);
// the layer then holds rows from f on — or from where it held them
// before, when f ≤ start — but never more than its last ring-many. A
// layer without rows has f = start+n. Of the recurrent states, a segment
// drops those of positions after start and adds its own: the sequence's
// checkpoints within it (some: see snapCheckpoints) and its state at its
// end, which every segment of a model with recurrent layers carries, so
// the last one's is the restored sequence's.
// WriteSnapshot writes the header and one segment from position 0. A
// store keeping a conversation appends a segment per save instead of
// rewriting the file: after a follow-up turn it writes only the new
// positions; after an edit or a regeneration a segment that starts
// before the end (the common prefix) and so cuts the rest first.
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
	snapFixedHdr = 8 + 32 + 2 + 5*4 // header bytes besides the architecture name and the rings
	snapSegHead  = 16               // tag, start, n and their checksum (and L first rows, version 3)
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

// segLayout is how the segments of a file are laid out, from its header.
type segLayout struct {
	format  uint32
	layers  int
	rowSize int
	vocab   int
	context int
	// rings is, per layer, the rows of its ring, 0 for a row per
	// position, -1 for none; nil in version 2, which does not record them.
	rings []int
	// stateBytes is a recurrent state's bytes, all layers' (version 4).
	stateBytes int
}

// headSize is the bytes of a segment's head, with its checksum.
func (g *segLayout) headSize() int {
	switch g.format {
	case snapFormat2:
		return snapSegHead
	case snapFormat3:
		return snapSegHead + 4*g.layers
	}
	return snapSegHead + 4*g.layers + 4
}

// size is the bytes of a segment of n positions ending at end whose
// layer l has rows from first[l] on, carrying k recurrent states.
func (g *segLayout) size(n, end int, first []int, k int) int64 {
	rows := int64(0)
	for _, f := range first {
		rows += int64(end - f)
	}
	return int64(g.headSize()) + 8 + 4*int64(n) + 2*rows*int64(g.rowSize) + 4*int64(g.vocab) +
		int64(k)*(4+int64(g.stateBytes))
}

// ring is layer l's ring rows (0: a row per position, or not recorded).
func (g *segLayout) ring(l int) int {
	if g.rings == nil {
		return 0
	}
	return g.rings[l]
}

// segHeld is the first position a layer holds after a segment: it held
// rows from h on, was cut to start, got the rows of [first, end), and
// keeps ring of them at most (0: every one).
func segHeld(h, start, first, end, ring int) int {
	h = min(h, start)
	if first > start {
		h = first
	} else {
		h = min(h, first)
	}
	if ring > 0 {
		h = max(h, end-ring)
	}
	return h
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

// layout is how the sequence's snapshot lays out its segments.
func (s *Sequence) layout() *segLayout {
	cfg := s.m.net.Config()
	g := &segLayout{format: SnapshotFormat, layers: cfg.Layers, rowSize: s.rowSize(), vocab: len(s.logits),
		context: s.ctxLen, rings: make([]int, cfg.Layers), stateBytes: s.stateBytes}
	for l := range g.rings {
		if s.held.cache == nil {
			break // closed: nothing will be written
		}
		if kv := s.held.cache.KV(l); kv != nil {
			g.rings[l] = kv.Spec().Ring
		} else {
			g.rings[l] = -1
		}
	}
	return g
}

// snapCheckpoints is how many of a sequence's checkpoints a segment
// carries at most, besides the state at its end. Each is a whole copy of
// every recurrent layer's state (19 MiB for Qwen 3.5 0.8B, against 12 KiB
// a token of KV rows): all sixteen a sequence keeps would make a
// snapshot, and the restore before a follow-up's first token, mostly
// checkpoints. Three are the newest (the last turn boundary, what
// regenerating the last answer cuts back to) and two spread out before
// it; an edit further back, after a restore, runs more of the
// conversation again than it would have in the process that wrote it.
const snapCheckpoints = 3

// segCheckpoints is the checkpoints a segment of the positions [from,
// Len()) carries before the state at its end: of those after from and
// before the end, at most snapCheckpoints, chosen as the sequence evicts
// its own (the newest stays, the rest spread out).
func (s *Sequence) segCheckpoints(from int) []checkpoint {
	var cps []checkpoint
	for _, cp := range s.ckpts {
		if cp.pos > from && cp.pos < len(s.tokens) {
			cps = append(cps, cp)
		}
	}
	for len(cps) > snapCheckpoints {
		i := evictable(cps)
		cps = slices.Delete(cps, i, i+1)
	}
	return cps
}

// segStates is how many recurrent states a segment of the positions
// [from, Len()) carries: its checkpoints (segCheckpoints) and the state
// at the end; none for a model without recurrent layers.
func (s *Sequence) segStates(from int) int {
	if !s.recurrent() {
		return 0
	}
	return len(s.segCheckpoints(from)) + 1
}

func (s *Sequence) header() []byte {
	info := s.SnapshotInfo()
	arch := info.Architecture
	le := binary.LittleEndian
	rings := s.layout().rings
	b := make([]byte, 0, snapPrefix+snapFixedHdr+len(arch)+4*len(rings)+8)
	b = append(b, snapMagic[:]...)
	b = le.AppendUint32(b, SnapshotFormat)
	b = le.AppendUint32(b, uint32(snapFixedHdr+len(arch)+4*len(rings)+4))
	b = le.AppendUint64(b, uint64(info.FileSize))
	b = append(b, info.Hash[:]...)
	b = le.AppendUint16(b, uint16(len(arch)))
	b = append(b, arch...)
	for _, v := range []int{info.Context, int(info.KVType), info.Layers, info.KVDim, info.Vocab} {
		b = le.AppendUint32(b, uint32(v))
	}
	for _, r := range rings {
		if r < 0 {
			b = le.AppendUint32(b, snapNoRows)
		} else {
			b = le.AppendUint32(b, uint32(r))
		}
	}
	b = le.AppendUint32(b, uint32(s.stateBytes))
	return le.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// SnapshotHeaderSize is the number of bytes WriteSnapshotHeader writes.
func (s *Sequence) SnapshotHeaderSize() int64 {
	cfg := s.m.net.Config()
	return int64(snapPrefix + snapFixedHdr + len(snapArch(cfg.Arch)) + 4*cfg.Layers + 8)
}

// segFirst is, per layer, the first position whose rows a segment of
// the positions [from, Len()) sends, appended to a state that holds layer
// l's rows from onto[l] on (nil: every row this sequence holds before
// from): the new positions' rows the layer keeps and, where the state cut
// to from holds fewer rows than this sequence (a ring after a cut further
// back than it reaches), the ones before them, so that the file holds
// what the sequence holds.
func (s *Sequence) segFirst(from int, onto []int) []int {
	c, end := s.held.cache, len(s.tokens)
	first := make([]int, s.m.net.Config().Layers)
	for l := range first {
		if c == nil {
			first[l] = from // closed: nothing will be written
			continue
		}
		kv := c.KV(l)
		if kv == nil {
			first[l] = end // no rows
			continue
		}
		held := c.Held(l)
		keep := max(held, end-kv.Spec().Rows()) // the first row the layer has
		has := held
		if l < len(onto) {
			has = onto[l]
		}
		if min(has, from) > keep {
			first[l] = keep
		} else {
			first[l] = max(from, keep)
		}
	}
	return first
}

// SnapshotSegmentSize is the number of bytes WriteSnapshotSegment(w,
// from, onto) writes, for from in [0, Len()].
func (s *Sequence) SnapshotSegmentSize(from int, onto *SnapshotIndex) int64 {
	from = min(max(0, from), len(s.tokens))
	return s.layout().size(len(s.tokens)-from, len(s.tokens), s.segFirst(from, onto.held()), s.segStates(from))
}

// SnapshotSize is the number of bytes WriteSnapshot writes: the header
// and one segment of every cached position.
func (s *Sequence) SnapshotSize() int64 {
	return s.SnapshotHeaderSize() + s.SnapshotSegmentSize(0, nil)
}
