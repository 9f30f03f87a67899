package backend

import (
	"fmt"

	"github.com/churon/churon/engine/quant"
)

// Device is an accelerator, or the CPU, seen from the forward pass.
//
// Operations are queued in submission order and may run later: their
// host arguments (token ids, positions, Write's source) are copied, or
// used, before the call returns, but results reach the host only through
// Read, whose destination is valid after the next Sync returns nil. An
// operation that fails makes the next Sync return the error; on a GPU
// such an error is usually sticky (every later Sync returns it), and the
// engine then moves the model to the CPU. Argument errors a caller could
// have checked (shapes, buffers of another device) panic: they are bugs.
//
// A Device is used by one goroutine at a time: the engine serialises
// forward passes, and the cache reads and writes of snapshots, per model.
type Device interface {
	// Name describes the device for people: "CPU avx512+amx (2 threads)",
	// "NVIDIA H200 (sm_90, 139 GiB)".
	Name() string
	// Supports reports whether the device runs matrix products with
	// weights of type t. The planner keeps a layer whose weights it does
	// not support on the CPU.
	Supports(t quant.Type) bool
	// FreeBytes is the memory left for weights, caches and buffers, or -1
	// when the device shares the host's memory and does not plan by it.
	// A backend leaves out what it needs itself (its context, library
	// workspaces, a safety margin): the planner fills what it reports.
	FreeBytes() int64

	// Alloc returns a buffer of n float32 values (contents undefined).
	Alloc(n int) (Buf, error)
	// Free releases a buffer from Alloc, in submission order: operations
	// queued before Free still read and write it (a GPU backend frees on
	// its stream, or after a Sync); later ones must not use it. Freeing
	// the zero Buf does nothing, and Free after Close or a failure is safe.
	Free(b Buf)
	// Upload makes a weight resident, once, at load. A one-row tensor
	// (norm weight, bias, sinks) is kept as float32 values. Weights are
	// freed with the device (Close), never one by one.
	Upload(t *Tensor) (Weight, error)
	// NewKV makes one attention layer's KV rows for one sequence.
	NewKV(s KVSpec) (KV, error)
	// NewState makes one layer's fixed-size state for one sequence.
	NewState(bytes int) (State, error)

	// Write queues a copy of src (host memory, copied before Write
	// returns) into dst.
	Write(dst Buf, src []float32)
	// Read queues a copy of src into dst (host memory), valid once the
	// next Sync returns nil.
	Read(dst []float32, src Buf)
	// CopyRows copies rows of cols values: row i from src[i*srcStride:]
	// to dst[i*dstStride:].
	CopyRows(dst Buf, dstStride int, src Buf, srcStride int, rows, cols int)

	// Embed writes the rows of table named by ids into dst
	// (len(ids)×Cols). The ids are valid: callers check them.
	Embed(dst Buf, table Weight, ids []int32)
	// MatMul computes dst[i] = w · x[i] for n input rows: x is n×Cols,
	// dst n×Rows. Quantized weights multiply activations rounded the way
	// llama.cpp rounds them (quant.VecDotType).
	MatMul(dst Buf, w Weight, x Buf, n int)
	// MatMulMulti computes dst[j] = w[j] · x for weights sharing one
	// input: the q, k and v projections, gate and up. Each dst[j] equals
	// what MatMul would write; a device may run it as a loop.
	MatMulMulti(dst []Buf, w []Weight, x Buf, n int)
	// RMSNorm normalises each row of x (row length w's) into dst and
	// multiplies by w. dst may be x.
	RMSNorm(dst, x Buf, w Weight, eps float32)
	// AddBias adds b to each row of x (row length b's).
	AddBias(x Buf, b Weight)
	// RoPE rotates each head of x (len(pos) rows of heads×headDim) in
	// place; pos[i] is the position of row i.
	RoPE(x Buf, pos []int32, heads, headDim int, r *Rope)
	// StoreKV writes the key and value rows (len(pos)×Dim each) of
	// positions pos into kv.
	StoreKV(kv KV, pos []int32, k, v Buf)
	// Attend writes, for each of the len(pos) query rows of q
	// (rows of Heads×HeadDim), the attention output over the positions
	// of kv that a query at pos[i] sees (see Attention). in holds the
	// layer's resident inputs the optional parts of a need.
	Attend(dst, q Buf, kv KV, pos []int32, a *Attention, in AttendInputs)
	// SwiGLU computes dst = silu(gate) * up, elementwise.
	SwiGLU(dst, gate, up Buf)
	// GeGLU computes dst = gelu(gate) * up, elementwise, with GELU's tanh
	// approximation as ggml's CPU computes it (Gemma's feed-forward).
	GeGLU(dst, gate, up Buf)
	// Scale multiplies every value of x by s.
	Scale(x Buf, s float32)
	// SoftCap caps every value v of x as c·tanh(v/c) (Gemma's final
	// logits).
	SoftCap(x Buf, c float32)
	// Add computes dst += x, elementwise.
	Add(dst, x Buf)

	// Mixture-of-experts operations: a layer's experts are one 3-D
	// weight, each expert multiplies only the rows routed to it.

	// WeightSlice is the i-th slice of w along its last dimension, sharing
	// w's memory: one expert's matrix of a 3-D expert tensor, or one
	// expert's bias row of a 2-D one (kept as float32 values, as a
	// one-row weight is). Callers keep the slices they use: making one
	// may cost (a bias row is widened).
	WeightSlice(w Weight, i int) (Weight, error)
	// MatMulEach computes dst[j] = w[j] · x[j] for weights of one input
	// width, each with its own input of n[j] rows (a mixture of experts'
	// experts, each over its tokens). Products given the same input (the
	// same view) may share its rounding. Each dst[j] equals what MatMul
	// would write; a device may run it as a loop.
	MatMulEach(dst []Buf, w []Weight, x []Buf, n []int)
	// GatherRows copies row rows[j] of src to row j of dst (rows of cols
	// values).
	GatherRows(dst, src Buf, cols int, rows []int32)
	// ScatterAddRows adds scale[j]·(row j of src) to row rows[j] of dst,
	// in order (rows of cols values); a nil scale adds the rows as they
	// are.
	ScatterAddRows(dst, src Buf, cols int, rows []int32, scale []float32)
	// SwiGLUClamped is gpt-oss's SwiGLU: with g = min(gate, limit) and
	// u = clamp(up, −limit, limit), dst = g·σ(alpha·g)·(u+1).
	SwiGLUClamped(dst, gate, up Buf, alpha, limit float32)

	// Sync waits for every queued operation and returns the first error
	// among them.
	Sync() error
	// Close releases the device and everything it made. Afterwards only
	// Free, KV.Release and State.Release may still be called (the engine
	// releases the caches of a device that failed after closing it); they
	// must do nothing harmful.
	Close() error
}

// Mem is one allocation of a device: what a Buf views. Each device has
// its own implementation and refuses the others'.
type Mem interface {
	// Len is the allocation's length in float32 values.
	Len() int
}

// Buf is a run of float32 values in a device's memory: a view of one
// allocation. It is a small value; slicing it never allocates.
type Buf struct {
	mem    Mem
	off, n int
}

// NewBuf is how a device hands out a view of the whole of its
// allocation m.
func NewBuf(m Mem) Buf { return Buf{mem: m, n: m.Len()} }

// Mem is the allocation the buffer views (nil for the zero Buf).
func (b Buf) Mem() Mem { return b.mem }

// Off is where the view starts in its allocation, in values.
func (b Buf) Off() int { return b.off }

// Len is the number of values in the view.
func (b Buf) Len() int { return b.n }

// Slice returns the values [lo, hi) of the view.
func (b Buf) Slice(lo, hi int) Buf {
	if lo < 0 || hi < lo || hi > b.n {
		panic(fmt.Sprintf("backend: Buf.Slice(%d, %d) of a view of %d values", lo, hi, b.n))
	}
	return Buf{mem: b.mem, off: b.off + lo, n: hi - lo}
}

// Weight is a tensor made resident on a device by Upload.
type Weight interface {
	// Tensor is the file's tensor it was made from (name, type, shape).
	Tensor() *Tensor
}

// KVSpec is the shape of one attention layer's cache.
type KVSpec struct {
	Type    quant.Type // F16, F32 or Q8_0
	Context int        // capacity in positions
	Dim     int        // KV heads × head size: one position's keys (or values)
	// Ring > 0 keeps only the last Ring positions, position p in row
	// p mod Ring: a sliding-window layer's cache (see RingRows), which
	// serves a context of any length in Ring rows. 0 keeps a row for
	// every position.
	Ring int
}

// Rows is the number of rows the cache holds: Ring, or Context.
func (s KVSpec) Rows() int {
	if s.Ring > 0 {
		return s.Ring
	}
	return s.Context
}

// Row is the row position p is stored in.
func (s KVSpec) Row(p int) int {
	if s.Ring > 0 {
		return p % s.Ring
	}
	return p
}

// RowSize is the bytes one position's keys (or values) take stored as
// Type: the unit AppendRows and SetRows move.
func (s KVSpec) RowSize() int {
	switch s.Type {
	case quant.F16:
		return 2 * s.Dim
	case quant.Q8_0:
		return s.Dim / quant.Q8_0.BlockSize() * quant.Q8_0.TypeSize()
	}
	return 4 * s.Dim
}

// Bytes is the memory a cache of this shape holds.
func (s KVSpec) Bytes() int64 { return 2 * int64(s.Rows()) * int64(s.RowSize()) }

// Check reports a shape no device can make.
func (s KVSpec) Check() error {
	if s.Context <= 0 || s.Dim <= 0 || s.Ring < 0 || s.Ring > s.Context {
		return fmt.Errorf("backend: kv cache: bad shape context=%d dim=%d ring=%d", s.Context, s.Dim, s.Ring)
	}
	switch s.Type {
	case quant.F16, quant.F32:
	case quant.Q8_0:
		if bs := quant.Q8_0.BlockSize(); s.Dim%bs != 0 {
			return fmt.Errorf("backend: kv cache: Q8_0 needs a row width that is a multiple of %d, this model's is %d (use F16)", bs, s.Dim)
		}
	default:
		return fmt.Errorf("backend: kv cache type %v not supported (use F16, F32 or Q8_0)", s.Type)
	}
	return nil
}

// AttendInputs are the resident inputs of Attend that only some
// attention layers have: they come per call, so they always belong to
// the device the layer runs on now.
type AttendInputs struct {
	// Gate (Attention.Gated): n×Heads×HeadDim gate values laid out like
	// the queries.
	Gate Buf
	// Sinks (Attention.Sinks): a one-row F32 weight of Heads logits.
	Sinks Weight
}

// KV is one attention layer's keys and values for one sequence, in the
// memory of the device that made it. Rows are moved as bytes exactly as
// stored — F16 and F32 little-endian, Q8_0 as its 34-byte blocks — which
// is the same on every device, so a snapshot written from one device
// restores on another bit for bit.
type KV interface {
	Spec() KVSpec
	// AppendRows appends the stored rows of positions [p0, p1) of the
	// keys (values false) or values (true): RowSize bytes a position. It
	// waits for queued operations that write them. A ring (KVSpec.Ring)
	// moves at most Ring positions at once, and which of them it still
	// holds is its Cache's to know (Cache.Held).
	AppendRows(dst []byte, values bool, p0, p1 int) ([]byte, error)
	// SetRows stores rows encoded as AppendRows encodes them at positions
	// p0, p0+1, …; len(src) must be whole rows that fit.
	SetRows(values bool, p0 int, src []byte) error
	// Release returns the memory to the device; the KV must not be used
	// afterwards. It is safe after the device closed or failed, and from
	// any goroutine (a sequence nobody closed is released when collected).
	Release()
}

// State is one layer's fixed-size per-sequence state (a recurrent or
// convolution layer's), as bytes in the device's memory. Reading it at a
// position and writing it back later is how such a layer is checkpointed,
// truncated and snapshotted: unlike KV rows, it cannot be cut.
type State interface {
	Bytes() int
	// AppendTo appends the state's bytes to dst, waiting for queued
	// operations that write it.
	AppendTo(dst []byte) ([]byte, error)
	// Set replaces the state with src (Bytes() bytes).
	Set(src []byte) error
	// Release is KV.Release's twin.
	Release()
}

// CheckRows validates a range of positions of a cache of spec s, which
// a ring holds only Ring of at once: a helper for KV implementations.
func (s KVSpec) CheckRows(p0, p1 int) error {
	if p0 < 0 || p1 < p0 || p1 > s.Context {
		return fmt.Errorf("backend: kv cache: positions [%d,%d) outside [0,%d)", p0, p1, s.Context)
	}
	if p1-p0 > s.Rows() {
		return fmt.Errorf("backend: kv cache: positions [%d,%d) in a ring of %d rows", p0, p1, s.Rows())
	}
	return nil
}

// CheckSetRows validates the rows SetRows is given for a cache of spec
// s: src must be whole rows (the error names the backend, prefix) at
// positions CheckRows accepts. p1 is the position after the last row.
func (s KVSpec) CheckSetRows(prefix string, p0 int, src []byte) (p1 int, err error) {
	rs := s.RowSize()
	if len(src)%rs != 0 {
		return 0, fmt.Errorf("%s: kv cache: %d bytes are not whole rows of %d", prefix, len(src), rs)
	}
	p1 = p0 + len(src)/rs
	return p1, s.CheckRows(p0, p1)
}

// CheckStateSet validates what State.Set is given for a state of n
// bytes; the error names the backend (prefix).
func CheckStateSet(prefix string, src []byte, n int) error {
	if len(src) != n {
		return fmt.Errorf("%s: state: %d bytes for a state of %d", prefix, len(src), n)
	}
	return nil
}

// PartUploader is a Device that makes the weights of one part of a model
// (a layer, the output head) resident together: a GPU backend puts them
// in one allocation instead of one per tensor. The weights Place makes
// for a part come from one UploadPart call when the part's device has it.
type PartUploader interface {
	// UploadPart is Upload for each of ts, in order.
	UploadPart(ts []*Tensor) ([]Weight, error)
}
