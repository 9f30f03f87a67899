// Package backend is the device seam: the interface the model
// architectures are written against once, and what crosses it.
//
// A Device owns memory and runs operations on it. Activations live in
// device buffers (Buf), weights are made resident once at load (Upload:
// on the CPU the mapped tensor itself), and every layer's per-sequence
// state — the KV rows of an attention layer, the fixed-size state of a
// recurrent or convolution layer — is made by the device its layer runs
// on (NewKV, NewState) and read and written as bytes for snapshots.
// Operations queue in submission order; only Read's destination, the
// cache's row reads and Sync wait for them, and an error in a queued
// operation surfaces at the next Sync.
//
// A Plan puts the embedding, each layer and the output head on a device;
// the forward pass moves the residual stream between devices where the
// plan changes device (once per pass under llama.cpp's offload rule).
// Backends register by name (Register) from the packages that implement
// them; the engine probes them in order and keeps the first that works.
//
// Tensor shapes follow ggml: Ne[0] is the row length (a matrix's input
// width), Ne[1] the number of rows. Activations are row-major: a batch of
// n tokens of width d is n*d values, token i at [i*d, (i+1)*d).
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

// Slice is the i-th slice of t along its last dimension that is not 1 —
// one expert's matrix of a 3-D expert tensor, one expert's bias row of a
// 2-D one — sharing t's data. It panics for a one-row t or an i out of
// range (callers' bugs) and fails for data that does not hold the slices.
func (t *Tensor) Slice(i int) (*Tensor, error) {
	last := 3
	for last > 0 && t.Ne[last] == 1 {
		last--
	}
	if last == 0 {
		panic(fmt.Sprintf("backend: %s is one row: it has no slices", t.Name))
	}
	n := t.Ne[last]
	if i < 0 || i >= n {
		panic(fmt.Sprintf("backend: slice %d of %s, which has %d", i, t.Name, n))
	}
	rowBytes, ok := t.Type.RowSize(t.Ne[0])
	if !ok {
		return nil, fmt.Errorf("backend: %s: rows of %d are not whole %v blocks", t.Name, t.Ne[0], t.Type)
	}
	ne := t.Ne
	ne[last] = 1
	size := rowBytes * ne[1] * ne[2] * ne[3]
	if len(t.Data) < size*n {
		return nil, fmt.Errorf("backend: %s: %d bytes for %d slices of %d", t.Name, len(t.Data), n, size)
	}
	return &Tensor{Name: fmt.Sprintf("%s[%d]", t.Name, i), Type: t.Type, Ne: ne, Data: t.Data[i*size : (i+1)*size]}, nil
}

// IsVector reports whether the tensor is one row (a norm weight, a bias,
// attention sinks): devices keep those as float32 values.
func (t *Tensor) IsVector() bool { return t.Rows() == 1 }

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
	// rope_freqs tensor, Phi-3's long/short factors). Length Dims/2. They
	// are parameters, not weights: a device copies them where it needs
	// them.
	FreqFactors []float32
}

// Attention describes one layer's attention: enough data that the
// architectures of 2026 differ in values, not in methods. The zero value
// of each optional field turns it off.
type Attention struct {
	Heads, KVHeads int
	HeadDim        int
	Scale          float32 // applied to q·k, usually 1/sqrt(HeadDim)
	// Window > 0 makes the layer a sliding-window one: a query at
	// position p sees keys at positions (p−Window, p] only (Gemma 3's
	// local layers, gpt-oss's banded ones).
	Window int
	// SoftCap > 0 caps each scaled score s as SoftCap·tanh(s/SoftCap)
	// before the softmax (Gemma 2).
	SoftCap float32
	// Sinks adds one logit per query head to each softmax's denominator,
	// without a value (gpt-oss's attention sinks); Attend gets them as
	// AttendInputs.Sinks.
	Sinks bool
	// Gated multiplies each head's output elementwise by the sigmoid of
	// its gate, AttendInputs.Gate (Qwen3-Next and Qwen 3.5's gated
	// attention).
	Gated bool
}
