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
	"sort"
	"sync"

	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/quant"
)

// SnapshotFormat is the version of the KV snapshot format this engine
// writes and reads. It is bumped whenever the layout changes, and also
// whenever the engine computes different keys or values for the same
// tokens (a new kernel that rounds differently, a RoPE fix): a snapshot
// from before would still load, but a restored conversation would no
// longer continue exactly as a cold prefill does.
const SnapshotFormat uint32 = 1

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
	id.Context = s.kv.Context
	id.KVType = kvTypeOf(s.kv.Type)
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

// The snapshot file, all integers little-endian:
//
//	offset  size
//	0       8       magic "CHURONKV"
//	8       4       format version (SnapshotFormat)
//	12      4       H: header length
//	16      H       header: file size u64, hash [32], architecture (u16
//	                length + bytes), context u32, KV type u32, layers u32,
//	                KV width u32, vocabulary u32, tokens n u32
//	16+H    4       CRC-32C of bytes [0, 16+H)
//	        4n      token ids, int32
//	        4V      logits after the last token, float32 (V = vocabulary)
//	        …       per layer: keys of positions [0,n), then values, each
//	                n × RowSize bytes exactly as the cache stores them
//	end-4   4       CRC-32C of every byte before it
//
// The header has its own checksum so that a flipped bit there reads as
// corruption, not as "another model", and so the header can be trusted
// before any size in it is used. CRC-32C (hardware-accelerated, ~10 GB/s)
// rather than SHA-256 because it guards against accidents (a torn write,
// a bad sector), not against someone forging a file: a file that matches
// the model's identity can only change numbers in a cache, never memory
// safety, since every length is checked against the model's own shape.
var snapMagic = [8]byte{'C', 'H', 'U', 'R', 'O', 'N', 'K', 'V'}

const (
	snapPrefix    = 16
	snapMaxArch   = 64
	snapFixedHdr  = 8 + 32 + 2 + 6*4 // header bytes besides the architecture name
	snapChunk     = 1 << 20          // bytes per write or read of the body
	snapMaxTokens = 1 << 26          // bounds ReadSnapshotInfo without a model
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// SnapshotInfo is what a snapshot's header says, read without a model.
type SnapshotInfo struct {
	Identity
	Tokens int // token ids the snapshot covers
	Layers int
	KVDim  int // KV heads × head size
	Vocab  int
}

// snapArch is the architecture name as a header holds it.
func snapArch(a string) string {
	if len(a) > snapMaxArch {
		return a[:snapMaxArch]
	}
	return a
}

func (s *Sequence) header() []byte {
	id := s.Identity()
	cfg := s.m.net.Config()
	arch := snapArch(id.Architecture)
	le := binary.LittleEndian
	b := make([]byte, 0, snapPrefix+snapFixedHdr+len(arch)+4)
	b = append(b, snapMagic[:]...)
	b = le.AppendUint32(b, SnapshotFormat)
	b = le.AppendUint32(b, uint32(snapFixedHdr+len(arch)))
	b = le.AppendUint64(b, uint64(id.FileSize))
	b = append(b, id.Hash[:]...)
	b = le.AppendUint16(b, uint16(len(arch)))
	b = append(b, arch...)
	for _, v := range []int{id.Context, int(id.KVType), cfg.Layers, cfg.KVDim(), cfg.Vocab, len(s.tokens)} {
		b = le.AppendUint32(b, uint32(v))
	}
	return le.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// SnapshotSize is the number of bytes WriteSnapshot writes.
func (s *Sequence) SnapshotSize() int64 {
	n := int64(len(s.tokens))
	arch := len(snapArch(s.m.net.Config().Arch))
	return int64(snapPrefix+snapFixedHdr+arch+4) + 4*n + 4*int64(len(s.logits)) +
		2*int64(s.kv.Layers)*n*int64(s.kv.RowSize()) + 4
}

// WriteSnapshot writes the sequence — its identity, token ids, the logits
// after the last token and the KV rows of every cached position, in the
// cache's own storage type — so that Model.ReadSnapshot restores a
// sequence that continues bit for bit as this one would. It writes
// SnapshotSize bytes in chunks of at most 1 MiB; w need not be buffered.
// The sequence must not be used by another goroutine meanwhile.
//
// The logits are those Logits returns: after Truncate, until the next
// Feed, they are still the ones after the token that was dropped.
func (s *Sequence) WriteSnapshot(w io.Writer) error {
	if s.m.file == nil {
		return ErrClosed
	}
	if id := s.Identity(); id.Hash == ([32]byte{}) {
		return fmt.Errorf("engine: write snapshot: the model's identity cannot be computed")
	}
	sw := &snapWriter{w: w, buf: make([]byte, 0, snapChunk+s.kv.RowSize())}
	sw.buf = append(sw.buf, s.header()...)
	le := binary.LittleEndian
	for _, t := range s.tokens {
		sw.buf = le.AppendUint32(sw.buf, uint32(t))
		sw.maybeFlush()
	}
	for _, f := range s.logits {
		sw.buf = le.AppendUint32(sw.buf, math.Float32bits(f))
		sw.maybeFlush()
	}
	n, rows := len(s.tokens), max(1, snapChunk/s.kv.RowSize())
	for l := range s.kv.Layers {
		for _, values := range []bool{false, true} {
			for p := 0; p < n; p += rows {
				var err error
				if sw.buf, err = s.kv.AppendRows(sw.buf, l, values, p, min(n, p+rows)); err != nil {
					return fmt.Errorf("engine: write snapshot: %w", err)
				}
				sw.maybeFlush()
			}
		}
	}
	if err := sw.flush(); err != nil {
		return err
	}
	sw.buf = le.AppendUint32(sw.buf, sw.crc)
	return sw.flush()
}

// snapWriter buffers the body and keeps its running checksum.
type snapWriter struct {
	w   io.Writer
	buf []byte
	crc uint32
	err error
}

func (sw *snapWriter) maybeFlush() {
	if len(sw.buf) >= snapChunk {
		sw.flush()
	}
}

func (sw *snapWriter) flush() error {
	if sw.err != nil || len(sw.buf) == 0 {
		sw.buf = sw.buf[:0]
		return sw.err
	}
	sw.crc = crc32.Update(sw.crc, castagnoli, sw.buf)
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
			return nil, corrupt("truncated at byte %d, in the %s", sr.off, what)
		}
		return nil, fmt.Errorf("engine: read snapshot: %s at byte %d: %w", what, sr.off, err)
	}
	sr.crc = crc32.Update(sr.crc, castagnoli, b)
	return b, nil
}

// readHeader reads and checks the prefix and header, up to the header's
// checksum.
func readHeader(sr *snapReader) (SnapshotInfo, error) {
	var info SnapshotInfo
	le := binary.LittleEndian
	p, err := sr.read(snapPrefix, "prefix")
	if err != nil {
		return info, err
	}
	if !bytes.Equal(p[:8], snapMagic[:]) {
		return info, corrupt("not a KV snapshot (magic %q)", p[:8])
	}
	if v := le.Uint32(p[8:]); v != SnapshotFormat {
		return info, mismatch("format version %d, this engine reads %d", v, SnapshotFormat)
	}
	hlen := int(le.Uint32(p[12:]))
	if hlen < snapFixedHdr || hlen > snapFixedHdr+snapMaxArch {
		return info, corrupt("header length %d", hlen)
	}
	h, err := sr.read(hlen, "header")
	if err != nil {
		return info, err
	}
	h = bytes.Clone(h) // read reuses its buffer
	want := sr.crc
	c, err := sr.read(4, "header checksum")
	if err != nil {
		return info, err
	}
	if got := le.Uint32(c); got != want {
		return info, corrupt("header checksum %08x, computed %08x", got, want)
	}
	info.FileSize = int64(le.Uint64(h))
	copy(info.Hash[:], h[8:40])
	alen := int(le.Uint16(h[40:]))
	if alen != hlen-snapFixedHdr {
		return info, corrupt("architecture name of %d bytes in a header of %d", alen, hlen)
	}
	info.Architecture = string(h[42 : 42+alen])
	var f [6]int
	for i := range f {
		v := le.Uint32(h[42+alen+4*i:])
		if v > math.MaxInt32 {
			return info, corrupt("header field %d is %d", i, v)
		}
		f[i] = int(v)
	}
	info.Context, info.KVType, info.Layers, info.KVDim, info.Vocab, info.Tokens = f[0], KVType(f[1]), f[2], f[3], f[4], f[5]
	info.Format = SnapshotFormat
	if info.FileSize < 0 || info.Tokens > info.Context || info.Context > snapMaxTokens {
		return info, corrupt("%d tokens in a context of %d", info.Tokens, info.Context)
	}
	return info, nil
}

// ReadSnapshotInfo reads a snapshot's header without a model: enough to
// list snapshots (tokens covered, model, context) without loading them.
// It checks the header's own checksum, not the body's.
func ReadSnapshotInfo(r io.Reader) (SnapshotInfo, error) {
	return readHeader(&snapReader{r: r})
}

// ReadSnapshot restores a sequence written by WriteSnapshot. opt sizes
// the new sequence as for NewSequence, and the snapshot must have been
// made with the same context length and KV type, by a sequence of this
// very model (Identity) and in this format version; otherwise the error
// wraps ErrSnapshotMismatch. A truncated or damaged snapshot, or one
// that is not a snapshot at all, gives an error wrapping
// ErrSnapshotCorrupt; other read errors are returned wrapped as they are.
//
// Nothing in the file is trusted before it is checked: lengths are
// bounded by the header and the header by the model's shape, token ids by
// the vocabulary, and the sequence is returned only after the checksum of
// every byte matched and the reader ended right after it. It never
// panics, whatever r yields.
//
// The restored sequence holds the same tokens, logits and KV rows as the
// one written, bit for bit: fed the same tokens, both compute the same
// logits.
func (m *Model) ReadSnapshot(r io.Reader, opt SequenceOptions) (*Sequence, error) {
	if m.file == nil {
		return nil, ErrClosed
	}
	sr := &snapReader{r: r}
	info, err := readHeader(sr)
	if err != nil {
		return nil, err
	}
	mine := m.Identity()
	mine.Context = m.contextFor(opt)
	mine.KVType = opt.KVType
	cfg := m.net.Config()
	switch {
	case mine.Hash == [32]byte{}:
		return nil, fmt.Errorf("engine: read snapshot: the model's identity cannot be computed")
	case info.FileSize != mine.FileSize || info.Hash != mine.Hash || info.Architecture != snapArch(mine.Architecture):
		return nil, mismatch("made with another model (%s %d bytes sha256:%x…, this is %s %d bytes sha256:%x…)",
			info.Architecture, info.FileSize, info.Hash[:6], mine.Architecture, mine.FileSize, mine.Hash[:6])
	case info.KVType != mine.KVType:
		return nil, mismatch("KV cache type %v, want %v", info.KVType, mine.KVType)
	case info.Context != mine.Context:
		return nil, mismatch("context of %d tokens, want %d", info.Context, mine.Context)
	case info.Layers != cfg.Layers || info.KVDim != cfg.KVDim() || info.Vocab != cfg.Vocab:
		return nil, mismatch("shape %d layers × %d, vocabulary %d; the model has %d × %d, %d",
			info.Layers, info.KVDim, info.Vocab, cfg.Layers, cfg.KVDim(), cfg.Vocab)
	}
	s, err := m.NewSequence(opt)
	if err != nil {
		return nil, fmt.Errorf("engine: read snapshot: %w", err)
	}
	if s.kv.Context != info.Context || kvTypeOf(s.kv.Type) != info.KVType {
		return nil, mismatch("the sequence made from the options has context %d, %v", s.kv.Context, kvTypeOf(s.kv.Type))
	}
	if err := s.readBody(sr, info.Tokens); err != nil {
		return nil, err
	}
	var one [1]byte
	if n, _ := io.ReadFull(r, one[:]); n > 0 {
		return nil, corrupt("data after the end, at byte %d", sr.off)
	}
	return s, nil
}

// readBody reads tokens, logits, KV rows and the final checksum into a
// fresh sequence of the header's shape.
func (s *Sequence) readBody(sr *snapReader, n int) error {
	le := binary.LittleEndian
	vocab := len(s.logits)
	toks := make([]int32, 0, n)
	for len(toks) < n {
		k := min(n-len(toks), snapChunk/4)
		b, err := sr.read(4*k, "token ids")
		if err != nil {
			return err
		}
		for i := range k {
			t := int32(le.Uint32(b[4*i:]))
			if t < 0 || int(t) >= vocab {
				return corrupt("token %d is id %d, outside the vocabulary of %d", len(toks), t, vocab)
			}
			toks = append(toks, t)
		}
	}
	for done := 0; done < vocab; {
		k := min(vocab-done, snapChunk/4)
		b, err := sr.read(4*k, "logits")
		if err != nil {
			return err
		}
		for i := range k {
			s.logits[done+i] = math.Float32frombits(le.Uint32(b[4*i:]))
		}
		done += k
	}
	rs := s.kv.RowSize()
	rows := max(1, snapChunk/rs)
	for l := range s.kv.Layers {
		for _, values := range []bool{false, true} {
			for p := 0; p < n; p += rows {
				k := min(n-p, rows)
				b, err := sr.read(k*rs, "KV cache")
				if err != nil {
					return err
				}
				if err := s.kv.SetRows(l, values, p, b); err != nil {
					return corrupt("%v", err)
				}
			}
		}
	}
	want := sr.crc
	c, err := sr.read(4, "checksum")
	if err != nil {
		return err
	}
	if got := le.Uint32(c); got != want {
		return corrupt("checksum %08x, computed %08x", got, want)
	}
	s.tokens = toks
	return nil
}
