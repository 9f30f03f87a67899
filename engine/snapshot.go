package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/quant"
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

// Errors of ReadSnapshot, wrapped with the reason. A caller that keeps
// snapshots deletes the file on either and prefills from the tokens.
var (
	// ErrSnapshotMismatch: a sound snapshot made for something else —
	// another model file, context length, KV cache type or format version.
	ErrSnapshotMismatch = errors.New("engine: snapshot does not match")
	// ErrSnapshotCorrupt: not a snapshot, truncated, a failed checksum, or
	// values that cannot be right.
	ErrSnapshotCorrupt = errors.New("engine: snapshot is corrupt")
)

// Identity pins the exact weights a KV cache was computed with, and the
// cache's shape. Two identities are equal (==) exactly when a snapshot
// made under one can be restored under the other.
type Identity struct {
	FileSize int64
	// Hash is SHA-256 over the GGUF header (version, metadata, tensor
	// infos, alignment) and sampled chunks of the tensor data; see
	// Model.Identity.
	Hash         [32]byte
	Architecture string
	Context      int    // the sequence's KV capacity (0 from Model.Identity)
	KVType       KVType // the sequence's KV storage (KVF16 from Model.Identity)
	Format       uint32 // SnapshotFormat
}

// String is a short form for logs.
func (id Identity) String() string {
	return fmt.Sprintf("%s %d bytes sha256:%s… ctx=%d kv=%v format=%d",
		id.Architecture, id.FileSize, hex.EncodeToString(id.Hash[:6]), id.Context, id.KVType, id.Format)
}

type identityCache struct {
	mu   sync.Mutex
	done bool
	id   Identity
}

// Sampling of the tensor data for the identity hash: both ends and evenly
// spaced chunks between them.
const (
	idEdge   = 1 << 20  // bytes hashed at each end of the data section
	idChunk  = 64 << 10 // bytes of each sampled chunk
	idChunks = 64       // chunks at evenly spaced offsets
)

// Identity identifies the model file exactly: its size and a SHA-256 over
// the whole GGUF header (metadata and tensor infos, encoded as the file
// encodes them) plus the first and last MiB of the tensor data and 64 KiB
// at 64 evenly spaced offsets. Context and KVType are left zero; see
// Sequence.Identity.
//
// It is not a hash of the whole file because that reads every byte: a
// 5 GB model would take seconds of I/O (minutes from a cold disk) just to
// decide whether a KV snapshot may be used, more than the prefill it
// saves. The sample costs about 6 MiB of reads and a few milliseconds.
// What it can miss is an edit of a few weights between the samples of a
// file with the very same header and size: model files are not edited in
// place like that (requantizing or fine-tuning changes the header's
// metadata or the data everywhere), and the price of a miss is a slightly
// wrong cache, not a crash.
//
// The hash is taken from the loaded model (its parsed header and its
// mapped or read weights), never from the path again, so it describes
// the weights in use even if the file is replaced on disk. It is computed
// on the first call and cached; safe for concurrent use.
func (m *Model) Identity() Identity {
	c := &m.ident
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return c.id
	}
	id := Identity{Architecture: m.net.Config().Arch, Format: SnapshotFormat}
	if f := m.file; f != nil {
		id.FileSize = f.Size()
		if h, err := modelHash(f); err == nil {
			id.Hash, c.done = h, true
		}
	}
	// Without weights (a closed model) the hash stays zero, which
	// ReadSnapshot never accepts, and the next call tries again.
	c.id = id
	return id
}

// Identity is the model's identity with the sequence's context length
// and KV cache type: what its snapshot's header records.
func (s *Sequence) Identity() Identity {
	id := s.m.Identity()
	id.Context = s.ctxLen
	id.KVType = kvTypeOf(s.kvType)
	return id
}

func kvTypeOf(t quant.Type) KVType {
	switch t {
	case quant.F32:
		return KVF32
	case quant.Q8_0:
		return KVQ8_0
	}
	return KVF16
}

// modelHash computes Identity's hash.
func modelHash(f *gguf.File) ([32]byte, error) {
	h := sha256.New()
	hw := &hashWriter{h: h, buf: make([]byte, 0, 64<<10)}
	hashHeader(hw, f)
	if err := hashSamples(hw, f); err != nil {
		return [32]byte{}, err
	}
	hw.flush()
	var sum [32]byte
	h.Sum(sum[:0])
	return sum, nil
}

// hashWriter batches small writes into a hash.
type hashWriter struct {
	h   hash.Hash
	buf []byte
}

func (w *hashWriter) flush() {
	w.h.Write(w.buf)
	w.buf = w.buf[:0]
}

func (w *hashWriter) grew() {
	if len(w.buf) >= 32<<10 {
		w.flush()
	}
}

func (w *hashWriter) u32(v uint32) { w.buf = binary.LittleEndian.AppendUint32(w.buf, v); w.grew() }
func (w *hashWriter) u64(v uint64) { w.buf = binary.LittleEndian.AppendUint64(w.buf, v); w.grew() }
func (w *hashWriter) str(s string) {
	w.u64(uint64(len(s)))
	w.buf = append(w.buf, s...)
	w.grew()
}

// hashHeader feeds the header in GGUF's own encoding, from the parsed
// file: the same bytes the file holds for every well-formed file.
func hashHeader(w *hashWriter, f *gguf.File) {
	w.buf = append(w.buf, "GGUF"...)
	w.u32(f.Version)
	w.u64(uint64(len(f.Tensors)))
	w.u64(uint64(len(f.KV)))
	for _, kv := range f.KV {
		w.str(kv.Key)
		w.u32(uint32(kv.Value.Type))
		hashValue(w, kv.Value.V)
	}
	for _, t := range f.Tensors {
		w.str(t.Name)
		w.u32(uint32(len(t.Shape)))
		for _, d := range t.Shape {
			w.u64(d)
		}
		w.u32(uint32(t.Type))
		w.u64(t.Offset)
	}
	w.u64(f.Alignment)
	w.u64(f.DataOffset)
}

func hashValue(w *hashWriter, v any) {
	le := binary.LittleEndian
	switch x := v.(type) {
	case uint8:
		w.buf = append(w.buf, x)
	case int8:
		w.buf = append(w.buf, byte(x))
	case uint16:
		w.buf = le.AppendUint16(w.buf, x)
	case int16:
		w.buf = le.AppendUint16(w.buf, uint16(x))
	case uint32:
		w.u32(x)
	case int32:
		w.u32(uint32(x))
	case float32:
		w.u32(math.Float32bits(x))
	case bool:
		b := byte(0)
		if x {
			b = 1
		}
		w.buf = append(w.buf, b)
	case string:
		w.str(x)
	case uint64:
		w.u64(x)
	case int64:
		w.u64(uint64(x))
	case float64:
		w.u64(math.Float64bits(x))
	case gguf.Array:
		w.u32(uint32(x.Elem))
		w.u64(uint64(x.Len()))
		hashArray(w, x.Values)
	default:
		// The parser produces none of these; hash the type so two such
		// values still differ from everything above.
		w.str(fmt.Sprintf("%T:%v", v, v))
	}
	w.grew()
}

func hashArray(w *hashWriter, vals any) {
	switch a := vals.(type) {
	case []string:
		for _, s := range a {
			w.str(s)
		}
	case []float32:
		for _, f := range a {
			w.u32(math.Float32bits(f))
		}
	case []int32:
		for _, i := range a {
			w.u32(uint32(i))
		}
	case []uint8:
		w.buf = append(w.buf, a...)
	case []gguf.Array:
		for _, e := range a {
			w.u32(uint32(e.Elem))
			w.u64(uint64(e.Len()))
			hashArray(w, e.Values)
		}
	default:
		// Rarer element types (never in vocabularies, so short): one
		// value at a time through the scalar encoding.
		n := gguf.Array{Values: vals}.Len()
		for i := range n {
			hashValue(w, indexAny(vals, i))
		}
	}
	w.grew()
}

// indexAny returns element i of one of gguf.Array's typed slices.
func indexAny(vals any, i int) any {
	switch a := vals.(type) {
	case []int8:
		return a[i]
	case []uint16:
		return a[i]
	case []int16:
		return a[i]
	case []uint32:
		return a[i]
	case []bool:
		return a[i]
	case []uint64:
		return a[i]
	case []int64:
		return a[i]
	case []float64:
		return a[i]
	}
	return nil
}

// hashSamples feeds the sampled ranges of the data section. Bytes between
// tensors (alignment padding) are skipped: they carry no weights.
func hashSamples(w *hashWriter, f *gguf.File) error {
	ts := make([]*gguf.TensorInfo, len(f.Tensors))
	for i := range f.Tensors {
		ts[i] = &f.Tensors[i]
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Offset < ts[j].Offset })
	dataLen := uint64(0)
	if s := uint64(f.Size()); s > f.DataOffset {
		dataLen = s - f.DataOffset
	}
	type span struct{ a, b uint64 }
	spans := []span{{0, min(idEdge, dataLen)}, {dataLen - min(idEdge, dataLen), dataLen}}
	if dataLen > idChunk {
		for i := range uint64(idChunks) {
			a := (dataLen - idChunk) * i / (idChunks - 1)
			spans = append(spans, span{a, a + idChunk})
		}
	}
	for _, sp := range spans {
		w.u64(sp.a)
		w.u64(sp.b)
		// First tensor that ends after sp.a.
		i := sort.Search(len(ts), func(i int) bool { return ts[i].Offset+ts[i].Size > sp.a })
		for ; i < len(ts) && ts[i].Offset < sp.b; i++ {
			t := ts[i]
			data, err := f.TensorData(t)
			if err != nil {
				return err
			}
			lo := max(sp.a, t.Offset) - t.Offset
			hi := min(sp.b, t.Offset+t.Size) - t.Offset
			if lo < hi {
				w.flush()
				w.h.Write(data[lo:hi])
			}
		}
	}
	return nil
}

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
	return snapSegFixed + 4*int64(n) + 2*int64(info.Layers)*int64(n)*int64(rowSize) + 4*int64(info.Vocab)
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
	n := max(0, len(s.tokens)-from)
	return snapSegFixed + 4*int64(n) + 2*int64(s.m.net.Config().Layers)*int64(n)*int64(s.rowSize()) + 4*int64(len(s.logits))
}

// SnapshotSize is the number of bytes WriteSnapshot writes: the header
// and one segment of every cached position.
func (s *Sequence) SnapshotSize() int64 {
	return s.SnapshotHeaderSize() + s.SnapshotSegmentSize(0)
}

// appendRows reads cache rows for a snapshot, holding the model's lock:
// a device runs one thing at a time, and the cache must not move to
// another device in the middle of a read.
func (s *Sequence) appendRows(dst []byte, layer int, values bool, p0, p1 int) ([]byte, error) {
	s.m.exec.Lock()
	defer s.m.exec.Unlock()
	if err := s.cacheCurrent(); err != nil {
		return dst, err
	}
	return s.held.cache.KV(layer).AppendRows(dst, values, p0, p1)
}

// setRows is appendRows's twin for restoring.
func (s *Sequence) setRows(layer int, values bool, p0 int, src []byte) error {
	s.m.exec.Lock()
	defer s.m.exec.Unlock()
	if err := s.cacheCurrent(); err != nil {
		return err
	}
	return s.held.cache.KV(layer).SetRows(values, p0, src)
}

// cacheCurrent says why the sequence's cache cannot be read or written
// now. The caller holds s.m.exec.
func (s *Sequence) cacheCurrent() error {
	switch {
	case s.closed || s.m.closed || s.held.cache == nil:
		return ErrClosed
	case s.held.cache.Plan() != s.m.plan:
		return errors.New("engine: the sequence's cache was on a device that failed; it is rebuilt at its next use")
	}
	return nil
}

// rowSize is the bytes of one position's keys (or values) in one layer.
func (s *Sequence) rowSize() int {
	return backend.KVSpec{Type: s.kvType, Context: s.ctxLen, Dim: s.m.net.Config().KVDim()}.RowSize()
}

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
		if lc := s.held.cache.Layer(l); lc.KV == nil || lc.State != nil {
			return fmt.Errorf("engine: write snapshot: layer %d keeps state other than KV rows, which snapshots do not hold yet", l)
		}
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
	return s.writeSegment(sw, 0)
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

// WriteSnapshotSegment writes one segment (SnapshotSegmentSize(from)
// bytes): the token ids and KV rows of positions [from, Len()) and the
// logits. Appended to a snapshot of this model and cache shape whose
// state holds at least from tokens, of which the first from are this
// sequence's, it makes the file restore to this sequence: it cuts the
// file's state to from tokens, then appends the rest. With from == Len()
// it only sets the logits (and cuts). The sequence must not be used by
// another goroutine meanwhile.
func (s *Sequence) WriteSnapshotSegment(w io.Writer, from int) error {
	if err := s.checkSnapshot(); err != nil {
		return err
	}
	if from < 0 || from > len(s.tokens) {
		return fmt.Errorf("engine: write snapshot segment from %d: the sequence holds %d tokens", from, len(s.tokens))
	}
	return s.writeSegment(s.newSnapWriter(w, s.SnapshotSegmentSize(from)), from)
}

// newSnapWriter makes a writer for size bytes: its buffer holds a chunk
// and the row (or token id, or logit) that crosses its end.
func (s *Sequence) newSnapWriter(w io.Writer, size int64) *snapWriter {
	return &snapWriter{w: w, buf: make([]byte, 0, min(size, snapChunk+int64(s.rowSize())))}
}

// writeSegment writes the segment of positions [from, Len()).
func (s *Sequence) writeSegment(sw *snapWriter, from int) error {
	le := binary.LittleEndian
	n := len(s.tokens) - from
	sw.startSum()
	sw.buf = append(sw.buf, snapSegTag[:]...)
	sw.buf = le.AppendUint32(sw.buf, uint32(from))
	sw.buf = le.AppendUint32(sw.buf, uint32(n))
	sw.buf = le.AppendUint32(sw.buf, sw.sum())
	for _, t := range s.tokens[from:] {
		sw.buf = le.AppendUint32(sw.buf, uint32(t))
		sw.maybeFlush()
	}
	sw.buf = le.AppendUint32(sw.buf, sw.sum())
	rows := max(1, snapChunk/s.rowSize())
	for l := range s.held.cache.Layers() {
		for _, values := range []bool{false, true} {
			for p := from; p < len(s.tokens); p += rows {
				var err error
				if sw.buf, err = s.appendRows(sw.buf, l, values, p, min(len(s.tokens), p+rows)); err != nil {
					return fmt.Errorf("engine: write snapshot: %w", err)
				}
				sw.maybeFlush()
			}
		}
	}
	for _, f := range s.logits {
		sw.buf = le.AppendUint32(sw.buf, math.Float32bits(f))
		sw.maybeFlush()
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

// snapReader reads exact lengths, keeping the running checksum and the
// offset for error messages.
type snapReader struct {
	r   io.Reader
	buf []byte
	crc uint32
	off int64
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSnapshotCorrupt, fmt.Sprintf(format, args...))
}

func mismatch(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSnapshotMismatch, fmt.Sprintf(format, args...))
}

// shortError is a read that found the end of the data first: corrupt,
// unless it is in the last segment (a torn append).
type shortError struct {
	off  int64 // where the data ended
	got  int   // bytes of this read that were there
	what string
}

func (e *shortError) Error() string {
	return fmt.Sprintf("%v: truncated at byte %d, in the %s", ErrSnapshotCorrupt, e.off, e.what)
}

func (e *shortError) Unwrap() error { return ErrSnapshotCorrupt }

// tornError is a final segment that is short or fails its checksum with
// nothing after it.
type tornError struct{ err error }

func (e *tornError) Error() string { return e.err.Error() }
func (e *tornError) Unwrap() error { return e.err }

func (sr *snapReader) startSum() { sr.crc = 0 }

// read returns the next n bytes (valid until the next call). n is always
// bounded by the caller: a constant, a checked header field, or a chunk.
func (sr *snapReader) read(n int, what string) ([]byte, error) {
	if cap(sr.buf) < n {
		sr.buf = make([]byte, n)
	}
	b := sr.buf[:n]
	got, err := io.ReadFull(sr.r, b)
	sr.off += int64(got)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, &shortError{off: sr.off, got: got, what: what}
		}
		return nil, fmt.Errorf("engine: read snapshot: %s at byte %d: %w", what, sr.off, err)
	}
	sr.crc = crc32.Update(sr.crc, castagnoli, b)
	return b, nil
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
// header's checksum, which it also returns.
func readHeader(sr *snapReader) (SnapshotInfo, uint32, error) {
	var info SnapshotInfo
	le := binary.LittleEndian
	p, err := sr.read(snapPrefix, "prefix")
	if err != nil {
		return info, 0, err
	}
	if !bytes.Equal(p[:8], snapMagic[:]) {
		return info, 0, corrupt("not a KV snapshot (magic %q)", p[:8])
	}
	if v := le.Uint32(p[8:]); v != SnapshotFormat {
		return info, 0, mismatch("format version %d, this engine reads %d", v, SnapshotFormat)
	}
	hlen := int(le.Uint32(p[12:]))
	if hlen < snapFixedHdr || hlen > snapFixedHdr+snapMaxArch {
		return info, 0, corrupt("header length %d", hlen)
	}
	h, err := sr.read(hlen, "header")
	if err != nil {
		return info, 0, err
	}
	h = bytes.Clone(h) // read reuses its buffer
	want := sr.crc
	c, err := sr.read(4, "header checksum")
	if err != nil {
		return info, 0, err
	}
	if got := le.Uint32(c); got != want {
		return info, 0, corrupt("header checksum %08x, computed %08x", got, want)
	}
	info.FileSize = int64(le.Uint64(h))
	copy(info.Hash[:], h[8:40])
	alen := int(le.Uint16(h[40:]))
	if alen != hlen-snapFixedHdr {
		return info, 0, corrupt("architecture name of %d bytes in a header of %d", alen, hlen)
	}
	info.Architecture = string(h[42 : 42+alen])
	var f [5]int
	for i := range f {
		v := le.Uint32(h[42+alen+4*i:])
		if v > math.MaxInt32 {
			return info, 0, corrupt("header field %d is %d", i, v)
		}
		f[i] = int(v)
	}
	info.Context, info.KVType, info.Layers, info.KVDim, info.Vocab = f[0], KVType(f[1]), f[2], f[3], f[4]
	info.Format = SnapshotFormat
	switch {
	case info.FileSize < 0 || info.Context < 1 || info.Context > snapMaxTokens:
		return info, 0, corrupt("context of %d tokens, model of %d bytes", info.Context, info.FileSize)
	case info.Layers < 1 || info.Layers > snapMaxLayers || info.KVDim < 1 || info.KVDim > snapMaxKVDim ||
		info.Vocab < 1 || info.Vocab > snapMaxVocab:
		return info, 0, corrupt("shape %d layers × %d, vocabulary %d", info.Layers, info.KVDim, info.Vocab)
	}
	if _, ok := info.rowSize(); !ok {
		return info, 0, corrupt("KV type %v with a KV width of %d", info.KVType, info.KVDim)
	}
	return info, want, nil
}

// ReadSnapshotInfo reads a snapshot's header without a model: the model,
// context and cache shape it is for. It checks the header's own checksum,
// nothing after it.
func ReadSnapshotInfo(r io.Reader) (SnapshotInfo, error) {
	info, _, err := readHeader(&snapReader{r: r})
	return info, err
}

// SnapshotIndex is what a snapshot file holds, as far as its header and
// whole segments go. A store keeps it to know what to append (see
// ScanSnapshot and Model.RestoreSnapshot). Its Tokens are its own.
type SnapshotIndex struct {
	SnapshotInfo
	// Tokens are the token ids of the state the whole segments leave.
	Tokens   []int32
	Segments int   // whole segments, at least 1
	End      int64 // bytes of the header and the whole segments
	// Tail is the bytes after End: a torn final segment (0 if none).
	Tail int64
	// Sum is the checksum that ends the last whole segment (bytes
	// [End-4, End)): ScanSnapshot checks that a file still holds the
	// state an index describes before it reads on from End.
	Sum uint32
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
	info, hsum, err := readHeader(sr)
	if err != nil {
		return nil, err
	}
	rs, _ := info.rowSize()
	ix := &SnapshotIndex{SnapshotInfo: info, End: sr.off, Sum: hsum}
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
		if readAt(b[:], f.End-4) == nil && le.Uint32(b[:]) == f.Sum {
			ix.Tokens, ix.Segments, ix.End, ix.Sum = slices.Clone(f.Tokens), f.Segments, f.End, f.Sum
		}
	}
	// The state before the last whole segment, to fall back on when
	// VerifyLast finds it torn.
	var prev SnapshotIndex
	last := int64(-1)
	var head [snapSegHead]byte
	var torn error
	for off := ix.End; off < size; {
		if size-off < snapSegHead {
			torn = corrupt("truncated at byte %d, in a segment header", size)
			break
		}
		if err := readAt(head[:], off); err != nil {
			return nil, err
		}
		start, n, err := checkSegHead(head[:], off, len(ix.Tokens), info.Context)
		if err != nil {
			return nil, err
		}
		ext := info.segmentSize(n, rs)
		if ext > size-off {
			torn = corrupt("truncated at byte %d, in the segment at byte %d", size, off)
			break
		}
		tb := make([]byte, 4*n+4)
		if err := readAt(tb, off+snapSegHead); err != nil {
			return nil, err
		}
		c := crc32.Update(crc32.Checksum(head[:], castagnoli), castagnoli, tb[:4*n])
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
		ix.Tokens = append(ix.Tokens[:start], toks...)
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

// checkSegHead checks a segment's head (tag, range, checksum) against the
// state so far (length tokens) and returns its start and length.
func checkSegHead(h []byte, off int64, length, context int) (start, n int, err error) {
	le := binary.LittleEndian
	if got, want := le.Uint32(h[12:]), crc32.Checksum(h[:12], castagnoli); got != want {
		return 0, 0, corrupt("segment at byte %d: checksum of its head %08x, computed %08x", off, got, want)
	}
	if !bytes.Equal(h[:4], snapSegTag[:]) {
		return 0, 0, corrupt("byte %d: not a segment (tag %q)", off, h[:4])
	}
	s, c := int64(le.Uint32(h[4:])), int64(le.Uint32(h[8:]))
	if s > int64(length) || c > int64(context)-s {
		return 0, 0, corrupt("segment at byte %d: positions [%d,%d) after a state of %d tokens, in a context of %d",
			off, s, s+c, length, context)
	}
	return int(s), int(c), nil
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
	info, hsum, err := readHeader(sr)
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
	ix := &SnapshotIndex{SnapshotInfo: info, End: sr.off, Sum: hsum}
	sg := &segReader{sr: sr, s: s, ix: ix, logits: make([]float32, len(s.logits))}
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
	ix.Tokens = slices.Clone(s.tokens)
	restored = true
	return s, ix, nil
}

// segReader applies segments to a fresh sequence, one at a time.
type segReader struct {
	sr     *snapReader
	s      *Sequence
	ix     *SnapshotIndex
	logits []float32 // the segment's, until its checksum matched
	saved  []byte    // rows of the state the segment overwrites
}

// next reads and applies one segment. It returns io.EOF at the end of
// the data, a *tornError for a torn final segment (the state is left as
// it was), or another error.
func (g *segReader) next() error {
	sr, s, le := g.sr, g.s, binary.LittleEndian
	off := sr.off
	sr.startSum()
	h, err := sr.read(snapSegHead, "segment header")
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
	start, n, err := checkSegHead(h, off, len(s.tokens), s.ctxLen)
	if err != nil {
		return err
	}
	rs := s.rowSize()
	payload := g.ix.segmentSize(n, rs) - snapSegHead - 4*int64(n) - 4
	tb, err := sr.read(4*n, "segment's token ids")
	if err != nil {
		return tornIfShort(err)
	}
	tb = bytes.Clone(tb)
	want := sr.crc
	c, err := sr.read(4, "checksum of the segment's token ids")
	if err != nil {
		return tornIfShort(err)
	}
	if got := le.Uint32(c); got != want {
		err := corrupt("segment at byte %d: checksum of its token ids %08x, computed %08x", off, got, want)
		return g.tornAtEnd(err, payload)
	}
	toks, err := segTokens(tb, len(s.logits))
	if err != nil {
		return err
	}
	// Keep the rows of the state this segment overwrites, to put back
	// should it be torn.
	lo, hi := start, min(len(s.tokens), start+n)
	g.saved = g.saved[:0]
	for l := range s.held.cache.Layers() {
		for _, values := range []bool{false, true} {
			if g.saved, err = s.appendRows(g.saved, l, values, lo, max(lo, hi)); err != nil {
				// The rows are in range (checkSegHead): this is the device,
				// not the file.
				return fmt.Errorf("engine: read snapshot: %w", err)
			}
		}
	}
	restore := func() {
		if hi <= lo {
			return
		}
		k := (hi - lo) * rs
		for i := range 2 * s.held.cache.Layers() {
			_ = s.setRows(i/2, i%2 == 1, lo, g.saved[i*k:(i+1)*k])
		}
	}
	rows := max(1, snapChunk/rs)
	for l := range s.held.cache.Layers() {
		for _, values := range []bool{false, true} {
			for p := 0; p < n; p += rows {
				k := min(n-p, rows)
				b, err := sr.read(k*rs, "KV cache")
				if err != nil {
					restore()
					return tornIfShort(err)
				}
				if err := s.setRows(l, values, start+p, b); err != nil {
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
	want = sr.crc
	c, err = sr.read(4, "segment's checksum")
	if err != nil {
		restore()
		return tornIfShort(err)
	}
	got := le.Uint32(c)
	if got != want {
		restore()
		return g.tornAtEnd(corrupt("segment at byte %d: checksum %08x, computed %08x", off, got, want), 0)
	}
	s.tokens = append(s.tokens[:start], toks...)
	copy(s.logits, g.logits)
	g.ix.Segments, g.ix.End, g.ix.Sum = g.ix.Segments+1, sr.off, got
	return nil
}

func tornIfShort(err error) error {
	var short *shortError
	if errors.As(err, &short) {
		return &tornError{err}
	}
	return err
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
