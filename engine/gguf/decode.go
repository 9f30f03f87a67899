package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/churon/churon/engine/quant"
)

// Limits on what the reader accepts. Every count and length is also checked
// against the bytes actually left in the file before anything is allocated;
// these limits only reject files that are well-formed but absurd (or that a
// remote server claims are huge).
const (
	// MaxKeyLen bounds metadata keys and tensor names (the spec's 65535).
	MaxKeyLen = 1<<16 - 1
	// MaxStringLen bounds one string value. Chat templates are kilobytes and
	// an embedded tokenizer.json is a few megabytes; 64 MiB leaves room.
	MaxStringLen = 64 << 20
	// MaxArrayDepth bounds nesting of arrays in arrays.
	MaxArrayDepth = 8
	// MaxDims is ggml's GGML_MAX_DIMS.
	MaxDims = 4
	// MaxElements bounds the element count of one tensor (2^62).
	MaxElements = 1 << 62
	// MaxHeaderSize bounds the metadata and tensor infos together. Real
	// headers, even with 150k-token vocabularies and their merges, are tens
	// of megabytes.
	MaxHeaderSize = 1 << 30
	// DefaultAlignment is used when general.alignment is absent.
	DefaultAlignment = 32
)

// Fewest bytes a KV or a tensor info can take: they bound the declared
// counts before any slice is sized by them.
const (
	minKVSize     = 8 + 1 + 4 + 1         // key length, 1-byte key, type, uint8 value
	minTensorSize = 8 + 1 + 4 + 8 + 4 + 8 // name length, 1-byte name, n_dims, one dim, type, offset
)

const (
	firstChunk = 64 << 10
	maxChunk   = 1 << 20
)

// decoder reads the header sequentially, either from a byte slice holding
// the whole file (r == nil) or from an io.ReaderAt through a window that
// grows only with data actually received.
type decoder struct {
	buf   []byte
	off   int64 // file offset of buf[0]
	pos   int   // read position in buf
	r     io.ReaderAt
	size  int64 // file size (as stated, for a ReaderAt)
	chunk int
	// Where and why the source ended short of size (srcEnd -1: it has not).
	srcEnd int64
	srcErr error

	// what is being read, for error messages; built only on failure.
	kind string
	name string
	idx  int

	ends []int // scratch for string arrays
}

func (d *decoder) at() int64    { return d.off + int64(d.pos) }
func (d *decoder) left() uint64 { return uint64(d.size - d.at()) }

func (d *decoder) setWhere(kind string, idx int) { d.kind, d.name, d.idx = kind, "", idx }

func (d *decoder) where() string {
	switch {
	case d.name != "":
		return fmt.Sprintf("%s %q", d.kind, d.name)
	case d.idx >= 0:
		return fmt.Sprintf("%s #%d", d.kind, d.idx)
	}
	return d.kind
}

func (d *decoder) fail(off int64, sentinel error, format string, args ...any) error {
	return &FormatError{Offset: off, Where: d.where(), Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

// take returns the next n bytes. In reader mode the slice is valid only
// until the next call.
func (d *decoder) take(n uint64) ([]byte, error) {
	start := d.at()
	if n > d.left() {
		return nil, d.fail(start, ErrTruncated, "truncated: need %d bytes, only %d left", n, d.left())
	}
	if uint64(start)+n > MaxHeaderSize {
		return nil, d.fail(start, ErrLimit, "header extends past %d bytes (MaxHeaderSize)", MaxHeaderSize)
	}
	k := int(n) // n <= MaxHeaderSize: fits
	if d.r != nil && len(d.buf)-d.pos < k {
		if err := d.fill(k); err != nil {
			return nil, err
		}
	}
	b := d.buf[d.pos : d.pos+k : d.pos+k]
	d.pos += k
	return b, nil
}

// fill makes at least n unread bytes available in the window. It reads in
// chunks (growing from 64 KiB to 1 MiB) so that a ReaderAt backed by HTTP
// Range requests gets few requests and at most one chunk past the header,
// and memory grows only with bytes received, whatever size was claimed.
func (d *decoder) fill(n int) error {
	if d.pos > 0 {
		k := copy(d.buf, d.buf[d.pos:])
		d.buf = d.buf[:k]
		d.off += int64(d.pos)
		d.pos = 0
	}
	for len(d.buf) < n {
		if d.srcEnd >= 0 {
			if d.srcErr != nil {
				return d.srcErr
			}
			return d.fail(d.srcEnd, ErrTruncated, "truncated: data ends at byte %d, before the stated size %d", d.srcEnd, d.size)
		}
		end := d.off + int64(len(d.buf))
		step := d.chunk
		if need := n - len(d.buf); need > step && step < maxChunk {
			step = min(need, maxChunk)
		}
		if rem := d.size - end; int64(step) > rem {
			step = int(rem)
		}
		if step <= 0 {
			return d.fail(end, ErrTruncated, "truncated: file ends at byte %d", end)
		}
		if cap(d.buf)-len(d.buf) < step {
			nb := make([]byte, len(d.buf), max(2*cap(d.buf), len(d.buf)+step))
			copy(nb, d.buf)
			d.buf = nb
		}
		got, err := d.r.ReadAt(d.buf[len(d.buf):len(d.buf)+step], end)
		if got > step || got < 0 {
			return fmt.Errorf("gguf: read at byte %d: reader returned %d bytes for %d", end, got, step)
		}
		d.buf = d.buf[:len(d.buf)+got]
		if got < step {
			// Fail only if the bytes needed now are missing: the source may
			// end early (its size overstated) just after what we need.
			d.srcEnd = end + int64(got)
			if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				d.srcErr = fmt.Errorf("gguf: read at byte %d: %w", d.srcEnd, err)
			}
		}
		if d.chunk < maxChunk {
			d.chunk = min(2*d.chunk, maxChunk)
		}
	}
	return nil
}

// fits checks that n items of at least minSize bytes each can be in the rest
// of the file and of the header, before anything is sized by n. Afterwards
// n fits an int even on 32-bit machines.
func (d *decoder) fits(at int64, n uint64, minSize int, format string, args ...any) error {
	left := d.left()
	if n > left/uint64(minSize) {
		return d.fail(at, ErrTruncated, "truncated: %s cannot fit in the %d bytes left", fmt.Sprintf(format, args...), left)
	}
	room := uint64(0)
	if h := uint64(d.at()); h < MaxHeaderSize {
		room = MaxHeaderSize - h
	}
	if n > room/uint64(minSize) {
		return d.fail(at, ErrLimit, "%s would make the header larger than %d bytes (MaxHeaderSize)", fmt.Sprintf(format, args...), MaxHeaderSize)
	}
	return nil
}

func (d *decoder) u32() (uint32, error) {
	b, err := d.take(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (d *decoder) u64() (uint64, error) {
	b, err := d.take(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// strLen reads a string length and checks it against limit and the file.
func (d *decoder) strLen(limit uint64, what string) (uint64, error) {
	start := d.at()
	n, err := d.u64()
	if err != nil {
		return 0, err
	}
	if n > limit {
		return 0, d.fail(start, ErrLimit, "%s length %d exceeds the limit of %d bytes", what, n, limit)
	}
	if n > d.left() {
		return 0, d.fail(start, ErrTruncated, "truncated: %s length %d exceeds the %d bytes left", what, n, d.left())
	}
	return n, nil
}

func (d *decoder) str(limit uint64, what string) (string, error) {
	n, err := d.strLen(limit, what)
	if err != nil {
		return "", err
	}
	b, err := d.take(n)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// value reads one value of type t (already known to be valid).
func (d *decoder) value(t ValueType, depth int) (any, error) {
	switch t {
	case TypeString:
		return d.str(MaxStringLen, "string")
	case TypeArray:
		return d.array(depth + 1)
	}
	b, err := d.take(uint64(t.fixedSize()))
	if err != nil {
		return nil, err
	}
	switch t {
	case TypeUint8:
		return b[0], nil
	case TypeInt8:
		return int8(b[0]), nil
	case TypeBool:
		// Any non-zero byte is true, as in llama.cpp.
		return b[0] != 0, nil
	case TypeUint16:
		return binary.LittleEndian.Uint16(b), nil
	case TypeInt16:
		return int16(binary.LittleEndian.Uint16(b)), nil
	case TypeUint32:
		return binary.LittleEndian.Uint32(b), nil
	case TypeInt32:
		return int32(binary.LittleEndian.Uint32(b)), nil
	case TypeFloat32:
		return math.Float32frombits(binary.LittleEndian.Uint32(b)), nil
	case TypeUint64:
		return binary.LittleEndian.Uint64(b), nil
	case TypeInt64:
		return int64(binary.LittleEndian.Uint64(b)), nil
	case TypeFloat64:
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
	}
	return nil, d.fail(d.at(), ErrUnknownType, "value type %d is unknown", uint32(t))
}

func (d *decoder) array(depth int) (Array, error) {
	start := d.at()
	if depth > MaxArrayDepth {
		return Array{}, d.fail(start, ErrLimit, "arrays nested deeper than %d", MaxArrayDepth)
	}
	et32, err := d.u32()
	if err != nil {
		return Array{}, err
	}
	et := ValueType(et32)
	if !et.Known() {
		return Array{}, d.fail(start, ErrUnknownType, "array element type %d is unknown", et32)
	}
	n, err := d.u64()
	if err != nil {
		return Array{}, err
	}
	if err := d.fits(start, n, et.minSize(), "array of %d %s", n, et); err != nil {
		return Array{}, err
	}
	// n*minSize <= MaxHeaderSize from here on, so n fits an int.
	count := int(n)
	if sz := et.fixedSize(); sz > 0 {
		b, err := d.take(n * uint64(sz))
		if err != nil {
			return Array{}, err
		}
		return Array{Elem: et, Values: decodeFixed(et, b, count)}, nil
	}
	if et == TypeString {
		ss, err := d.strings(count)
		if err != nil {
			return Array{}, err
		}
		return Array{Elem: et, Values: ss}, nil
	}
	out := make([]Array, 0, min(count, 1<<12))
	for i := 0; i < count; i++ {
		a, err := d.array(depth + 1)
		if err != nil {
			return Array{}, d.atIndex(err, i)
		}
		out = append(out, a)
	}
	return Array{Elem: et, Values: out}, nil
}

// atIndex adds an array index to the location of a FormatError raised
// while reading element i. Inner arrays add theirs first, so each index is
// inserted right after the item's name: `key "k"[outer][inner]`.
func (d *decoder) atIndex(err error, i int) error {
	var fe *FormatError
	if base := d.where(); errors.As(err, &fe) && strings.HasPrefix(fe.Where, base) {
		fe.Where = fmt.Sprintf("%s[%d]%s", base, i, fe.Where[len(base):])
	}
	return err
}

// strings reads n strings into one backing string, so a 150k-token
// vocabulary costs a handful of allocations instead of one per token.
func (d *decoder) strings(n int) ([]string, error) {
	if d.r == nil {
		if out, ok := d.stringsMem(n); ok {
			return out, nil
		}
		// Something is wrong: the general path below reports what.
	}
	ends := d.ends[:0]
	est := min(uint64(n)*8, d.left()-uint64(n)*8)
	if d.r != nil {
		// Size by bytes received, not by what the source claims.
		est = min(est, uint64(len(d.buf)-d.pos))
	}
	var sb strings.Builder
	sb.Grow(int(est))
	for i := 0; i < n; i++ {
		l, err := d.strLen(MaxStringLen, "string")
		if err != nil {
			return nil, d.atIndex(err, i)
		}
		b, err := d.take(l)
		if err != nil {
			return nil, d.atIndex(err, i)
		}
		sb.Write(b)
		ends = append(ends, sb.Len())
	}
	d.ends = ends
	all := sb.String()
	out := make([]string, n)
	prev := 0
	for i, e := range ends {
		out[i] = all[prev:e]
		prev = e
	}
	return out, nil
}

// stringsMem is strings for a file held in memory: it sums the lengths
// first so the backing string is allocated once at its exact size. It
// returns false, having consumed nothing, if any string is out of bounds.
func (d *decoder) stringsMem(n int) ([]string, bool) {
	le := binary.LittleEndian
	buf := d.buf[:min(len(d.buf), MaxHeaderSize)]
	p, total := d.pos, 0
	for i := 0; i < n; i++ {
		if len(buf)-p < 8 {
			return nil, false
		}
		l := le.Uint64(buf[p:])
		if l > MaxStringLen || l > uint64(len(buf)-p-8) {
			return nil, false
		}
		p += 8 + int(l)
		total += int(l)
	}
	var sb strings.Builder
	sb.Grow(total)
	for q, i := d.pos, 0; i < n; i++ {
		l := int(le.Uint64(buf[q:]))
		sb.Write(buf[q+8 : q+8+l])
		q += 8 + l
	}
	all := sb.String()
	out := make([]string, n)
	for q, off, i := d.pos, 0, 0; i < n; i++ {
		l := int(le.Uint64(buf[q:]))
		out[i] = all[off : off+l]
		off += l
		q += 8 + l
	}
	d.pos = p
	return out, true
}

func decodeFixed(t ValueType, b []byte, n int) any {
	le := binary.LittleEndian
	switch t {
	case TypeUint8:
		return slices.Clone(b[:n:n])
	case TypeInt8:
		return decodeEach(b, n, 1, func(b []byte) int8 { return int8(b[0]) })
	case TypeBool:
		return decodeEach(b, n, 1, func(b []byte) bool { return b[0] != 0 })
	case TypeUint16:
		return decodeEach(b, n, 2, func(b []byte) uint16 { return le.Uint16(b) })
	case TypeInt16:
		return decodeEach(b, n, 2, func(b []byte) int16 { return int16(le.Uint16(b)) })
	case TypeUint32:
		return decodeEach(b, n, 4, func(b []byte) uint32 { return le.Uint32(b) })
	case TypeInt32:
		return decodeEach(b, n, 4, func(b []byte) int32 { return int32(le.Uint32(b)) })
	case TypeFloat32:
		return decodeEach(b, n, 4, func(b []byte) float32 { return math.Float32frombits(le.Uint32(b)) })
	case TypeUint64:
		return decodeEach(b, n, 8, func(b []byte) uint64 { return le.Uint64(b) })
	case TypeInt64:
		return decodeEach(b, n, 8, func(b []byte) int64 { return int64(le.Uint64(b)) })
	case TypeFloat64:
		return decodeEach(b, n, 8, func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) })
	}
	return nil
}

// decodeEach decodes n elements of size bytes each from b. It and the
// decode functions above inline into decodeFixed: the loops compile as
// if written out per type.
func decodeEach[T any](b []byte, n, size int, decode func([]byte) T) []T {
	v := make([]T, n)
	for i := range v {
		v[i] = decode(b[size*i:])
	}
	return v
}

// parse reads and validates everything up to the data section.
func (d *decoder) parse() (*File, error) {
	d.setWhere("header", -1)
	if d.size == 0 {
		return nil, d.fail(0, ErrNotGGUF, "not a GGUF file: empty")
	}
	if d.size < 4 {
		b, _ := d.take(uint64(d.size))
		if string(b) != "GGUF"[:len(b)] {
			return nil, d.fail(0, ErrNotGGUF, "not a GGUF file: magic %q, want \"GGUF\"", b)
		}
		return nil, d.fail(0, ErrTruncated, "truncated: %d bytes, shorter than the magic", d.size)
	}
	magic, err := d.take(4)
	if err != nil {
		return nil, err
	}
	if string(magic) != "GGUF" {
		switch string(magic) {
		case "lmgg", "fmgg", "tjgg":
			return nil, d.fail(0, ErrNotGGUF, "not a GGUF file: legacy GGML/GGJT format (magic %q); convert it to GGUF", magic)
		}
		return nil, d.fail(0, ErrNotGGUF, "not a GGUF file: magic %q, want \"GGUF\"", magic)
	}
	version, err := d.u32()
	if err != nil {
		return nil, err
	}
	switch {
	case version == 2 || version == 3:
	case version == 1:
		return nil, d.fail(4, ErrUnsupportedVersion, "GGUF version 1 is not supported (only 2 and 3); re-convert the model with a current llama.cpp")
	case version&0xffff == 0 && bits.ReverseBytes32(version) <= 3 && version != 0:
		return nil, d.fail(4, ErrBigEndian, "big-endian GGUF (version reads as %#x) is not supported; use a little-endian file", version)
	default:
		return nil, d.fail(4, ErrUnsupportedVersion, "GGUF version %d is not supported (only 2 and 3)", version)
	}
	nt, err := d.u64()
	if err != nil {
		return nil, err
	}
	nkv, err := d.u64()
	if err != nil {
		return nil, err
	}
	if err := d.fits(8, nt, minTensorSize, "tensor count %d", nt); err != nil {
		return nil, err
	}
	if err := d.fits(16, nkv, minKVSize, "metadata count %d", nkv); err != nil {
		return nil, err
	}
	if left := d.left(); nt*minTensorSize+nkv*minKVSize > left {
		return nil, d.fail(16, ErrTruncated, "truncated: %d tensors and %d metadata entries cannot fit in the %d bytes left", nt, nkv, left)
	}

	f := &File{
		Version:   version,
		Alignment: DefaultAlignment,
		size:      d.size,
		kvIndex:   make(map[string]int, min(nkv, 1<<12)),
		tIndex:    make(map[string]int, min(nt, 1<<12)),
	}
	f.KV = make([]KV, 0, min(nkv, 1<<12))
	alignAt := int64(-1)
	for i := 0; i < int(nkv); i++ {
		start := d.at()
		d.setWhere("key", i)
		key, err := d.uniqueName(start, "key", f.kvIndex, "entry")
		if err != nil {
			return nil, err
		}
		tAt := d.at()
		t32, err := d.u32()
		if err != nil {
			return nil, err
		}
		t := ValueType(t32)
		if !t.Known() {
			return nil, d.fail(tAt, ErrUnknownType, "value type %d is unknown", t32)
		}
		v, err := d.value(t, 0)
		if err != nil {
			return nil, err
		}
		if key == "general.alignment" {
			alignAt = start
		}
		f.kvIndex[key] = len(f.KV)
		f.KV = append(f.KV, KV{Key: key, Value: Value{Type: t, V: v}})
	}

	if alignAt >= 0 {
		d.setWhere("key", -1)
		d.name = "general.alignment"
		v := f.KV[f.kvIndex["general.alignment"]].Value
		a, ok := v.V.(uint32)
		if !ok {
			return nil, d.fail(alignAt, ErrInvalid, "alignment has type %s, want uint32", v.Type)
		}
		if a == 0 || a&(a-1) != 0 {
			return nil, d.fail(alignAt, ErrInvalid, "alignment %d is not a non-zero power of two", a)
		}
		f.Alignment = uint64(a)
	}

	f.Tensors = make([]TensorInfo, 0, min(nt, 1<<12))
	for i := 0; i < int(nt); i++ {
		start := d.at()
		d.setWhere("tensor", i)
		ti, err := d.tensorInfo(f, start)
		if err != nil {
			return nil, err
		}
		f.tIndex[ti.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, ti)
	}

	end := uint64(d.at())
	f.DataOffset = (end + f.Alignment - 1) &^ (f.Alignment - 1)
	if err := f.checkExtents(); err != nil {
		return nil, err
	}
	return f, nil
}

// uniqueName reads a metadata key or tensor name (what), at start, that
// must be neither empty nor one already in seen (the first one's number
// there: its "entry" or "tensor" number, in the error).
func (d *decoder) uniqueName(start int64, what string, seen map[string]int, numbered string) (string, error) {
	name, err := d.str(MaxKeyLen, what)
	if err != nil {
		return "", err
	}
	d.name = name
	if name == "" {
		return "", d.fail(start, ErrInvalid, "empty %s", what)
	}
	if j, dup := seen[name]; dup {
		return "", d.fail(start, ErrInvalid, "duplicate %s (first defined as %s #%d)", what, numbered, j)
	}
	return name, nil
}

func (d *decoder) tensorInfo(f *File, start int64) (TensorInfo, error) {
	var ti TensorInfo
	name, err := d.uniqueName(start, "tensor name", f.tIndex, "tensor")
	if err != nil {
		return ti, err
	}
	ndAt := d.at()
	nd, err := d.u32()
	if err != nil {
		return ti, err
	}
	if nd < 1 || nd > MaxDims {
		return ti, d.fail(ndAt, ErrInvalid, "%d dimensions, want 1 to %d", nd, MaxDims)
	}
	shape := make([]uint64, nd)
	elems := uint64(1)
	for j := range shape {
		at := d.at()
		n, err := d.u64()
		if err != nil {
			return ti, err
		}
		if n == 0 {
			return ti, d.fail(at, ErrInvalid, "dimension %d is 0", j)
		}
		hi, lo := bits.Mul64(elems, n)
		if hi != 0 || lo > MaxElements {
			return ti, d.fail(at, ErrInvalid, "dimension %d (%d) makes more than 2^62 elements", j, n)
		}
		elems = lo
		shape[j] = n
	}
	tAt := d.at()
	t32, err := d.u32()
	if err != nil {
		return ti, err
	}
	typ := quant.Type(t32)
	if !typ.Known() {
		return ti, d.fail(tAt, ErrUnknownType, "tensor type %d is not a known ggml type", t32)
	}
	bs := uint64(typ.BlockSize())
	if shape[0]%bs != 0 {
		return ti, d.fail(ndAt, ErrInvalid, "row length %d is not a multiple of the %s block size %d", shape[0], typ, bs)
	}
	hi, size := bits.Mul64(elems/bs, uint64(typ.TypeSize()))
	if hi != 0 || size > math.MaxInt64 {
		return ti, d.fail(ndAt, ErrInvalid, "%s data of %d elements overflows", typ, elems)
	}
	offAt := d.at()
	off, err := d.u64()
	if err != nil {
		return ti, err
	}
	if off%f.Alignment != 0 {
		return ti, d.fail(offAt, ErrInvalid, "data offset %d is not a multiple of the alignment %d", off, f.Alignment)
	}
	return TensorInfo{Name: name, Shape: shape, Type: typ, Offset: off, Size: size}, nil
}

// wantSize is the file size the tensors need: the end of the one that
// ends last (saturating, as the offsets are the file's claims).
func (f *File) wantSize() int64 {
	end := f.DataOffset
	for _, t := range f.Tensors {
		e, carry := bits.Add64(f.DataOffset, t.Offset, 0)
		e, carry2 := bits.Add64(e, t.Size, carry)
		if carry != 0 || carry2 != 0 {
			return math.MaxInt64
		}
		end = max(end, e)
	}
	return int64(min(end, math.MaxInt64))
}

// checkExtents checks that every tensor lies inside the file and that no
// two overlap.
func (f *File) checkExtents() error {
	if len(f.Tensors) == 0 {
		return nil
	}
	var avail uint64
	if uint64(f.size) > f.DataOffset {
		avail = uint64(f.size) - f.DataOffset
	}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if t.Offset > avail || t.Size > avail-t.Offset {
			return &FormatError{Offset: -1, Where: fmt.Sprintf("tensor %q", t.Name), Err: &IncompleteError{Size: f.size, Want: f.wantSize()},
				Msg: fmt.Sprintf("truncated: data at offset %d, %d bytes, runs past the end of the file (%d data bytes from byte %d)", t.Offset, t.Size, avail, f.DataOffset)}
		}
	}
	order := make([]int32, len(f.Tensors))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		oa, ob := f.Tensors[a].Offset, f.Tensors[b].Offset
		switch {
		case oa < ob:
			return -1
		case oa > ob:
			return 1
		}
		return int(a - b)
	})
	for k := 1; k < len(order); k++ {
		p, c := &f.Tensors[order[k-1]], &f.Tensors[order[k]]
		if p.Offset+p.Size > c.Offset {
			return &FormatError{Offset: -1, Where: fmt.Sprintf("tensor %q", c.Name), Err: ErrInvalid,
				Msg: fmt.Sprintf("data [%d, %d) overlaps tensor %q [%d, %d)", c.Offset, c.Offset+c.Size, p.Name, p.Offset, p.Offset+p.Size)}
		}
	}
	return nil
}
