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
	"fmt"

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
// default, as llama.cpp) or F32.
type KVCache struct {
	Type     quant.Type // F16 or F32
	Layers   int
	Context  int // capacity in positions
	Dim      int // KVHeads*HeadDim
	k16, v16 [][]uint16
	k32, v32 [][]float32
}

// NewKVCache allocates a cache of ctx positions.
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
	default:
		return nil, fmt.Errorf("backend: kv cache type %v not supported (use F16 or F32)", typ)
	}
	return c, nil
}

// Bytes is the memory the cache holds.
func (c *KVCache) Bytes() int64 {
	per := int64(4)
	if c.Type == quant.F16 {
		per = 2
	}
	return 2 * int64(c.Layers) * int64(c.Context) * int64(c.Dim) * per
}

// Store writes the key and value rows of n tokens at positions pos.
func (c *KVCache) Store(layer int, pos []int32, k, v []float32) {
	d := c.Dim
	for i, p := range pos {
		off := int(p) * d
		kr, vr := k[i*d:(i+1)*d], v[i*d:(i+1)*d]
		if c.Type == quant.F16 {
			_ = quant.FP32ToFP16Slice(kr, c.k16[layer][off:off+d])
			_ = quant.FP32ToFP16Slice(vr, c.v16[layer][off:off+d])
		} else {
			copy(c.k32[layer][off:off+d], kr)
			copy(c.v32[layer][off:off+d], vr)
		}
	}
}

// F16 returns the raw F16 key and value storage of a layer (nil for F32).
func (c *KVCache) F16(layer int) (k, v []uint16) {
	if c.Type != quant.F16 {
		return nil, nil
	}
	return c.k16[layer], c.v16[layer]
}

// F32 returns the raw F32 key and value storage of a layer (nil for F16).
func (c *KVCache) F32(layer int) (k, v []float32) {
	if c.Type != quant.F32 {
		return nil, nil
	}
	return c.k32[layer], c.v32[layer]
}
