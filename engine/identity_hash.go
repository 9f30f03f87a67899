package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"sort"

	"github.com/churon/churon/engine/gguf"
)

// Sampling of the tensor data for the identity hash (see Model.Identity):
// both ends and evenly spaced chunks between them.
const (
	idEdge   = 1 << 20  // bytes hashed at each end of the data section
	idChunk  = 64 << 10 // bytes of each sampled chunk
	idChunks = 64       // chunks at evenly spaced offsets
)

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

// fixed appends a fixed-size value, or a slice of them, little-endian:
// GGUF's encoding of its numbers and bools (a bool is one byte, 0 or 1).
func (w *hashWriter) fixed(v any) {
	b, err := binary.Append(w.buf, binary.LittleEndian, v)
	if err != nil {
		panic(fmt.Sprintf("engine: hashing a %T: %v", v, err)) // only fixed-size types come here
	}
	w.buf = b
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

// hashValue feeds one metadata value in GGUF's encoding.
func hashValue(w *hashWriter, v any) {
	switch x := v.(type) {
	case uint8, int8, uint16, int16, uint32, int32, float32, bool, uint64, int64, float64:
		w.fixed(x)
	case string:
		w.str(x)
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

// hashArray feeds the elements of one of gguf.Array's typed slices.
func hashArray(w *hashWriter, vals any) {
	switch a := vals.(type) {
	case []string:
		for _, s := range a {
			w.str(s)
		}
	case []gguf.Array:
		for _, e := range a {
			hashValue(w, e)
		}
	case []uint8, []int8, []uint16, []int16, []uint32, []int32, []float32, []bool, []uint64, []int64, []float64:
		w.fixed(a)
	}
	w.grew()
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
