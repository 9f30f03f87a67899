package cpu

import "github.com/churon/churon/engine/backend"

// Tables the CPU's kernels compute with, for devices that must compute
// exactly as the CPU does: a GPU backend uploads them instead of
// recomputing them with its own library functions.

// RopeTable returns the (cos, sin) pairs RoPE rotates by at positions
// pos — r.Dims/2 pairs per position, len(pos)·r.Dims values — made as the
// CPU's RoPE makes them (YaRN, frequency factors), in dst's memory when
// it is large enough.
func RopeTable(dst []float32, pos []int32, r *backend.Rope) []float32 {
	c := ropeCache{cs: dst[:0]}
	return c.table(pos, r)
}

// GELUTable is ggml's GELU at every F16 input, by the input's bits, as
// F16: the table GeGLU looks values up in. It is shared: do not modify.
func GELUTable() []uint16 { return geluTab() }

// VectorKernels reports whether attention and SwiGLU run the assembly
// kernels (AVX2 and FMA: their sums and exponentials differ from the Go
// loops' in the last bits) rather than their Go twins.
func VectorKernels() bool { return useAsm }

// SameRope reports whether a RoPE table made for a still holds for b:
// the same parameters and the same frequency factors (by identity: they
// are the model's).
func SameRope(a, b *backend.Rope) bool { return sameRope(a, b) }
