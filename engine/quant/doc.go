// Package quant implements ggml's tensor block formats: their sizes
// (types.go), conversion to float32 (Dequantize), the reference quantizers
// (Quantize), the half-float conversions, and the dot products the CPU
// kernels build matrix-vector products from (VecDot).
//
// A row of n elements is n/BlockSize blocks of TypeSize bytes. Multi-byte
// fields are little-endian; "half" is IEEE binary16. Within a block,
// element i of the row is written x[i]; "d·q" means the float32 product
// of the decoded scale and the integer quant, exactly in the order ggml
// computes it.
//
//	F32     4 bytes per element.
//	F16     2 bytes: binary16.
//	BF16    2 bytes: the top half of a float32.
//
//	Q4_0    32 elements, 18 bytes   d half | qs[16]
//	        x[j] = (qs[j]&15 − 8)·d, x[j+16] = (qs[j]>>4 − 8)·d
//	Q4_1    32 elements, 20 bytes   d half | m half | qs[16]
//	        x[j] = (qs[j]&15)·d + m, x[j+16] = (qs[j]>>4)·d + m
//	Q5_0    32 elements, 22 bytes   d half | qh uint32 | qs[16]
//	        fifth bit of x[j] is qh bit j; x = (q − 16)·d
//	Q5_1    32 elements, 24 bytes   d half | m half | qh uint32 | qs[16]
//	        x = q·d + m
//	Q8_0    32 elements, 34 bytes   d half | qs[32] int8;  x = qs·d
//	Q8_1    32 elements, 36 bytes   d half | s half | qs[32] int8
//	        s = d·Σqs, so a Q4_1/Q5_1 dot product gets its min term as m·s
//
// The K-quants group 256 elements (QK_K) into a super-block with one or
// two half-float super-scales and 16 or 8 small integer sub-block scales:
//
//	Q2_K   256 elements, 84 bytes   scales[16] | qs[64] | d half | dmin half
//	       16 groups of 16; scales[g] = scale (low nibble) | min (high);
//	       x = (d·sc)·q − (dmin·m), q 2 bits
//	Q3_K   256 elements, 110 bytes  hmask[32] | qs[64] | scales[12] | d half
//	       16 groups of 16 with 6-bit signed scales (stored +32: low
//	       nibbles in bytes 0–7, top two bits in bytes 8–11);
//	       x = (d·(sc−32))·(q − 4 if the hmask bit is clear), q 2 bits,
//	       the hmask bit of element e is bit e/32 of hmask[e%32]
//	Q4_K   256 elements, 144 bytes  d half | dmin half | scales[12] | qs[128]
//	       8 groups of 32 with 6-bit scale and min packed in 12 bytes;
//	       x = (d·sc)·q − (dmin·m), q 4 bits
//	Q5_K   256 elements, 176 bytes  d half | dmin half | scales[12] | qh[32] | qs[128]
//	       as Q4_K with a fifth bit from qh
//	Q6_K   256 elements, 210 bytes  ql[128] | qh[64] | scales[16] int8 | d half
//	       16 groups of 16; x = d·sc·(q − 32), q 6 bits (4 in ql, 2 in qh)
//	Q8_K   256 elements, 292 bytes  d float32 | qs[256] int8 | bsums[16] int16
//	       activations only: bsums are sums of 16 quants for the min terms
//
// In the 2-bit and 4-bit packings, byte l of each 32-byte slice holds
// elements l, l+32 (, l+64, l+96) of that slice's 64 (or 128) elements,
// lowest bits first; doc comments on the (de)quantizers give the details.
//
// The IQ4 formats replace the linear 4-bit grid with a 16-entry codebook:
//
//	IQ4_NL  32 elements, 18 bytes   d half | qs[16];  x = d·kvalues[q]
//	IQ4_XS  256 elements, 136 bytes d half | scales_h uint16 | scales_l[4] | qs[128]
//	        8 groups of 32, 6-bit scales (stored +32: low nibbles in
//	        scales_l, top two bits in scales_h); x = (d·(ls−32))·kvalues[q]
//
// MXFP4 (gpt-oss's experts) shares one power-of-two scale among 32 E2M1
// floats, stored doubled as integers:
//
//	MXFP4   32 elements, 17 bytes   e uint8 (E8M0) | qs[16]
//	        x[j] = 2^(e−128)·k[qs[j]&15], x[j+16] = 2^(e−128)·k[qs[j]>>4],
//	        k = {0, 1, 2, 3, 4, 6, 8, 12, 0, −1, −2, −3, −4, −6, −8, −12};
//	        2^(e−128) is ggml's E8M0 "half" (subnormal for e < 2)
//
// # Exactness
//
// These match ggml (llama.cpp at the commit the shared test data was made
// with) bit for bit, and the tests check each against llama.cpp's output:
//   - FP16ToFP32, FP32ToFP16, BF16ToFP32, FP32ToBF16 (round to nearest
//     even; FP32ToFP16 against ggml's portable conversion on all 2³²
//     inputs when CHURON_EXHAUSTIVE is set).
//   - Dequantize, for every supported type (ggml's to_float).
//   - Quantize, for every supported type: byte-identical to
//     quantize_row_*_ref (for IQ4_NL and IQ4_XS, to quantize_iq4_nl /
//     quantize_iq4_xs without an importance matrix, which is what
//     llama-quantize runs). All 16 weight tensors of every quantzoo model
//     are reproduced exactly from the F32 source.
//   - MXFP4 against ggml's own dequantize_row_mxfp4 on every scale byte
//     and quantize_row_mxfp4_ref on 400 blocks (testdata/mxfp4_ggml.json,
//     written by tools/mxfp4ref/gen.sh from llama.cpp v0.5.0's source).
//
// The bit-exact code rounds every float32 product before adding it
// (float32(x*y) + z), because Go may otherwise fuse multiply-adds on arm64
// and other architectures; a test compiles the package for them and
// rejects any fused instruction.
//
// VecDot is not bit-exact with any one llama.cpp build and need not be:
// llama.cpp's own SIMD kernels sum in different orders. It follows the
// scalar reference arithmetic (exact integer sums per block, then one
// float scale per block or sub-block; Q8_1's s and Q8_K's bsums for the
// min terms), so it agrees with the dot of the dequantized operands to
// float rounding. Note that llama.cpp's x86 SIMD activation quantizer
// (quantize_row_q8_0 with AVX) computes 127/amax and rounds ties to even,
// so its Q8_0 activations can differ from Quantize(Q8_0, …) — the
// reference — in an occasional quant.
//
// Not implemented: the IQ1/IQ2/IQ3 grid formats, TQ1_0/TQ2_0, and the
// integer types; Dequantize and Quantize return ErrUnsupported for them.
//
// # SIMD
//
// The dot products run kernels written in Go assembly, chosen once from
// the CPU features golang.org/x/sys/cpu reports (SIMDLevel says which).
// On amd64 (dot_amd64.s, Go side in simd_amd64.go):
//
//	avx2    AVX2 + FMA (+ F16C): every VecDot type (MXFP4 as IQ4_NL,
//	        with its codebook and an E8M0 scale table)
//	avx512  AVX-512 F/BW/VL + VNNI: 512-bit VPDPBUSD kernels for Q4_0,
//	        Q5_0 and Q8_0, 256-bit VPDPBUSD for Q4_1, Q5_1, IQ4_NL,
//	        512-bit F16, BF16 and F32; the K-quants run their avx2 kernels
//
// On arm64 (dot_arm64.s, Go side in simd_arm64.go; Apple silicon's CPU
// path):
//
//	neon     Advanced SIMD, which every arm64 CPU has: every VecDot type
//	         but MXFP4 (generic code for now);
//	         int8 products are formed in int16 lanes (SMULL/SMLAL) only as
//	         many to a lane as cannot overflow, then widened (SADDLP/SADALP)
//	dotprod  FEAT_DotProd (Apple M1 and later, Cortex-A76/Neoverse N1 and
//	         later): the same kernels with SDOT for the integer sums
//
// F16 weights are widened with FCVTL, which is part of Advanced SIMD, so
// no level needs FEAT_FP16. The Go assembler has no mnemonics for SDOT,
// SMULL, SADALP, SCVTF, FCVTL and a few more; dot_arm64.s emits them as
// words through macros named after them, each with the instruction it
// encodes. The arm64 kernels are tested under qemu-user (GOARCH=arm64 go
// test -exec qemu-aarch64), with QEMU_CPU=max (dotprod) and
// QEMU_CPU=cortex-a72 (neon only).
//
// CHURON_NOSIMD=1 in the environment or the noasm build tag forces the
// generic code, which other architectures always run.
//
// The kernels are hand-written rather than generated with avo or written
// with GOEXPERIMENT=simd. The experiment would make the default build
// depend on a flag and on an API that is still changing. avo would add a
// generator module pinned to a tools version, and its output still has
// to be read instruction by instruction; the kernels are short and share
// their block bodies through assembler macros, which gives the reuse a
// generator would, and go vet checks their frames against the stubs.
//
// Each kernel is pinned to the generic code by the tests (simd_test.go)
// on every level the machine has. The K-quant kernels are bit-identical
// to it (exact integer sums per super-block, then the generic float
// operations in its order). The 32-element block types and the float
// types sum in float32 lanes, in another order than the generic running
// sum, and agree within float rounding; they are bit-identical whenever
// the sums are exact. Integer products are exact for every int8, -128
// included (no VPMADDUBSW saturation, no VPSIGNB trick, no int16 lane
// that can overflow).
//
// Four entry points share the kernels' arithmetic, so their results are
// bit-identical to one another — batching never changes an output:
//
//	VecDot      one weight row × one activation row
//	VecDotMulti one weight row × several activation rows (batched decode)
//	VecDotRows  several weight rows × one activation row (decode)
//	VecDotTile  several weight rows × several activation rows (prefill)
//
// VecDotMulti and VecDotTile decode each weight block once for four
// activation rows (amd64: Q4_0, Q8_0, Q4_K, Q6_K, MXFP4, F16, and Q5_0 on
// avx512; arm64: Q4_0, Q5_0, Q8_0), and for the two or three left over
// (Q4_0 and Q8_0 at avx2); on avx512 VecDotTile runs Q4_0 and Q8_0 in
// groups of up to eight activation rows, one kernel per count
// (tile_amd64.s, written by internal/gentile), so a batched decode step
// of up to eight sequences decodes each weight block once. On avx512, VecDotRows and VecDotTile
// also lay each activation row out once per call for Q4_0, Q5_0 and Q8_0
// — quants in register order, four blocks per register, the scales as
// floats — so every weight row reuses it, and on arm64 VecDotRows loads
// each activation block of those types once for four weight rows.
//
// # Tile kernels (AMX)
//
// On CPUs with Intel AMX (Xeon Sapphire Rapids and later; no desktop chip
// has it so far), prompt processing — many activation rows against the
// same weights — runs on tile instructions: VecDotPacked multiplies 16
// weight rows by 16 activation rows per block with TDPBSSD, after
// PackedActs has laid the activations out once in the tiles' order
// (packed.go, packed_amd64.s, written by internal/genpacked). Each
// block's integer sum is exact and is scaled and added in the generic
// twin's order, so these results are bit-identical to vecDotGeneric —
// and therefore not to the avx512 lanes of VecDot: a product through a
// tile and the same product through VecDot may differ in the last bits.
// Linux grants tile data on request (arch_prctl); CHURON_NOAMX=1 turns
// the tile kernels off alone. Q4_0, Q5_0, Q8_0, Q4_K and Q6_K have them
// (the K-quants scale each sub-block's exact sum by its integer scale,
// VPMULLD, and add the mins by VPDPWSSD over the activations' sub-block
// sums, all in integers until the generic float steps).
//
// Decoding is bound by memory: on amd64 the row kernels prefetch a little
// ahead inside their loops and VecDotRows reads its rows as two
// interleaved sequential streams (the first and second half), which keeps
// more reads in flight than one stream does; other types run the one-row
// kernel row by row in that two-stream order.
//
// All functions are safe for concurrent use; none retains its arguments.
//
// Example, a quantized matrix-vector product (see ExampleVecDot):
//
//	at := quant.VecDotType(wt) // Q8_K for Q4_K weights
//	size, _ := at.RowSize(n)
//	act := make([]byte, size)
//	err := quant.Quantize(at, x, act) // once per input vector
//	rowBytes, _ := wt.RowSize(n)
//	for r := range y {
//		y[r] = quant.VecDot(wt, w[r*rowBytes:(r+1)*rowBytes], act, n)
//	}
package quant
