// Package cpu is the reference backend: every operation the architectures
// need, on the host CPU, split across a persistent worker pool.
//
// Numerics follow llama.cpp's CPU backend where it matters for agreement:
// activations are rounded to the weight type's dot-product partner
// (quant.VecDotType) before a matrix product, RMSNorm sums are
// accumulated in float64 as ggml does, and an F16 KV cache rounds queries
// to F16 like ggml's F16 matrix products.
//
// Speed comes from four things. Matrix products go through quant's
// multi-row and tile dot products (SIMD where the CPU has it), in blocks
// of weight rows sized for L2 that meet every token of the batch, so each
// weight byte is read from memory once per product: once per decode
// step, whatever the number of sequences batched into it. Products that
// share an input (q, k and v; gate and up) run as one parallel loop over
// their concatenated rows. Attention walks the cache in blocks, widening
// each from F16 once for a whole group of query heads and block of query
// rows, with small AVX2 kernels (plain-Go twins elsewhere); it never holds
// a tokens×tokens matrix (see attention.go for why its softmax is exact
// rather than online). And the worker pool hands out jobs from an atomic
// counter to workers that spin briefly between loops, so a decode step's
// hundred-odd loops cost microseconds, not thread wake-ups.
//
// A Backend allocates nothing per call once its scratch has grown to the
// largest batch seen.
package cpu
