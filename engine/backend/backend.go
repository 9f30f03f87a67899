// Package backend defines the small interface the model architectures are
// written against, and the data they share with it: weight tensors and the
// per-sequence KV cache.
//
// Activations are plain []float32 in host memory, row-major: a batch of n
// tokens with width d is n*d floats, token i at [i*d:(i+1)*d]. The CPU
// backend (package cpu) implements every operation; an accelerator backend
// implements what it speeds up.
package backend

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/churon/churon/engine/quant"
)

// Tensor is a weight matrix or vector as stored in the model file.
// Data is usually a zero-copy slice of the mapped file.
type Tensor struct {
	Name string
	Type quant.Type
	// Ne is ggml's shape: Ne[0] is the row length (input width of a
	// matrix), Ne[1] the number of rows (output width). Unused dims are 1.
	Ne   [4]int
	Data []byte
}

// Cols is the row length (the input width of a matrix).
func (t *Tensor) Cols() int { return t.Ne[0] }

// Rows is the number of rows (the output width of a matrix).
func (t *Tensor) Rows() int { return t.Ne[1] * t.Ne[2] * t.Ne[3] }

// Elements is the total number of values.
func (t *Tensor) Elements() int { return t.Ne[0] * t.Ne[1] * t.Ne[2] * t.Ne[3] }

// RopeMode selects how RoPE pairs the dimensions of a head.
type RopeMode int

const (
	// RopeNormal rotates adjacent pairs (x[2i], x[2i+1]): Llama's layout
	// after GGUF conversion.
	RopeNormal RopeMode = iota
	// RopeNeoX rotates (x[i], x[i+d/2]): Qwen, Phi-3, GPT-NeoX.
	RopeNeoX
)

// Rope holds the rotary-embedding parameters of a model, in ggml's terms.
type Rope struct {
	Mode     RopeMode
	Dims     int     // rotated dimensions per head (≤ head size)
	FreqBase float32 // θ base, 10000 by default
	// FreqScale is 1/factor for linear and YaRN scaling, 1 otherwise.
	FreqScale float32
	// YaRN: ExtFactor > 0 enables it.
	ExtFactor   float32
	AttnFactor  float32 // multiplies cos/sin (mscale); 1 when unused
	BetaFast    float32
	BetaSlow    float32
	OrigContext int // context length the model was trained with
	// FreqFactors, when set, divide θ per dimension pair (Llama 3.1's
	// rope_freqs tensor, Phi-3's long/short factors). Length Dims/2.
	FreqFactors []float32
}

// Attention describes one attention call over a KV cache.
type Attention struct {
	Heads, KVHeads int
	HeadDim        int
	Scale          float32 // applied to q·k, usually 1/sqrt(HeadDim)
}

// Backend is what an architecture needs to run a forward pass.
// Implementations must be safe to use from one goroutine at a time per
// call; they may parallelise internally.
type Backend interface {
	Name() string
	// MatMul computes dst[i] = w · x[i] for n input rows: x is n×w.Cols,
	// dst is n×w.Rows. Quantized weights are multiplied with activations
	// rounded the way llama.cpp rounds them (see quant.VecDotType).
	MatMul(dst []float32, w *Tensor, x []float32, n int)
	// Embed writes the rows of table named by ids into dst (len(ids)×Cols).
	Embed(dst []float32, table *Tensor, ids []int32) error
	// RMSNorm normalises each row of x (row length len(w)) into dst and
	// multiplies by w. dst may alias x.
	RMSNorm(dst, x, w []float32, eps float32)
	// RoPE rotates each head of x (n rows of heads×headDim) in place;
	// pos[i] is the position of row i.
	RoPE(x []float32, pos []int32, heads, headDim int, r *Rope)
	// Attend writes, for each of the n query rows in q (n×Heads×HeadDim),
	// the attention output over positions [0, pos[i]] of the cache layer.
	Attend(dst, q []float32, kv *KVCache, layer int, pos []int32, a Attention)
	// SwiGLU computes dst = silu(gate) * up, elementwise.
	SwiGLU(dst, gate, up []float32)
	// Add computes dst += x, elementwise.
	Add(dst, x []float32)
	// AddBias adds b to each row of x (row length len(b)).
	AddBias(x, b []float32)
}

// KVCache holds the keys and values of one sequence for every layer.
// Keys and values for position p of layer l live at K[l][p*Dim:(p+1)*Dim]
// (and likewise V), where Dim = KVHeads*HeadDim. Stored as F16 (the
// default, as llama.cpp), F32, or Q8_0 (one 34-byte block per 32 values
// of a row: half the memory of F16, at some cost in quality).
type KVCache struct {
	Type     quant.Type // F16, F32 or Q8_0
	Layers   int
	Context  int // capacity in positions
	Dim      int // KVHeads*HeadDim
	k16, v16 [][]uint16
	k32, v32 [][]float32
	k8, v8   [][]byte // Q8_0: RowSize() bytes per position
}

// NewKVCache allocates a cache of ctx positions. A Q8_0 cache needs dim to
// be a whole number of 32-value blocks.
func NewKVCache(typ quant.Type, layers, ctx, dim int) (*KVCache, error) {
	if layers <= 0 || ctx <= 0 || dim <= 0 {
		return nil, fmt.Errorf("backend: kv cache: bad shape layers=%d ctx=%d dim=%d", layers, ctx, dim)
	}
	c := &KVCache{Type: typ, Layers: layers, Context: ctx, Dim: dim}
	switch typ {
	case quant.F16:
		c.k16, c.v16 = make([][]uint16, layers), make([][]uint16, layers)
		for l := range layers {
			c.k16[l] = make([]uint16, ctx*dim)
			c.v16[l] = make([]uint16, ctx*dim)
		}
	case quant.F32:
		c.k32, c.v32 = make([][]float32, layers), make([][]float32, layers)
		for l := range layers {
			c.k32[l] = make([]float32, ctx*dim)
			c.v32[l] = make([]float32, ctx*dim)
		}
	case quant.Q8_0:
		if bs := quant.Q8_0.BlockSize(); dim%bs != 0 {
			return nil, fmt.Errorf("backend: kv cache: Q8_0 needs a row width that is a multiple of %d, this model's is %d (use F16)", bs, dim)
		}
		rs := c.RowSize()
		c.k8, c.v8 = make([][]byte, layers), make([][]byte, layers)
		for l := range layers {
			c.k8[l] = make([]byte, ctx*rs)
			c.v8[l] = make([]byte, ctx*rs)
		}
	default:
		return nil, fmt.Errorf("backend: kv cache type %v not supported (use F16, F32 or Q8_0)", typ)
	}
	return c, nil
}

// RowSize is the bytes one position's keys (or values) of one layer take
// in the cache's storage type.
func (c *KVCache) RowSize() int {
	switch c.Type {
	case quant.F16:
		return 2 * c.Dim
	case quant.Q8_0:
		bs := quant.Q8_0.BlockSize()
		return c.Dim / bs * quant.Q8_0.TypeSize()
	}
	return 4 * c.Dim
}

// Bytes is the memory the cache holds.
func (c *KVCache) Bytes() int64 {
	return 2 * int64(c.Layers) * int64(c.Context) * int64(c.RowSize())
}

// Store writes the key and value rows of n tokens at positions pos.
func (c *KVCache) Store(layer int, pos []int32, k, v []float32) {
	d := c.Dim
	rs := c.RowSize()
	for i, p := range pos {
		off := int(p) * d
		kr, vr := k[i*d:(i+1)*d], v[i*d:(i+1)*d]
		switch c.Type {
		case quant.F16:
			_ = quant.FP32ToFP16Slice(kr, c.k16[layer][off:off+d])
			_ = quant.FP32ToFP16Slice(vr, c.v16[layer][off:off+d])
		case quant.Q8_0:
			// Sizes are whole blocks by construction (NewKVCache), so
			// Quantize cannot fail here.
			b := int(p) * rs
			_ = quant.Quantize(quant.Q8_0, kr, c.k8[layer][b:b+rs])
			_ = quant.Quantize(quant.Q8_0, vr, c.v8[layer][b:b+rs])
		default:
			copy(c.k32[layer][off:off+d], kr)
			copy(c.v32[layer][off:off+d], vr)
		}
	}
}

// F16 returns the raw F16 key and value storage of a layer (nil for
// other types).
func (c *KVCache) F16(layer int) (k, v []uint16) {
	if c.Type != quant.F16 {
		return nil, nil
	}
	return c.k16[layer], c.v16[layer]
}

// F32 returns the raw F32 key and value storage of a layer (nil for
// other types).
func (c *KVCache) F32(layer int) (k, v []float32) {
	if c.Type != quant.F32 {
		return nil, nil
	}
	return c.k32[layer], c.v32[layer]
}

// Q8 returns the raw Q8_0 key and value storage of a layer: RowSize()
// bytes per position, each row Dim/32 blocks of an F16 scale and 32 int8
// values (nil for other types).
func (c *KVCache) Q8(layer int) (k, v []byte) {
	if c.Type != quant.Q8_0 {
		return nil, nil
	}
	return c.k8[layer], c.v8[layer]
}

// littleEndian: the host stores F16 and F32 values in the byte order
// snapshots use, so rows are copied as bytes instead of converted one by
// one (445 → ~1,000 MiB/s restoring an F16 cache).
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// checkRows validates a row range for AppendRows and SetRows.
func (c *KVCache) checkRows(layer, p0, p1 int) error {
	if layer < 0 || layer >= c.Layers {
		return fmt.Errorf("backend: kv cache: layer %d outside [0,%d)", layer, c.Layers)
	}
	if p0 < 0 || p1 < p0 || p1 > c.Context {
		return fmt.Errorf("backend: kv cache: positions [%d,%d) outside [0,%d)", p0, p1, c.Context)
	}
	return nil
}

// AppendRows appends to dst the stored rows of positions [p0, p1) of a
// layer's keys (values false) or values (values true): RowSize() bytes
// per position, exactly as stored (F16 and F32 little-endian, Q8_0 as
// its blocks), so SetRows restores them bit for bit. KV snapshots are
// written with it.
func (c *KVCache) AppendRows(dst []byte, layer int, values bool, p0, p1 int) ([]byte, error) {
	if err := c.checkRows(layer, p0, p1); err != nil {
		return dst, err
	}
	d := c.Dim
	if p0 == p1 {
		return dst, nil
	}
	switch c.Type {
	case quant.F16:
		src := c.k16[layer]
		if values {
			src = c.v16[layer]
		}
		src = src[p0*d : p1*d]
		if littleEndian {
			return append(dst, unsafe.Slice((*byte)(unsafe.Pointer(&src[0])), 2*len(src))...), nil
		}
		for _, h := range src {
			dst = binary.LittleEndian.AppendUint16(dst, h)
		}
	case quant.Q8_0:
		src := c.k8[layer]
		if values {
			src = c.v8[layer]
		}
		rs := c.RowSize()
		dst = append(dst, src[p0*rs:p1*rs]...)
	default:
		src := c.k32[layer]
		if values {
			src = c.v32[layer]
		}
		src = src[p0*d : p1*d]
		if littleEndian {
			return append(dst, unsafe.Slice((*byte)(unsafe.Pointer(&src[0])), 4*len(src))...), nil
		}
		for _, f := range src {
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(f))
		}
	}
	return dst, nil
}

// SetRows stores rows encoded as AppendRows encodes them at positions p0,
// p0+1, …: len(src) must be a whole number of rows that fit the cache.
func (c *KVCache) SetRows(layer int, values bool, p0 int, src []byte) error {
	rs := c.RowSize()
	if len(src)%rs != 0 {
		return fmt.Errorf("backend: kv cache: %d bytes are not whole rows of %d", len(src), rs)
	}
	p1 := p0 + len(src)/rs
	if err := c.checkRows(layer, p0, p1); err != nil {
		return err
	}
	d := c.Dim
	if p0 == p1 {
		return nil
	}
	switch c.Type {
	case quant.F16:
		dst := c.k16[layer]
		if values {
			dst = c.v16[layer]
		}
		dst = dst[p0*d : p1*d]
		if littleEndian {
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), 2*len(dst)), src)
			return nil
		}
		for i := range dst {
			dst[i] = binary.LittleEndian.Uint16(src[2*i:])
		}
	case quant.Q8_0:
		dst := c.k8[layer]
		if values {
			dst = c.v8[layer]
		}
		copy(dst[p0*rs:p1*rs], src)
	default:
		dst := c.k32[layer]
		if values {
			dst = c.v32[layer]
		}
		dst = dst[p0*d : p1*d]
		if littleEndian {
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), 4*len(dst)), src)
			return nil
		}
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	}
	return nil
}
