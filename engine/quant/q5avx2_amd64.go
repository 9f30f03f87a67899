//go:build amd64 && !noasm

package quant

import "golang.org/x/sys/cpu"

// Q5_0 at the avx2 level in the generic order (q5avx2_amd64.s, by
// internal/genq5avx2): every Q5_0 product there — VecDot's one-row
// kernel, VecDotMulti's two- to four-activation kernels, VecDotRows'
// eight-row decode kernel and VecDotTile's tile (from q5TileMinActs
// activation rows) — gives each result the generic twin's bits (dotQ5_0), so that a
// row's result does not depend on the kernel or on how many rows or
// activations share a call, the rule Q4_0's and Q8_0's kernels at this
// level keep (docs/performance.md, "Q4_0 and Q8_0 prompt tiles and
// rounding"). The avx512 level runs its own Q5_0 kernels (the prepared
// quads of dot_amd64.s).

// tileVNNI selects the AVX-VNNI tile for Q5_0 and Q8_0 at the avx2 level
// where the CPU has AVX-VNNI (tests and benchmarks flip it): one
// VPDPBUSD a group and activation row where the VPMADDUBSW tiles take
// one (Q5_0, plus widening its int16 sums) or two (Q8_0's nibble halves).
// Q8_0 is then widened to Q5_0's layout (w+128 as unsigned bytes).
var tileVNNI = cpu.X86.HasAVXVNNI

// q5Widen is the bytes qWidenQ5_0AVX2 writes per block of eight rows:
// eight groups of 32 quant bytes and eight float scales.
const q5Widen = 288

//go:noescape
func dotQ5_0GAVX2(w, x *byte, nb int) float32

// One weight row against two to four activation rows stride bytes apart
// (VecDotMulti's kernels), out[j] for activation j.

//go:noescape
func dotQ5_0x2GAVX2(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ5_0x3GAVX2(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ5_0x4GAVX2(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ5_0Rows8AVX2(w *byte, stride, ngroups int, x *byte, nb int, out *float32, pf int)

//go:noescape
func qWidenQ5_0AVX2(rows *byte, idx, mask *int32, nb int, dst *byte)

// q5FullWiden is false only in BenchmarkQ5_0AVX2Tile's "gather" arm,
// which widens whole groups as part groups are widened.
var q5FullWiden = true

// qWidenQ5_0FullAVX2 is qWidenQ5_0AVX2 for a whole group of eight rows
// stride bytes apart, which it loads rather than gathers.
//
//go:noescape
func qWidenQ5_0FullAVX2(rows *byte, stride, nb int, dst *byte)

//go:noescape
func qWidenQ8_0UAVX2(rows *byte, idx, mask *int32, nb int, dst *byte)

//go:noescape
func qTileQ8AVXVNNI(w *byte, tab *uint32, nb int, k *kTileRows)

//go:noescape
func qTileQ5_0AVX2(w *byte, tab *uint32, nb int, k *kTileRows)
