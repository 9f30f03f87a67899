//go:build amd64 && !noasm

#include "textflag.h"

// Dot-product kernels for amd64; see simd_amd64.go for the Go side and
// doc.go for why they are hand-written. Register conventions: SI walks
// the weights, DI the activations, CX counts blocks (or elements); the
// top Y registers hold constants. Every integer path is exact for all
// int8 inputs, -128 included: unsigned × signed products go through
// VPMADDUBSW only when they cannot saturate, and signed × signed ones
// are sign-extended or offset to unsigned first.

// PFDIST is how far ahead of the row being read the many-row kernels
// prefetch. The hardware prefetcher alone leaves a core computing and
// waiting on memory in turn; asking for the lines about four Q4_0 rows
// ahead, a few at a time as each row starts, overlaps the two (measured on
// a 0.5B Q4_0 decode at one thread: 23 → 31 tokens/s; 1 KiB and 4 KiB
// were slower, and PREFETCHT1/NTA slower still). Keep in step with
// prefetchDist in simd_amd64.go.
#define PFDIST 2048

// PFSB2/3/4 prefetch the 2, 3 or 4 lines PFDIST past SI, once per step
// of a kernel's loop: spread over a row as it is read rather than in a
// burst as each row starts, which stalls on the core's few fill buffers
// once rows are long (many-row kernels on rows of 5,632 values, same
// run: Q8_0 10.6 → 13.3 GB/s, Q4_0 11.4 → 14.8; BenchmarkVecDotRowsStream).
// The K-quant and F16 one-row kernels do it one super-block at a time.
#define PFSB2 PREFETCHT0 PFDIST(SI); PREFETCHT0 PFDIST+64(SI)
#define PFSB3 PFSB2; PREFETCHT0 PFDIST+128(SI)
#define PFSB4 PFSB3; PREFETCHT0 PFDIST+192(SI)

// PFROW prefetches the row at R10 (R11 bytes) PFDIST bytes ahead, for
// Go loops over one-row kernels that do not prefetch (prefetchAhead);
// clobbers AX and DX. Prefetches never fault, so running past the end of
// the rows is harmless.
#define PFROW(lbl) \
	LEAQ       PFDIST(R10), AX;   \
	LEAQ       (AX)(R11*1), DX;   \
lbl:; \
	PREFETCHT0 (AX);              \
	ADDQ       $64, AX;           \
	CMPQ       AX, DX;            \
	JB         lbl

// BCAST32 fills every dword of y with imm.
#define BCAST32(imm, x, y) MOVL $imm, AX; VMOVD AX, x; VPBROADCASTD x, y

// HSUMPS leaves the sum of y's eight floats in the low float of x (y's
// low half); tx is clobbered.
#define HSUMPS(y, x, tx) \
	VEXTRACTF128 $1, y, tx; \
	VADDPS       tx, x, x;  \
	VMOVHLPS     x, x, tx;  \
	VADDPS       tx, x, x;  \
	VMOVSHDUP    x, tx;     \
	VADDSS       tx, x, x

// HSUMD leaves the sum of y's eight int32s in every dword of x.
#define HSUMD(y, x, tx) \
	VEXTRACTI128 $1, y, tx;    \
	VPADDD       tx, x, x;     \
	VPSHUFD      $0x4e, x, tx; \
	VPADDD       tx, x, x;     \
	VPSHUFD      $0xb1, x, tx; \
	VPADDD       tx, x, x

// SCALE sets y (eight floats) to dw·dx, the product of the half floats
// at wa and xa (exact in float32), read through ggml's table of every
// half's value (BX = fp16Table): a load is cheaper than VCVTPH2PS,
// which competes with the shuffles for one port. AX, DX are clobbered.
#define SCALE(wa, xa, y, x) \
	MOVWLZX      wa, AX;          \
	MOVWLZX      xa, DX;          \
	VMOVSS       (BX)(AX*4), x;   \
	VMULSS       (BX)(DX*4), x, x; \
	VBROADCASTSS x, y

// SCALEW multiplies the weight scale in X9 by the half at xa into y.
#define SCALEW(xa, y, x) \
	MOVWLZX      xa, DX;            \
	VMULSS       (BX)(DX*4), X9, x; \
	VBROADCASTSS x, y

// shr4hi shifts the upper 128-bit lane of a Y register right by 4 bits
// (VPSRLVQ counts), turning a broadcast of 16 Q4 bytes into 32 nibbles.
DATA shr4hi<>+0(SB)/8, $0
DATA shr4hi<>+8(SB)/8, $0
DATA shr4hi<>+16(SB)/8, $4
DATA shr4hi<>+24(SB)/8, $4
GLOBL shr4hi<>(SB), RODATA|NOPTR, $32

// ---- Q4_0-shaped blocks × Q8_0 ----------------------------------------
// The macros the Q5_0, Q4_1, Q5_1, IQ4_NL and MXFP4 kernels below share:
// 32 nibbles q (0..15) times the activations y, minus 8·Σy, both by
// VPMADDUBSW (|pair| ≤ 2·15·128, no saturation), give Σ(q−8)·y in eight
// int32 lanes; the one-row loop (ONEROW) sums even blocks in one float
// accumulator and odd ones in another (two FMA chains), the
// four-activation loop (FOURROWS) keeps the same two per activation
// row, so its results are bit-identical to the one-row kernel's. (Q4_0
// and Q8_0 themselves run at the avx2 level in the generic twins' order,
// gorderavx2_amd64.s.)

// Q40NIB loads the 32 nibbles of the Q4_0 block at wa into y (low
// nibbles in bytes 0-15, high in 16-31, the order of the activations).
#define Q40NIB(wa, y) \
	VBROADCASTI128 wa, y;   \
	VPSRLVQ        Y12, y, y; \
	VPAND          Y15, y, y

// Q40INT leaves Σ(q−8)·y of nibbles qy and the activations at xa in
// eight int32 lanes of t1 (t2, t3 clobbered; t3 unused by AVX2, which
// needs Y13 = int16 ones): AVX2 and VNNI forms.
#define Q40INTAVX2(qy, xa, t1, t2, t3) \
	VMOVDQU    xa, t1;         \
	VPMADDUBSW t1, Y14, t2;    \
	VPMADDUBSW t1, qy, t1;     \
	VPSUBW     t2, t1, t1;     \
	VPMADDWD   Y13, t1, t1

#define Q40INTVNNI(qy, xa, t1, t2, t3) \
	VMOVDQU  xa, t2;           \
	VPXOR    t1, t1, t1;       \
	VPDPBUSD t2, qy, t1;       \
	VPXOR    t3, t3, t3;       \
	VPDPBUSD t2, Y14, t3;      \
	VPSUBD   t3, t1, t1

// Q40SETUP loads the table pointer and constants.
#define Q40SETUP \
	MOVQ    ·fp16Table(SB), BX;          \
	VMOVDQU shr4hi<>(SB), Y12;           \
	BCAST32(0x0f0f0f0f, X15, Y15);       \
	BCAST32(0x08080808, X14, Y14);       \
	BCAST32(0x00010001, X13, Y13)

// ONEROW is the loop of a one-row kernel over CX blocks: BLK(wo, xo,
// acc, macc) adds one block; even blocks go to Y0 (and the scalar X7 for
// min terms), odd ones to Y1 (X8).
#define ONEROW(BLK, wsize, xsize, loop, tail, done) \
	VXORPS Y0, Y0, Y0;         \
	VXORPS Y1, Y1, Y1;         \
	CMPQ   CX, $2;             \
	JLT    tail;               \
loop:                          \
	BLK(0, 0, Y0, X7);         \
	BLK(wsize, xsize, Y1, X8); \
	ADDQ   $(2*wsize), SI;     \
	ADDQ   $(2*xsize), DI;     \
	SUBQ   $2, CX;             \
	CMPQ   CX, $2;             \
	JGE    loop;               \
tail:                          \
	TESTQ  CX, CX;             \
	JEQ    done;               \
	BLK(0, 0, Y0, X7);         \
done:                          \
	VADDPS Y1, Y0, Y0;         \
	HSUMPS(Y0, X0, X1)

// FOURROWS is the loop of a four-activation kernel: even blocks go to
// Y0-Y3, odd ones to Y4-Y7, then the pairs are added and the four sums
// left in Y0-Y3 for STORE4.
#define FOURROWS(BLK, wsize, xsize, loop, tail, done) \
	VXORPS Y0, Y0, Y0; VXORPS Y1, Y1, Y1; VXORPS Y2, Y2, Y2; VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; VXORPS Y5, Y5, Y5; VXORPS Y6, Y6, Y6; VXORPS Y7, Y7, Y7; \
	CMPQ   CX, $2;                          \
	JLT    tail;                            \
loop:                                       \
	BLK(0, 0, Y0, Y1, Y2, Y3);              \
	BLK(wsize, xsize, Y4, Y5, Y6, Y7);      \
	ADDQ   $(2*wsize), SI;                  \
	ADDQ   $(2*xsize), DI;                  \
	SUBQ   $2, CX;                          \
	CMPQ   CX, $2;                          \
	JGE    loop;                            \
tail:                                       \
	TESTQ  CX, CX;                          \
	JEQ    done;                            \
	BLK(0, 0, Y0, Y1, Y2, Y3);              \
done:                                       \
	VADDPS Y4, Y0, Y0;                      \
	VADDPS Y5, Y1, Y1;                      \
	VADDPS Y6, Y2, Y2;                      \
	VADDPS Y7, Y3, Y3

// STORE4 writes the horizontal sums of Y0-Y3 to out[0:4] (address in AX).
#define STORE4 \
	HSUMPS(Y0, X0, X4); \
	HSUMPS(Y1, X1, X4); \
	HSUMPS(Y2, X2, X4); \
	HSUMPS(Y3, X3, X4); \
	MOVSS X0, 0(AX);    \
	MOVSS X1, 4(AX);    \
	MOVSS X2, 8(AX);    \
	MOVSS X3, 12(AX)

// ---- Q8_0-shaped activations, four rows ------------------------------
// Signed × signed: both sides sign-extended to int16 and multiplied by
// VPMADDWD, exact for every int8 pair.

// Q80X4ACTA adds a weight block, sign-extended in Y8 (elements 0-15) and
// Y12 (16-31) with its scale in X9, times one activation block to acc:
// lo, hi and d address the activation block's quants, second half and
// scale.
#define Q80X4ACTA(lo, hi, d, acc) \
	VPMOVSXBW   lo, Y10;           \
	VPMOVSXBW   hi, Y11;           \
	VPMADDWD    Y10, Y8, Y10;      \
	VPMADDWD    Y11, Y12, Y11;     \
	VPADDD      Y11, Y10, Y10;     \
	VCVTDQ2PS   Y10, Y10;          \
	SCALEW(d, Y11, X11);           \
	VFMADD231PS Y11, Y10, acc

// Q80X4ACTS adds the weight block in Y8, Y12 and X9 (as Q80X4ACTA takes
// it) times the activation block at xo of each of the four rows (DI,
// DI+R8, DI+2·R8, DI+R9) into their accumulators.
#define Q80X4ACTS(xo, a0, a1, a2, a3) \
	Q80X4ACTA(xo+2(DI), xo+18(DI), xo(DI), a0);                         \
	Q80X4ACTA(xo+2(DI)(R8*1), xo+18(DI)(R8*1), xo(DI)(R8*1), a1);       \
	Q80X4ACTA(xo+2(DI)(R8*2), xo+18(DI)(R8*2), xo(DI)(R8*2), a2);       \
	Q80X4ACTA(xo+2(DI)(R9*1), xo+18(DI)(R9*1), xo(DI)(R9*1), a3)

// kvalues128 the same plus 128, as unsigned bytes for VPDPBUSD.
DATA kvalues<>+0(SB)/8, $0xf6eaddcfbfad9881
DATA kvalues<>+8(SB)/8, $0x7159453526190d01
DATA kvalues<>+16(SB)/8, $0xf6eaddcfbfad9881
DATA kvalues<>+24(SB)/8, $0x7159453526190d01
GLOBL kvalues<>(SB), RODATA|NOPTR, $32
DATA kvalues128<>+0(SB)/8, $0x766a5d4f3f2d1801
DATA kvalues128<>+8(SB)/8, $0xf1d9c5b5a6998d81
DATA kvalues128<>+16(SB)/8, $0x766a5d4f3f2d1801
DATA kvalues128<>+24(SB)/8, $0xf1d9c5b5a6998d81
GLOBL kvalues128<>(SB), RODATA|NOPTR, $32

// bitsel and bitmask expand Q5's 32 high bits into 32 bytes: byte i
// takes qh byte i/8 and tests bit i%8.
DATA bitsel<>+0(SB)/8, $0x0000000000000000
DATA bitsel<>+8(SB)/8, $0x0101010101010101
DATA bitsel<>+16(SB)/8, $0x0202020202020202
DATA bitsel<>+24(SB)/8, $0x0303030303030303
GLOBL bitsel<>(SB), RODATA|NOPTR, $32
DATA bitmask<>+0(SB)/8, $0x8040201008040201
DATA bitmask<>+8(SB)/8, $0x8040201008040201
DATA bitmask<>+16(SB)/8, $0x8040201008040201
DATA bitmask<>+24(SB)/8, $0x8040201008040201
GLOBL bitmask<>(SB), RODATA|NOPTR, $32

// Q5HIGH sets y to 0x10 in byte i where bit i of the uint32 at qa is set.
#define Q5HIGH(qa, y) \
	VPBROADCASTD qa, y;     \
	VPSHUFB      Y11, y, y; \
	VPAND        Y10, y, y; \
	VPCMPEQB     Y10, y, y; \
	VPAND        Y9, y, y

// Q5SETUP loads what the Q5 kernels need besides Q40SETUP's constants.
#define Q5SETUP \
	VMOVDQU bitsel<>(SB), Y11;      \
	VMOVDQU bitmask<>(SB), Y10;     \
	BCAST32(0x10101010, X9, Y9)

// Q50BLK: Q5_0 block (22 bytes: d, qh, qs) × Q8_0; Y14 = 16s.
#define Q50BLK(INT, wo, xo, acc) \
	Q40NIB(wo+6(SI), Y2);                 \
	Q5HIGH(wo+2(SI), Y3);                 \
	VPOR        Y3, Y2, Y2;               \
	INT(Y2, xo+2(DI), Y3, Y4, Y6);        \
	VCVTDQ2PS   Y3, Y3;                   \
	SCALE(wo(SI), xo(DI), Y5, X5);        \
	VFMADD231PS Y5, Y3, acc

#define Q50A(wo, xo, acc, macc) Q50BLK(Q40INTAVX2, wo, xo, acc)

// func dotQ5_0AVX2(w, x *byte, nb int) float32
TEXT ·dotQ5_0AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	Q40SETUP
	Q5SETUP
	BCAST32(0x10101010, X14, Y14)
	ONEROW(Q50A, 22, 34, q50a_loop, q50a_tail, q50a_done)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// UINTA and UINTV leave Σq·y of unsigned quants qy (q ≤ 31) and the
// activations at xa in eight int32 lanes of t.
#define UINTA(qy, xa, t) \
	VMOVDQU    xa, t;      \
	VPMADDUBSW t, qy, t;   \
	VPMADDWD   Y13, t, t

#define UINTV(qy, xa, t) \
	VMOVDQU  xa, Y4;       \
	VPXOR    t, t, t;      \
	VPDPBUSD Y4, qy, t

// MINTERM adds m·s (halves at ma, sa) to the scalar macc.
#define MINTERM(ma, sa, macc) \
	MOVWLZX     ma, AX;              \
	MOVWLZX     sa, DX;              \
	VMOVSS      (BX)(AX*4), X6;      \
	VFMADD231SS (BX)(DX*4), X6, macc

// Q41BLK: Q4_1 block (20 bytes: d, m, qs) × Q8_1 (36 bytes: d, s, qs).
#define Q41BLK(INT, wo, xo, acc, macc) \
	Q40NIB(wo+4(SI), Y2);                 \
	INT(Y2, xo+4(DI), Y3);                \
	VCVTDQ2PS   Y3, Y3;                   \
	SCALE(wo(SI), xo(DI), Y5, X5);        \
	VFMADD231PS Y5, Y3, acc;              \
	MINTERM(wo+2(SI), xo+2(DI), macc)

// Q51BLK: Q5_1 block (24 bytes: d, m, qh, qs) × Q8_1.
#define Q51BLK(INT, wo, xo, acc, macc) \
	Q40NIB(wo+8(SI), Y2);                 \
	Q5HIGH(wo+4(SI), Y3);                 \
	VPOR        Y3, Y2, Y2;               \
	INT(Y2, xo+4(DI), Y3);                \
	VCVTDQ2PS   Y3, Y3;                   \
	SCALE(wo(SI), xo(DI), Y5, X5);        \
	VFMADD231PS Y5, Y3, acc;              \
	MINTERM(wo+2(SI), xo+2(DI), macc)

#define Q41A(wo, xo, acc, macc) Q41BLK(UINTA, wo, xo, acc, macc)
#define Q41V(wo, xo, acc, macc) Q41BLK(UINTV, wo, xo, acc, macc)
#define Q51A(wo, xo, acc, macc) Q51BLK(UINTA, wo, xo, acc, macc)
#define Q51V(wo, xo, acc, macc) Q51BLK(UINTV, wo, xo, acc, macc)

// MINDONE adds the min-term accumulators to the result in X0.
#define MINDONE \
	VADDSS X8, X7, X7; \
	VADDSS X7, X0, X0

#define MINSETUP \
	VXORPS X7, X7, X7; \
	VXORPS X8, X8, X8

// func dotQ4_1AVX2(w, x *byte, nb int) float32
TEXT ·dotQ4_1AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	Q40SETUP
	MINSETUP
	ONEROW(Q41A, 20, 36, q41a_loop, q41a_tail, q41a_done)
	MINDONE
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ4_1VNNI(w, x *byte, nb int) float32
TEXT ·dotQ4_1VNNI(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	Q40SETUP
	MINSETUP
	ONEROW(Q41V, 20, 36, q41v_loop, q41v_tail, q41v_done)
	MINDONE
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ5_1AVX2(w, x *byte, nb int) float32
TEXT ·dotQ5_1AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	Q40SETUP
	Q5SETUP
	MINSETUP
	ONEROW(Q51A, 24, 36, q51a_loop, q51a_tail, q51a_done)
	MINDONE
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ5_1VNNI(w, x *byte, nb int) float32
TEXT ·dotQ5_1VNNI(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	Q40SETUP
	Q5SETUP
	MINSETUP
	ONEROW(Q51V, 24, 36, q51v_loop, q51v_tail, q51v_done)
	MINDONE
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// CODEBOOKA sets Y3 to the float dot product, lane for lane, of a block's
// 32 nibbles at wa looked up in the codebook Y11 and sign-extended, with
// the Q8_0 activation block at xo(DI). Y2, Y4 are clobbered.
#define CODEBOOKA(wa, xo) \
	Q40NIB(wa, Y2);                  \
	VPSHUFB      Y2, Y11, Y2;        \
	VPMOVSXBW    X2, Y3;             \
	VEXTRACTI128 $1, Y2, X2;         \
	VPMOVSXBW    X2, Y2;             \
	VPMOVSXBW    xo+2(DI), Y4;       \
	VPMADDWD     Y4, Y3, Y3;         \
	VPMOVSXBW    xo+18(DI), Y4;      \
	VPMADDWD     Y4, Y2, Y2;         \
	VPADDD       Y2, Y3, Y3;         \
	VCVTDQ2PS    Y3, Y3

// IQ4_NL × Q8_0. AVX2: codebook values (Y11 = kvalues) sign-extended.
#define IQ4NLA(wo, xo, acc, macc) \
	CODEBOOKA(wo+2(SI), xo);         \
	SCALE(wo(SI), xo(DI), Y5, X5);   \
	VFMADD231PS  Y5, Y3, acc

// VNNI: Σ(k+128)·y − 128·Σy with Y11 = kvalues128, Y10 = 0x80s.
#define IQ4NLV(wo, xo, acc, macc) \
	Q40NIB(wo+2(SI), Y2);            \
	VPSHUFB      Y2, Y11, Y2;        \
	VMOVDQU      xo+2(DI), Y4;       \
	VPXOR        Y3, Y3, Y3;         \
	VPDPBUSD     Y4, Y2, Y3;         \
	VPXOR        Y6, Y6, Y6;         \
	VPDPBUSD     Y4, Y10, Y6;        \
	VPSUBD       Y6, Y3, Y3;         \
	VCVTDQ2PS    Y3, Y3;             \
	SCALE(wo(SI), xo(DI), Y5, X5);   \
	VFMADD231PS  Y5, Y3, acc

// func dotIQ4_NLAVX2(w, x *byte, nb int) float32
TEXT ·dotIQ4_NLAVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	Q40SETUP
	VMOVDQU kvalues<>(SB), Y11
	ONEROW(IQ4NLA, 18, 34, iq4nla_loop, iq4nla_tail, iq4nla_done)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotIQ4_NLVNNI(w, x *byte, nb int) float32
TEXT ·dotIQ4_NLVNNI(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	Q40SETUP
	VMOVDQU kvalues128<>(SB), Y11
	BCAST32(0x80808080, X10, Y10)
	ONEROW(IQ4NLV, 18, 34, iq4nlv_loop, iq4nlv_tail, iq4nlv_done)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// ---- MXFP4 ----------------------------------------------------------
// As IQ4_NL, with MXFP4's codebook (E2M1 doubled, |k| ≤ 12) and 17-byte
// blocks whose scale is one E8M0 byte, read through e8m0HalfTable (R12).
// One kernel for both levels: a VPDPBUSD form measured no faster, and
// one form keeps the four-row kernel bit-identical to it at both.

DATA kvaluesmx<>+0(SB)/8, $0x0c08060403020100
DATA kvaluesmx<>+8(SB)/8, $0xf4f8fafcfdfeff00
DATA kvaluesmx<>+16(SB)/8, $0x0c08060403020100
DATA kvaluesmx<>+24(SB)/8, $0xf4f8fafcfdfeff00
GLOBL kvaluesmx<>(SB), RODATA|NOPTR, $32

// MXSCALE sets y to the activation's half at xa times the weight's E8M0
// half at ea (exact in float32). AX, DX are clobbered.
#define MXSCALE(ea, xa, y, x) \
	MOVBLZX      ea, AX;           \
	MOVWLZX      xa, DX;           \
	VMOVSS       (R12)(AX*4), x;   \
	VMULSS       (BX)(DX*4), x, x; \
	VBROADCASTSS x, y

// AVX2: codebook values (Y11 = kvaluesmx) sign-extended.
#define MXFP4A(wo, xo, acc, macc) \
	CODEBOOKA(wo+1(SI), xo);         \
	MXSCALE(wo(SI), xo(DI), Y5, X5); \
	VFMADD231PS  Y5, Y3, acc

// func dotMXFP4AVX2(w, x *byte, nb int) float32
TEXT ·dotMXFP4AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	Q40SETUP
	MOVQ ·e8m0HalfTable(SB), R12
	VMOVDQU kvaluesmx<>(SB), Y11
	ONEROW(MXFP4A, 17, 34, mxfp4a_loop, mxfp4a_tail, mxfp4a_done)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// MXFP4X4A adds weight block wo to the four activation rows' accumulators
// through Q80X4ACTS, the block's 32 codebook values sign-extended to int16
// in Y8 (elements 0-15) and Y12 (16-31) and its E8M0 half in X9; Y13 =
// shr4hi, Y14 = kvaluesmx, Y15 = 0x0f bytes. Lane for lane it sums as
// MXFP4A does, so the four results are bit-identical to dotMXFP4AVX2's.
#define MXFP4X4A(wo, xo, a0, a1, a2, a3) \
	VBROADCASTI128 wo+1(SI), Y8;   \
	VPSRLVQ        Y13, Y8, Y8;    \
	VPAND          Y15, Y8, Y8;    \
	VPSHUFB        Y8, Y14, Y8;    \
	VEXTRACTI128   $1, Y8, X12;    \
	VPMOVSXBW      X12, Y12;       \
	VPMOVSXBW      X8, Y8;         \
	MOVBLZX        wo(SI), AX;     \
	VMOVSS         (R12)(AX*4), X9; \
	Q80X4ACTS(xo, a0, a1, a2, a3)

// func dotMXFP4x4AVX2(w, x *byte, stride, nb int, out *float32)
TEXT ·dotMXFP4x4AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ stride+16(FP), R8
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	MOVQ ·fp16Table(SB), BX
	MOVQ ·e8m0HalfTable(SB), R12
	VMOVDQU shr4hi<>(SB), Y13
	VMOVDQU kvaluesmx<>(SB), Y14
	BCAST32(0x0f0f0f0f, X15, Y15)
	FOURROWS(MXFP4X4A, 17, 34, mxfp4x4a_loop, mxfp4x4a_tail, mxfp4x4a_done)
	MOVQ out+32(FP), AX
	STORE4
	VZEROUPPER
	RET

// ---- float types ----------------------------------------------------
// Four independent accumulators hide the FMA latency. Products of two
// halves (or two bfloat16s) are exact in float32, so only the sums round.

// func dotF16AVX2(w, x *byte, n int) float32
TEXT ·dotF16AVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   x+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

f16a_loop:
	PREFETCHT0  PFDIST(SI)
	VCVTPH2PS   (SI), Y4
	VCVTPH2PS   (DI), Y5
	VFMADD231PS Y5, Y4, Y0
	VCVTPH2PS   16(SI), Y6
	VCVTPH2PS   16(DI), Y7
	VFMADD231PS Y7, Y6, Y1
	VCVTPH2PS   32(SI), Y4
	VCVTPH2PS   32(DI), Y5
	VFMADD231PS Y5, Y4, Y2
	VCVTPH2PS   48(SI), Y6
	VCVTPH2PS   48(DI), Y7
	VFMADD231PS Y7, Y6, Y3
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $32, CX
	JNZ         f16a_loop

	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUMPS(Y0, X0, X1)
	VZEROUPPER
	MOVSS  X0, ret+24(FP)
	RET

// HSUMPSZ leaves the sum of Z0's sixteen floats in X0.
#define HSUMPSZ \
	VEXTRACTF64X4 $1, Z0, Y1; \
	VADDPS        Y1, Y0, Y0; \
	HSUMPS(Y0, X0, X1)

// func dotF16AVX512(w, x *byte, n int) float32
TEXT ·dotF16AVX512(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   x+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3

f16z_loop:
	PFSB2
	VCVTPH2PS   (SI), Z4
	VCVTPH2PS   (DI), Z5
	VFMADD231PS Z5, Z4, Z0
	VCVTPH2PS   32(SI), Z6
	VCVTPH2PS   32(DI), Z7
	VFMADD231PS Z7, Z6, Z1
	VCVTPH2PS   64(SI), Z4
	VCVTPH2PS   64(DI), Z5
	VFMADD231PS Z5, Z4, Z2
	VCVTPH2PS   96(SI), Z6
	VCVTPH2PS   96(DI), Z7
	VFMADD231PS Z7, Z6, Z3
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $64, CX
	JNZ         f16z_loop

	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	HSUMPSZ
	VZEROUPPER
	MOVSS  X0, ret+24(FP)
	RET

// BF16TOPS widens eight bfloat16s at addr into floats in y.
#define BF16TOPS(addr, y) VPMOVZXWD addr, y; VPSLLD $16, y, y

// func dotBF16AVX2(w, x *byte, n int) float32
TEXT ·dotBF16AVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   x+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

bf16a_loop:
	BF16TOPS((SI), Y4)
	BF16TOPS((DI), Y5)
	VFMADD231PS Y5, Y4, Y0
	BF16TOPS(16(SI), Y6)
	BF16TOPS(16(DI), Y7)
	VFMADD231PS Y7, Y6, Y1
	BF16TOPS(32(SI), Y4)
	BF16TOPS(32(DI), Y5)
	VFMADD231PS Y5, Y4, Y2
	BF16TOPS(48(SI), Y6)
	BF16TOPS(48(DI), Y7)
	VFMADD231PS Y7, Y6, Y3
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $32, CX
	JNZ         bf16a_loop

	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUMPS(Y0, X0, X1)
	VZEROUPPER
	MOVSS  X0, ret+24(FP)
	RET

#define BF16TOPSZ(addr, z) VPMOVZXWD addr, z; VPSLLD $16, z, z

// func dotBF16AVX512(w, x *byte, n int) float32
TEXT ·dotBF16AVX512(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   x+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3

bf16z_loop:
	BF16TOPSZ((SI), Z4)
	BF16TOPSZ((DI), Z5)
	VFMADD231PS Z5, Z4, Z0
	BF16TOPSZ(32(SI), Z6)
	BF16TOPSZ(32(DI), Z7)
	VFMADD231PS Z7, Z6, Z1
	BF16TOPSZ(64(SI), Z4)
	BF16TOPSZ(64(DI), Z5)
	VFMADD231PS Z5, Z4, Z2
	BF16TOPSZ(96(SI), Z6)
	BF16TOPSZ(96(DI), Z7)
	VFMADD231PS Z7, Z6, Z3
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $64, CX
	JNZ         bf16z_loop

	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	HSUMPSZ
	VZEROUPPER
	MOVSS  X0, ret+24(FP)
	RET

// func dotF32AVX2(w, x *byte, n int) float32
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   x+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

f32a_loop:
	VMOVUPS     (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	VMOVUPS     32(SI), Y5
	VFMADD231PS 32(DI), Y5, Y1
	VMOVUPS     64(SI), Y6
	VFMADD231PS 64(DI), Y6, Y2
	VMOVUPS     96(SI), Y7
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	JNZ         f32a_loop

	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUMPS(Y0, X0, X1)
	VZEROUPPER
	MOVSS  X0, ret+24(FP)
	RET

// func dotF32AVX512(w, x *byte, n int) float32
TEXT ·dotF32AVX512(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   x+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3

f32z_loop:
	VMOVUPS     (SI), Z4
	VFMADD231PS (DI), Z4, Z0
	VMOVUPS     64(SI), Z5
	VFMADD231PS 64(DI), Z5, Z1
	VMOVUPS     128(SI), Z6
	VFMADD231PS 128(DI), Z6, Z2
	VMOVUPS     192(SI), Z7
	VFMADD231PS 192(DI), Z7, Z3
	ADDQ        $256, SI
	ADDQ        $256, DI
	SUBQ        $64, CX
	JNZ         f32z_loop

	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	HSUMPSZ
	VZEROUPPER
	MOVSS  X0, ret+24(FP)
	RET

// ---- K-quants × Q8_K ------------------------------------------------
// These reproduce the generic arithmetic bit for bit: each super-block's
// integer sums are exact (in int32 lanes, reduced at the end of the
// block), and the float combination is done in scalar registers with the
// generic code's operations in its order. Offset terms come from the
// activations' bsums (Σ of each 16 quants).

// k4shuf selects int16 word k (k = 0..7) into every word of a lane.
DATA k4shuf<>+0(SB)/8, $0x0100010001000100
DATA k4shuf<>+8(SB)/8, $0x0100010001000100
DATA k4shuf<>+16(SB)/8, $0x0100010001000100
DATA k4shuf<>+24(SB)/8, $0x0100010001000100
DATA k4shuf<>+32(SB)/8, $0x0302030203020302
DATA k4shuf<>+40(SB)/8, $0x0302030203020302
DATA k4shuf<>+48(SB)/8, $0x0302030203020302
DATA k4shuf<>+56(SB)/8, $0x0302030203020302
DATA k4shuf<>+64(SB)/8, $0x0504050405040504
DATA k4shuf<>+72(SB)/8, $0x0504050405040504
DATA k4shuf<>+80(SB)/8, $0x0504050405040504
DATA k4shuf<>+88(SB)/8, $0x0504050405040504
DATA k4shuf<>+96(SB)/8, $0x0706070607060706
DATA k4shuf<>+104(SB)/8, $0x0706070607060706
DATA k4shuf<>+112(SB)/8, $0x0706070607060706
DATA k4shuf<>+120(SB)/8, $0x0706070607060706
DATA k4shuf<>+128(SB)/8, $0x0908090809080908
DATA k4shuf<>+136(SB)/8, $0x0908090809080908
DATA k4shuf<>+144(SB)/8, $0x0908090809080908
DATA k4shuf<>+152(SB)/8, $0x0908090809080908
DATA k4shuf<>+160(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k4shuf<>+168(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k4shuf<>+176(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k4shuf<>+184(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k4shuf<>+192(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k4shuf<>+200(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k4shuf<>+208(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k4shuf<>+216(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k4shuf<>+224(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k4shuf<>+232(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k4shuf<>+240(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k4shuf<>+248(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL k4shuf<>(SB), RODATA|NOPTR, $256

// q6shuf picks scale bytes g, g+1 (g = 0, 2, …, 14) into eight bytes each.
DATA q6shuf<>+0(SB)/8, $0x0000000000000000
DATA q6shuf<>+8(SB)/8, $0x0101010101010101
DATA q6shuf<>+16(SB)/8, $0x0202020202020202
DATA q6shuf<>+24(SB)/8, $0x0303030303030303
DATA q6shuf<>+32(SB)/8, $0x0404040404040404
DATA q6shuf<>+40(SB)/8, $0x0505050505050505
DATA q6shuf<>+48(SB)/8, $0x0606060606060606
DATA q6shuf<>+56(SB)/8, $0x0707070707070707
DATA q6shuf<>+64(SB)/8, $0x0808080808080808
DATA q6shuf<>+72(SB)/8, $0x0909090909090909
DATA q6shuf<>+80(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA q6shuf<>+88(SB)/8, $0x0b0b0b0b0b0b0b0b
DATA q6shuf<>+96(SB)/8, $0x0c0c0c0c0c0c0c0c
DATA q6shuf<>+104(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA q6shuf<>+112(SB)/8, $0x0e0e0e0e0e0e0e0e
DATA q6shuf<>+120(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL q6shuf<>(SB), RODATA|NOPTR, $128

// Q4KSUB adds sub-blocks 2j, 2j+1 (quants at qo(SI), activations at
// yo(DI) and yo+32(DI), scale selectors at so and so+32) to Y5.
#define Q4KSUB(qo, yo, so) \
	VMOVDQU    qo(SI), Y6;               \
	VPSRLW     $4, Y6, Y7;               \
	VPAND      Y15, Y6, Y6;              \
	VPAND      Y15, Y7, Y7;              \
	VPMADDUBSW yo(DI), Y6, Y6;           \
	VPMADDUBSW yo+32(DI), Y7, Y7;        \
	VPSHUFB    k4shuf<>+so(SB), Y4, Y8;  \
	VPSHUFB    k4shuf<>+so+32(SB), Y4, Y9; \
	VPMADDWD   Y8, Y6, Y6;               \
	VPMADDWD   Y9, Y7, Y7;               \
	VPADDD     Y6, Y5, Y5;               \
	VPADDD     Y7, Y5, Y5

// K4SCALES unpacks the 6-bit scales and mins of a Q4_K/Q5_K block at
// SI+4 (ggml's get_scale_min_k4, four at a time) into int16 sc0..sc7 |
// m0..m7 in Y1 (AX, BX, DX, R10-R12 clobbered).
#define K4SCALES \
	MOVL 4(SI), AX;           \
	MOVL 8(SI), BX;           \
	MOVL 12(SI), DX;          \
	MOVL DX, R12;             \
	SHRL $4, R12;             \
	ANDL $0x0f0f0f0f, R12;    \
	MOVL BX, R10;             \
	SHRL $2, R10;             \
	ANDL $0x30303030, R10;    \
	ORL  R10, R12;            \
	MOVL BX, R10;             \
	ANDL $0x3f3f3f3f, R10;    \
	MOVL AX, R11;             \
	SHRL $2, R11;             \
	ANDL $0x30303030, R11;    \
	ANDL $0x0f0f0f0f, DX;     \
	ORL  R11, DX;             \
	ANDL $0x3f3f3f3f, AX;     \
	SHLQ $32, DX;             \
	ORQ  DX, AX;              \
	SHLQ $32, R12;            \
	ORQ  R12, R10;            \
	VMOVQ     AX, X1;         \
	VPINSRQ   $1, R10, X1, X1; \
	VPMOVZXBW X1, Y1

// K4MINS leaves summs = Σ m_k·(bsum[2k] + bsum[2k+1]) in R12.
#define K4MINS \
	VMOVDQU      260(DI), Y2;   \
	VEXTRACTI128 $1, Y2, X3;    \
	VPHADDW      X3, X2, X2;    \
	VEXTRACTI128 $1, Y1, X3;    \
	VPMADDWD     X3, X2, X2;    \
	VPSHUFD      $0x4e, X2, X3; \
	VPADDD       X3, X2, X2;    \
	VPSHUFD      $0xb1, X2, X3; \
	VPADDD       X3, X2, X2;    \
	VMOVD        X2, R12

// K4FLOAT: sumf (X0) += float32(d·dy·isum) − float32(dmin·dy·summs),
// isum in R13, summs in R12, as the generic code rounds it; d and dmin
// are the halves at off(SI), off+2(SI).
#define K4FLOATAT(off) \
	MOVL       off(SI), AX;   \
	VMOVD      AX, X1;        \
	VCVTPH2PS  X1, X1;        \
	VMOVSS     (DI), X2;      \
	VMULSS     X2, X1, X3;    \
	VMOVSHDUP  X1, X4;        \
	VMULSS     X2, X4, X4;    \
	VCVTSI2SSL R13, X5, X5;   \
	VMULSS     X5, X3, X3;    \
	VCVTSI2SSL R12, X6, X6;   \
	VMULSS     X6, X4, X4;    \
	VSUBSS     X4, X3, X3;    \
	VADDSS     X3, X0, X0

#define K4FLOAT K4FLOATAT(0)

// func dotQ4_KAVX2(w, x *byte, nb int) float32
TEXT ·dotQ4_KAVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   x+8(FP), DI
	MOVQ   nb+16(FP), CX
	BCAST32(0x0f0f0f0f, X15, Y15)
	VXORPS X0, X0, X0

q4k_loop:
	PFSB3
	K4SCALES
	K4MINS
	VPERMQ $0x44, Y1, Y4
	VPXOR  Y5, Y5, Y5
	Q4KSUB(16, 4, 0)
	Q4KSUB(48, 68, 64)
	Q4KSUB(80, 132, 128)
	Q4KSUB(112, 196, 192)
	HSUMD(Y5, X5, X6)
	VMOVD X5, R13
	K4FLOAT

	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q4k_loop

	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Q6KQ adds Σ q·y·sc for one 32-quant run: quants in qy, activations at
// yo(DI), scale pair selector at so.
#define Q6KQ(qy, yo, so) \
	VPMADDUBSW yo(DI), qy, qy;          \
	VPSHUFB    q6shuf<>+so(SB), X13, X9; \
	VPMOVSXBW  X9, Y9;                  \
	VPMADDWD   Y9, qy, qy;              \
	VPADDD     qy, Y2, Y2

// Q6KHALF adds one 128-quant half: low bits at lo(SI), lo+32(SI), high
// bits at ho(SI), activations from yo(DI), selectors from so.
#define Q6KHALF(lo, ho, yo, so) \
	VMOVDQU lo(SI), Y4;        \
	VMOVDQU lo+32(SI), Y5;     \
	VMOVDQU ho(SI), Y6;        \
	VPAND   Y15, Y4, Y7;       \
	VPSLLW  $4, Y6, Y8;        \
	VPAND   Y14, Y8, Y8;       \
	VPOR    Y8, Y7, Y7;        \
	Q6KQ(Y7, yo, so);          \
	VPAND   Y15, Y5, Y7;       \
	VPSLLW  $2, Y6, Y8;        \
	VPAND   Y14, Y8, Y8;       \
	VPOR    Y8, Y7, Y7;        \
	Q6KQ(Y7, yo+32, so+16);    \
	VPSRLW  $4, Y4, Y7;        \
	VPAND   Y15, Y7, Y7;       \
	VPAND   Y14, Y6, Y8;       \
	VPOR    Y8, Y7, Y7;        \
	Q6KQ(Y7, yo+64, so+32);    \
	VPSRLW  $4, Y5, Y7;        \
	VPAND   Y15, Y7, Y7;       \
	VPSRLW  $2, Y6, Y8;        \
	VPAND   Y14, Y8, Y8;       \
	VPOR    Y8, Y7, Y7;        \
	Q6KQ(Y7, yo+96, so+48)

// func dotQ6_KAVX2(w, x *byte, nb int) float32
TEXT ·dotQ6_KAVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   x+8(FP), DI
	MOVQ   nb+16(FP), CX
	BCAST32(0x0f0f0f0f, X15, Y15)
	BCAST32(0x30303030, X14, Y14)
	VXORPS X0, X0, X0

q6k_loop:
	PFSB4
	// isum = Σ sc·Σ q·y − 32·Σ sc·bsum, q the unsigned 6-bit quants
	VMOVDQU   192(SI), X13
	VPMOVSXBW X13, Y12
	VPMADDWD  260(DI), Y12, Y1
	VPSLLD    $5, Y1, Y1
	VPXOR     Y2, Y2, Y2
	VPSUBD    Y1, Y2, Y2
	Q6KHALF(0, 128, 4, 0)
	Q6KHALF(64, 160, 132, 64)
	HSUMD(Y2, X2, X3)
	VMOVD X2, AX

	// sumf += float32(d·dy·float32(isum))
	MOVWLZX    208(SI), BX
	VMOVD      BX, X4
	VCVTPH2PS  X4, X4
	VMULSS     (DI), X4, X4
	VCVTSI2SSL AX, X5, X5
	VMULSS     X5, X4, X4
	VADDSS     X4, X0, X0

	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q6k_loop

	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Q5KSUB adds sub-blocks 2j, 2j+1 of a Q5_K block to Y5: quants at
// qo(SI), their fifth bits 2j, 2j+1 of the qh bytes in Y3 (shifted down
// by sh = 2j, masked with Y14 = 0x01s and Y13 = 0x02s, moved to bit 4),
// the activations at yo(DI), scale selectors at so.
#define Q5KSUB(qo, yo, so, sh) \
	VMOVDQU    qo(SI), Y6;               \
	VPSRLW     $4, Y6, Y7;               \
	VPAND      Y15, Y6, Y6;              \
	VPAND      Y15, Y7, Y7;              \
	VPSRLW     $sh, Y3, Y2;              \
	VPAND      Y14, Y2, Y8;              \
	VPSLLW     $4, Y8, Y8;               \
	VPOR       Y8, Y6, Y6;               \
	VPAND      Y13, Y2, Y9;              \
	VPSLLW     $3, Y9, Y9;               \
	VPOR       Y9, Y7, Y7;               \
	VPMADDUBSW yo(DI), Y6, Y6;           \
	VPMADDUBSW yo+32(DI), Y7, Y7;        \
	VPSHUFB    k4shuf<>+so(SB), Y4, Y8;  \
	VPSHUFB    k4shuf<>+so+32(SB), Y4, Y9; \
	VPMADDWD   Y8, Y6, Y6;               \
	VPMADDWD   Y9, Y7, Y7;               \
	VPADDD     Y6, Y5, Y5;               \
	VPADDD     Y7, Y5, Y5

// func dotQ5_KAVX2(w, x *byte, nb int) float32
TEXT ·dotQ5_KAVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   x+8(FP), DI
	MOVQ   nb+16(FP), CX
	BCAST32(0x0f0f0f0f, X15, Y15)
	BCAST32(0x01010101, X14, Y14)
	BCAST32(0x02020202, X13, Y13)
	VXORPS X0, X0, X0

q5k_loop:
	K4SCALES
	K4MINS
	VPERMQ  $0x44, Y1, Y4
	VMOVDQU 16(SI), Y3
	VPXOR   Y5, Y5, Y5
	Q5KSUB(48, 4, 0, 0)
	Q5KSUB(80, 68, 64, 2)
	Q5KSUB(112, 132, 128, 4)
	Q5KSUB(144, 196, 192, 6)
	HSUMD(Y5, X5, X6)
	VMOVD X5, R13
	K4FLOAT

	ADDQ $176, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q5k_loop

	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Q2_K and Q3_K have Q6_K's layout of 16-quant groups: element
// 128n + 32s + l has its bits at shift 2s of byte 32n + l, and group
// 8n + 2s + l/16. QKHALF runs one 128-quant half n (quants at qo(SI),
// activations from yo(DI), q6shuf selectors from so) through BITS(s, y),
// which leaves run s's unsigned quants in y, then multiplies by the
// scale bytes in X13, widened by WIDEN, into Y2.
#define QKRUN(BITS, WIDEN, sh, yo, so) \
	BITS(sh, Y7);                      \
	VPMADDUBSW yo(DI), Y7, Y7;         \
	VPSHUFB    q6shuf<>+so(SB), X13, X9; \
	WIDEN      X9, Y9;                 \
	VPMADDWD   Y9, Y7, Y7;             \
	VPADDD     Y7, Y2, Y2

#define QKHALF(BITS, WIDEN, qo, yo, so) \
	VMOVDQU qo(SI), Y4;                       \
	QKRUN(BITS, WIDEN, 0, yo, so);            \
	QKRUN(BITS, WIDEN, 2, yo+32, so+16);      \
	QKRUN(BITS, WIDEN, 4, yo+64, so+32);      \
	QKRUN(BITS, WIDEN, 6, yo+96, so+48)

// Q2BITS: the 2-bit quants at shift sh of Y4 (Y14 = 0x03s).
#define Q2BITS(sh, y) \
	VPSRLW $sh, Y4, y; \
	VPAND  Y14, y, y

// func dotQ2_KAVX2(w, x *byte, nb int) float32
TEXT ·dotQ2_KAVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   x+8(FP), DI
	MOVQ   nb+16(FP), CX
	BCAST32(0x0f0f0f0f, X15, Y15)
	BCAST32(0x03030303, X14, Y14)
	VXORPS X0, X0, X0

q2k_loop:
	// scales[16]: scale in the low nibble, min in the high one
	VMOVDQU   (SI), X13
	VPSRLW    $4, X13, X12
	VPAND     X15, X12, X12
	VPAND     X15, X13, X13
	VPMOVZXBW X12, Y12
	VPMADDWD  260(DI), Y12, Y12
	HSUMD(Y12, X12, X3)
	VMOVD     X12, R12
	VPXOR     Y2, Y2, Y2
	QKHALF(Q2BITS, VPMOVZXBW, 16, 4, 0)
	QKHALF(Q2BITS, VPMOVZXBW, 48, 132, 64)
	HSUMD(Y2, X2, X3)
	VMOVD X2, R13
	K4FLOATAT(80)

	ADDQ $84, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q2k_loop

	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Q3BITS: the 2-bit quants at shift sh of Y4, plus 4 where hmask bit
// HB0 + sh/2 of the byte (Y3) is set: q + 4·h in 0..7 (the generic code's
// q − 4·(1−h), offset by 4, which isum takes back as 4·Σ sc·bsum). The
// word shifts keep each byte's bit in its byte; Y12 = 0x04s masks it.
#define Q3BITS(sh, y) \
	VPSRLW $sh, Y4, y;                \
	VPAND  Y14, y, y;                 \
	VPSRLW $(HB0+sh/2), Y3, Y8;       \
	VPSLLW $2, Y8, Y8;                \
	VPAND  Y12, Y8, Y8;               \
	VPOR   Y8, y, y

// func dotQ3_KAVX2(w, x *byte, nb int) float32
TEXT ·dotQ3_KAVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   x+8(FP), DI
	MOVQ   nb+16(FP), CX
	BCAST32(0x03030303, X14, Y14)
	BCAST32(0x04040404, X12, Y12)
	BCAST32(0x20202020, X11, Y11)
	VXORPS X0, X0, X0

q3k_loop:
	// 6-bit scales (ggml's q3 scale unpacking, four at a time), minus 32
	MOVL 96(SI), AX
	MOVL 100(SI), BX
	MOVL 104(SI), DX
	MOVL AX, R8
	ANDL $0x0f0f0f0f, R8
	MOVL DX, R9
	ANDL $0x03030303, R9
	SHLL $4, R9
	ORL  R9, R8
	MOVL BX, R10
	ANDL $0x0f0f0f0f, R10
	MOVL DX, R9
	SHRL $2, R9
	ANDL $0x03030303, R9
	SHLL $4, R9
	ORL  R9, R10
	SHRL $4, AX
	ANDL $0x0f0f0f0f, AX
	MOVL DX, R9
	SHRL $4, R9
	ANDL $0x03030303, R9
	SHLL $4, R9
	ORL  R9, AX
	SHRL $4, BX
	ANDL $0x0f0f0f0f, BX
	SHRL $6, DX
	ANDL $0x03030303, DX
	SHLL $4, DX
	ORL  DX, BX
	SHLQ $32, R10
	ORQ  R10, R8
	SHLQ $32, BX
	ORQ  BX, AX
	VMOVQ   R8, X13
	VPINSRQ $1, AX, X13, X13
	VPSUBB  X11, X13, X13

	// isum = Σ sc·Σ (q + 4h)·y − 4·Σ sc·bsum
	VPMOVSXBW X13, Y1
	VPMADDWD  260(DI), Y1, Y1
	VPSLLD    $2, Y1, Y1
	VPXOR     Y2, Y2, Y2
	VPSUBD    Y1, Y2, Y2
	VMOVDQU   (SI), Y3
#define HB0 0
	QKHALF(Q3BITS, VPMOVSXBW, 32, 4, 0)
#undef HB0
#define HB0 4
	QKHALF(Q3BITS, VPMOVSXBW, 64, 132, 64)
#undef HB0
	HSUMD(Y2, X2, X3)
	VMOVD X2, AX

	// sumf += float32(d·dy·float32(isum))
	MOVWLZX    108(SI), BX
	VMOVD      BX, X4
	VCVTPH2PS  X4, X4
	VMULSS     (DI), X4, X4
	VCVTSI2SSL AX, X5, X5
	VMULSS     X5, X4, X4
	VADDSS     X4, X0, X0

	ADDQ $110, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q3k_loop

	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// IQ4XSG adds group ib of an IQ4_XS block (16 bytes of nibbles at qo,
// activations at yo) times its scale ls − 32 to Y5; the scale's low four
// bits are at bit shl of R9 (scales_l), its top two at bit shh of R8.
#define IQ4XSG(qo, yo, shl, shh) \
	Q40NIB(qo(SI), Y2);          \
	VPSHUFB      Y2, Y11, Y2;    \
	VPMOVSXBW    X2, Y3;         \
	VEXTRACTI128 $1, Y2, X2;     \
	VPMOVSXBW    X2, Y2;         \
	VPMOVSXBW    yo(DI), Y4;     \
	VPMADDWD     Y4, Y3, Y3;     \
	VPMOVSXBW    yo+16(DI), Y4;  \
	VPMADDWD     Y4, Y2, Y2;     \
	VPADDD       Y2, Y3, Y3;     \
	MOVL         R9, AX;         \
	SHRL         $shl, AX;       \
	ANDL         $15, AX;        \
	MOVL         R8, DX;         \
	SHRL         $shh, DX;       \
	ANDL         $3, DX;         \
	SHLL         $4, DX;         \
	ORL          DX, AX;         \
	SUBL         $32, AX;        \
	VMOVD        AX, X4;         \
	VPBROADCASTD X4, Y4;         \
	VPMULLD      Y4, Y3, Y3;     \
	VPADDD       Y3, Y5, Y5

// func dotIQ4_XSAVX2(w, x *byte, nb int) float32
TEXT ·dotIQ4_XSAVX2(SB), NOSPLIT, $0-28
	MOVQ    w+0(FP), SI
	MOVQ    x+8(FP), DI
	MOVQ    nb+16(FP), CX
	VMOVDQU shr4hi<>(SB), Y12
	VMOVDQU kvalues<>(SB), Y11
	BCAST32(0x0f0f0f0f, X15, Y15)
	VXORPS  X0, X0, X0

iq4xs_loop:
	MOVWLZX 2(SI), R8
	MOVL    4(SI), R9
	VPXOR   Y5, Y5, Y5
	IQ4XSG(8, 4, 0, 0)
	IQ4XSG(24, 36, 4, 2)
	IQ4XSG(40, 68, 8, 4)
	IQ4XSG(56, 100, 12, 6)
	IQ4XSG(72, 132, 16, 8)
	IQ4XSG(88, 164, 20, 10)
	IQ4XSG(104, 196, 24, 12)
	IQ4XSG(120, 228, 28, 14)
	HSUMD(Y5, X5, X6)
	VMOVD X5, AX

	// sumf += float32(d·dy·float32(isum))
	MOVWLZX    (SI), BX
	VMOVD      BX, X4
	VCVTPH2PS  X4, X4
	VMULSS     (DI), X4, X4
	VCVTSI2SSL AX, X5, X5
	VMULSS     X5, X4, X4
	VADDSS     X4, X0, X0

	ADDQ $136, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  iq4xs_loop

	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// ---- Q4_0, Q5_0, Q8_0 × Q8_0, 512-bit --------------------------------
// Two blocks per Z register: the weights as 64 unsigned bytes in the
// activations' order (Q4_0: [lo0 hi0 lo1 hi1] from a broadcast, a masked
// broadcast and a per-lane shift; Q5_0 adds its fifth bits with a masked
// byte add; Q8_0 is offset by 128), the activations as [y0 y1], and the
// scales as [dw0·dx0 ×8, dw1·dx1 ×8] from masked broadcasts out of
// fp16Table. Σ(q−off)·y = VPDPBUSD(q, y) − VPDPBUSD(off, y) per lane,
// with off = 8, 16 or 128. Pairs of blocks alternate between two
// accumulators; a last odd block goes through 256-bit code into the
// first one (the VEX writes zero its upper half, which then adds zeros).
//
// Four kernels per type share that arithmetic lane for lane, so their
// results are bit-identical to one another (and VecDot's):
//   - one row × one activation row (VecDot);
//   - one row × four activation rows (VecDotMulti), decoding each weight
//     pair once;
//   - many rows × one prepared activation row (VecDotRows) and one row ×
//     four prepared activation rows (VecDotTile): prepQ8_0Pairs lays out
//     each activation pair once, 192 bytes: [y0 y1], the lanes of
//     −VPDPBUSD(off, y), and [dx0 ×8, dx1 ×8], so a row's VPDPBUSD
//     starts from the offset term and the scale comes from memory.
// K1 selects the upper eight dwords.

// ZSETUP: BX = fp16Table, K1, Z12 = shift counts, Z13 = 0x80s, Z14 = the
// offset off in every byte, Z15 = nibble mask, Z16-Z18 = Q5's high-bit
// constants (0x10s, bitsel, bitmask); the Y halves serve the 256-bit tail.
#define ZSETUP(off) \
	MOVQ            ·fp16Table(SB), BX; \
	MOVL            $0xff00, AX;        \
	KMOVW           AX, K1;             \
	VBROADCASTI64X4 shr4hi<>(SB), Z12;  \
	MOVL            $0x80808080, AX;    \
	VPBROADCASTD    AX, Z13;            \
	MOVL            $off, AX;           \
	VPBROADCASTD    AX, Z14;            \
	MOVL            $0x0f0f0f0f, AX;    \
	VPBROADCASTD    AX, Z15;            \
	MOVL            $0x10101010, AX;    \
	VPBROADCASTD    AX, Z16;            \
	VBROADCASTI64X4 bitsel<>(SB), Z17;  \
	VBROADCASTI64X4 bitmask<>(SB), Z18

// Q40ZNIB: the nibbles of the blocks whose quants are at wa and wb.
#define Q40ZNIB(wa, wb, z) \
	VBROADCASTI32X4 wa, z;     \
	VBROADCASTI32X4 wb, K1, z; \
	VPSRLVQ         Z12, z, z; \
	VPANDD          Z15, z, z

// Weight pair decoders: WP(wo, y, z) leaves the unsigned quants of the
// blocks at wo(SI) and the next in z (y is its lower half).
#define Q40WP(wo, y, z) Q40ZNIB(wo+2(SI), wo+20(SI), z)

#define Q50WP(wo, y, z) \
	Q40ZNIB(wo+6(SI), wo+28(SI), z);     \
	VPBROADCASTD wo+2(SI), Z19;          \
	VPBROADCASTD wo+24(SI), K1, Z19;     \
	VPSHUFB      Z17, Z19, Z19;          \
	VPTESTMB     Z18, Z19, K2;           \
	VPADDB       Z16, z, K2, z

#define Q80WP(wo, y, z) \
	VMOVDQU      wo+2(SI), y;            \
	VINSERTI64X4 $1, wo+36(SI), z, z;    \
	VPXORD       Z13, z, z

// Last-block decoders, 256-bit: the unsigned quants of the block at SI.
#define Q40LAST(y) Q40NIB(2(SI), y)

#define Q50LAST(y) \
	Q40NIB(6(SI), y);                    \
	VPBROADCASTD 2(SI), Y19;             \
	VPSHUFB      Y17, Y19, Y19;          \
	VPTESTMB     Y18, Y19, K2;           \
	VPADDB       Y16, y, K2, y

#define Q80LAST(y) VPXORD 2(SI), Y13, y

// ZSC: z = [t[h0] ×8, t[h1] ×8] for the halves at ha, hb.
#define ZSC(ha, hb, z) \
	MOVWLZX      ha, AX;                \
	MOVWLZX      hb, DX;                \
	VBROADCASTSS (BX)(AX*4), z;         \
	VBROADCASTSS (BX)(DX*4), K1, z

// ZPAIR adds weight blocks (wo, wo+ws) × activation blocks (xo, xo+34)
// to acc.
#define ZPAIR(WP, ws, wo, xo, acc) \
	WP(wo, Y2, Z2);                       \
	VMOVDQU      xo+2(DI), Y3;            \
	VINSERTI64X4 $1, xo+36(DI), Z3, Z3;   \
	VPXORD       Z4, Z4, Z4;              \
	VPDPBUSD     Z3, Z2, Z4;              \
	VPXORD       Z7, Z7, Z7;              \
	VPDPBUSD     Z3, Z14, Z7;             \
	VPSUBD       Z7, Z4, Z4;              \
	VCVTDQ2PS    Z4, Z4;                  \
	ZSC(wo(SI), wo+ws(SI), Z5);           \
	ZSC(xo(DI), xo+34(DI), Z6);           \
	VMULPS       Z6, Z5, Z5;              \
	VFMADD231PS  Z5, Z4, acc

// ZLAST adds the single block at SI times the one at r to Z0 (LAST
// decodes the weights).
#define ZLAST(LAST, r) \
	LAST(Y2);                             \
	Q40INTVNNI(Y2, 2(r), Y3, Y4, Y6);     \
	VCVTDQ2PS   Y3, Y3;                   \
	SCALE((SI), (r), Y5, X5);             \
	VFMADD231PS Z5, Z3, Z0

// HSUMZ01 leaves the sum of Z0 + Z1's floats in X0.
#define HSUMZ01 \
	VADDPS        Z1, Z0, Z0; \
	VEXTRACTF64X4 $1, Z0, Y1; \
	VADDPS        Y1, Y0, Y0; \
	HSUMPS(Y0, X0, X1)

// ZX4ACT adds the weight pair in Z8 (scales in Z9) times the activation
// pair at xa, xb (scales at da, db) to acc.
#define ZX4ACT(xa, xb, da, db, acc) \
	VMOVDQU      xa, Y10;           \
	VINSERTI64X4 $1, xb, Z10, Z10;  \
	VPXORD       Z11, Z11, Z11;     \
	VPDPBUSD     Z10, Z8, Z11;      \
	VPXORD       Z20, Z20, Z20;     \
	VPDPBUSD     Z10, Z14, Z20;     \
	VPSUBD       Z20, Z11, Z11;     \
	VCVTDQ2PS    Z11, Z11;          \
	ZSC(da, db, Z10);               \
	VMULPS       Z10, Z9, Z10;      \
	VFMADD231PS  Z10, Z11, acc

#define ZX4PAIR(WP, ws, wo, xo, a0, a1, a2, a3) \
	WP(wo, Y8, Z8);                    \
	ZSC(wo(SI), wo+ws(SI), Z9);        \
	ZX4ACT(xo+2(DI), xo+36(DI), xo(DI), xo+34(DI), a0);                                 \
	ZX4ACT(xo+2(DI)(R8*1), xo+36(DI)(R8*1), xo(DI)(R8*1), xo+34(DI)(R8*1), a1);         \
	ZX4ACT(xo+2(DI)(R8*2), xo+36(DI)(R8*2), xo(DI)(R8*2), xo+34(DI)(R8*2), a2);         \
	ZX4ACT(xo+2(DI)(R9*1), xo+36(DI)(R9*1), xo(DI)(R9*1), xo+34(DI)(R9*1), a3)

// ZX4LASTACT: the last odd block (decoded in Y8, scale in X9) for one
// activation row, as ZLAST.
#define ZX4LASTACT(xa, da, acc) \
	Q40INTVNNI(Y8, xa, Y10, Y11, Y13); \
	VCVTDQ2PS   Y10, Y10;              \
	SCALEW(da, Y11, X11);              \
	VFMADD231PS Z11, Z10, acc

// ZX4LAST runs the last odd block for the four rows at DI, DI+R8,
// DI+2·R8, DI+R9 (Y13 is clobbered: restore Z13 after, if needed).
#define ZX4LAST(LAST) \
	LAST(Y8);                                  \
	MOVWLZX (SI), AX;                          \
	VMOVSS  (BX)(AX*4), X9;                    \
	ZX4LASTACT(2(DI), (DI), Z0);               \
	ZX4LASTACT(2(DI)(R8*1), (DI)(R8*1), Z1);   \
	ZX4LASTACT(2(DI)(R8*2), (DI)(R8*2), Z2);   \
	ZX4LASTACT(2(DI)(R9*1), (DI)(R9*1), Z3)

// ZSUM adds the floats of z and its partner zo into the low float of z.
#define ZSUM(z, zo, y, x) \
	VADDPS        zo, z, z;   \
	VEXTRACTF64X4 $1, z, Y15; \
	VADDPS        Y15, y, y;  \
	HSUMPS(y, x, X15)

// ZX4STORE stores the four rows' sums to out (AX).
#define ZX4STORE \
	ZSUM(Z0, Z4, Y0, X0); \
	ZSUM(Z1, Z5, Y1, X1); \
	ZSUM(Z2, Z6, Y2, X2); \
	ZSUM(Z3, Z7, Y3, X3); \
	MOVSS X0, 0(AX);      \
	MOVSS X1, 4(AX);      \
	MOVSS X2, 8(AX);      \
	MOVSS X3, 12(AX)

#define ZX4ZERO \
	VXORPS Z0, Z0, Z0; VXORPS Z1, Z1, Z1; VXORPS Z2, Z2, Z2; VXORPS Z3, Z3, Z3; \
	VXORPS Z4, Z4, Z4; VXORPS Z5, Z5, Z5; VXORPS Z6, Z6, Z6; VXORPS Z7, Z7, Z7

// ZRPAIR adds weight blocks (wo, wo+ws) times the prepared pair at
// po(DI) to acc.
#define ZRPAIR(WP, ws, wo, po, acc) \
	WP(wo, Y2, Z2);                     \
	VMOVDQU64    po+64(DI), Z4;         \
	VPDPBUSD     po(DI), Z2, Z4;        \
	VCVTDQ2PS    Z4, Z4;                \
	ZSC(wo(SI), wo+ws(SI), Z5);         \
	VMULPS       po+128(DI), Z5, Z5;    \
	VFMADD231PS  Z5, Z4, acc

// ZPACT adds the weight pair in Z8 (scales Z9) times the prepared pair
// at pa to acc.
#define ZPACT(pa, acc) \
	VMOVDQU64   64+pa, Z11;      \
	VPDPBUSD    pa, Z8, Z11;     \
	VCVTDQ2PS   Z11, Z11;        \
	VMULPS      128+pa, Z9, Z10; \
	VFMADD231PS Z10, Z11, acc

#define ZPPAIR(WP, ws, wo, po, a0, a1, a2, a3) \
	WP(wo, Y8, Z8);                    \
	ZSC(wo(SI), wo+ws(SI), Z9);        \
	ZPACT(po(DI), a0);                 \
	ZPACT(po(DI)(R8*1), a1);           \
	ZPACT(po(DI)(R8*2), a2);           \
	ZPACT(po(DI)(R9*1), a3)

// The many-row kernels read their rows as two streams, [0, h) and
// [h, nrows) with h = ⌈nrows/2⌉, a row from each in turn: a core keeps
// more lines in flight for two sequential streams than for one (measured
// on 128 MiB of rows, by thread CPU time: 8–9 → 11–12 GB/s for Q4_0 at
// one thread). TWOSTREAMS points R8 and BX at the second stream's first
// row and output (R10 and R9 at the first's; R11 the stride, R12 the row
// count; clobbers AX, DX); NEXTROW steps past the row just done and
// switches streams.
#define TWOSTREAMS \
	MOVQ  R12, AX;        \
	INCQ  AX;             \
	SHRQ  $1, AX;         \
	MOVQ  AX, DX;         \
	IMULQ R11, DX;        \
	LEAQ  (R10)(DX*1), R8; \
	LEAQ  (R9)(AX*4), BX

#define NEXTROW \
	ADDQ  $4, R9;    \
	ADDQ  R11, R10;  \
	XCHGQ R10, R8;   \
	XCHGQ R9, BX

// func prefetchAhead(p *byte, n int)
// Prefetches the n bytes (n > 0) that start PFDIST bytes past p.
TEXT ·prefetchAhead(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), R10
	MOVQ n+8(FP), R11
	PFROW(pfa_loop)
	RET

// func prepQ8_0Pairs(x *byte, npairs, off int, dst *byte)
TEXT ·prepQ8_0Pairs(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         npairs+8(FP), CX
	MOVQ         off+16(FP), AX
	MOVQ         dst+24(FP), DI
	VPBROADCASTB AX, Z14
	MOVQ         ·fp16Table(SB), BX
	MOVL         $0xff00, AX
	KMOVW        AX, K1
	VPXORD       Z7, Z7, Z7

prep80_loop:
	VMOVDQU      2(SI), Y3
	VINSERTI64X4 $1, 36(SI), Z3, Z3
	VMOVDQU64    Z3, (DI)
	VPXORD       Z4, Z4, Z4
	VPDPBUSD     Z3, Z14, Z4
	VPSUBD       Z4, Z7, Z4
	VMOVDQU64    Z4, 64(DI)
	ZSC((SI), 34(SI), Z5)
	VMOVDQU64    Z5, 128(DI)
	ADDQ         $68, SI
	ADDQ         $192, DI
	DECQ         CX
	JNZ          prep80_loop
	VZEROUPPER
	RET

// func dotQ8_0AVX512(w, x *byte, nb int) float32
TEXT ·dotQ8_0AVX512(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	ZSETUP(0x80808080)
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	CMPQ   CX, $4
	JLT    q80z_pair

q80z_loop4:
	ZPAIR(Q80WP, 34, 0, 0, Z0)
	ZPAIR(Q80WP, 34, 68, 68, Z1)
	ADDQ $(136), SI
	ADDQ $136, DI
	SUBQ $4, CX
	CMPQ CX, $4
	JGE  q80z_loop4

q80z_pair:
	CMPQ CX, $2
	JLT  q80z_last
	ZPAIR(Q80WP, 34, 0, 0, Z0)
	ADDQ $(68), SI
	ADDQ $68, DI
	SUBQ $2, CX

q80z_last:
	TESTQ CX, CX
	JEQ   q80z_done
	ZLAST(Q80LAST, DI)

q80z_done:
	HSUMZ01
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ8_0x4AVX512(w, x *byte, stride, nb int, out *float32)
TEXT ·dotQ8_0x4AVX512(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ stride+16(FP), R8
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	ZSETUP(0x80808080)
	ZX4ZERO
	CMPQ CX, $4
	JLT  q80zx4_pair

q80zx4_loop4:
	ZX4PAIR(Q80WP, 34, 0, 0, Z0, Z1, Z2, Z3)
	ZX4PAIR(Q80WP, 34, 68, 68, Z4, Z5, Z6, Z7)
	ADDQ $(136), SI
	ADDQ $136, DI
	SUBQ $4, CX
	CMPQ CX, $4
	JGE  q80zx4_loop4

q80zx4_pair:
	CMPQ CX, $2
	JLT  q80zx4_last
	ZX4PAIR(Q80WP, 34, 0, 0, Z0, Z1, Z2, Z3)
	ADDQ $(68), SI
	ADDQ $68, DI
	SUBQ $2, CX

q80zx4_last:
	TESTQ CX, CX
	JEQ   q80zx4_done
	ZX4LAST(Q80LAST)

q80zx4_done:
	MOVQ out+32(FP), AX
	ZX4STORE
	VZEROUPPER
	RET

// func dotQ8_0RowsAVX512(w *byte, wstride, nrows int, prep, x *byte, nb int, out *float32)
TEXT ·dotQ8_0RowsAVX512(SB), NOSPLIT, $8-56
	MOVQ  w+0(FP), R10
	MOVQ  wstride+8(FP), R11
	MOVQ  nrows+16(FP), R12
	MOVQ  nb+40(FP), R13
	MOVQ  out+48(FP), R9
	// Two streams, as TWOSTREAMS, but BX holds fp16Table here, so the
	// second stream's output pointer lives in oth.
	TWOSTREAMS
	MOVQ  BX, oth-8(SP)
	ZSETUP(0x80808080)

q80r_row:
	MOVQ   R10, SI
	MOVQ   prep+24(FP), DI
	MOVQ   R13, CX
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	CMPQ   CX, $4
	JLT    q80r_pair

q80r_loop4:
	PFSB3
	ZRPAIR(Q80WP, 34, 0, 0, Z0)
	ZRPAIR(Q80WP, 34, 68, 192, Z1)
	ADDQ $(136), SI
	ADDQ $384, DI
	SUBQ $4, CX
	CMPQ CX, $4
	JGE  q80r_loop4

q80r_pair:
	CMPQ CX, $2
	JLT  q80r_last
	ZRPAIR(Q80WP, 34, 0, 0, Z0)
	ADDQ $(68), SI
	SUBQ $2, CX

q80r_last:
	TESTQ CX, CX
	JEQ   q80r_done
	// the last activation block, at x + 34·(nb−1)
	IMUL3Q $34, R13, DX
	ADDQ   x+32(FP), DX
	SUBQ   $34, DX
	ZLAST(Q80LAST, DX)

q80r_done:
	HSUMZ01
	MOVSS X0, (R9)
	ADDQ  $4, R9
	ADDQ  R11, R10
	XCHGQ R10, R8
	MOVQ  oth-8(SP), AX
	MOVQ  R9, oth-8(SP)
	MOVQ  AX, R9
	DECQ  R12
	JNZ   q80r_row
	VZEROUPPER
	RET

// func dotQ8_0x4PrepAVX512(w, prep *byte, pstride int, x *byte, xstride, nb int, out *float32)
TEXT ·dotQ8_0x4PrepAVX512(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), SI
	MOVQ prep+8(FP), DI
	MOVQ pstride+16(FP), R8
	MOVQ nb+40(FP), CX
	LEAQ (R8)(R8*2), R9
	ZSETUP(0x80808080)
	ZX4ZERO
	CMPQ CX, $4
	JLT  q80p_pair

q80p_loop4:
	ZPPAIR(Q80WP, 34, 0, 0, Z0, Z1, Z2, Z3)
	ZPPAIR(Q80WP, 34, 68, 192, Z4, Z5, Z6, Z7)
	ADDQ $(136), SI
	ADDQ $384, DI
	SUBQ $4, CX
	CMPQ CX, $4
	JGE  q80p_loop4

q80p_pair:
	CMPQ CX, $2
	JLT  q80p_last
	ZPPAIR(Q80WP, 34, 0, 0, Z0, Z1, Z2, Z3)
	ADDQ $(68), SI
	SUBQ $2, CX

q80p_last:
	TESTQ CX, CX
	JEQ   q80p_done
	// The last odd block, from the original activation rows.
	MOVQ  x+24(FP), DI
	MOVQ  xstride+32(FP), R8
	LEAQ  (R8)(R8*2), R9
	MOVQ  nb+40(FP), AX
	IMULQ $34, AX
	LEAQ  -34(DI)(AX*1), DI
	ZX4LAST(Q80LAST)

q80p_done:
	MOVQ out+48(FP), AX
	ZX4STORE
	VZEROUPPER
	RET

// ---- Q4_K, Q6_K × four Q8_K activation rows ------------------------
// The one-row kernels' arithmetic for four activation rows at once: the
// weights' quants, scales and scale selectors are decoded once per
// super-block, each row keeps its own integer accumulator, and each row's
// float sum lives in out[a], updated with the generic operations in the
// generic order, so every result is bit-identical to VecDot's. The rows
// are at DI, DI+R8, DI+2·R8, DI+R9.

// Q4KX4ACT adds one row's Σ sc·q·y for sub-blocks 2j, 2j+1 (nibbles in
// Y6, Y7, scale words in Y8, Y9) to acc.
#define Q4KX4ACT(ylo, yhi, acc) \
	VPMADDUBSW ylo, Y6, Y10;  \
	VPMADDWD   Y8, Y10, Y10;  \
	VPADDD     Y10, acc, acc; \
	VPMADDUBSW yhi, Y7, Y11;  \
	VPMADDWD   Y9, Y11, Y11;  \
	VPADDD     Y11, acc, acc

#define Q4KX4SUB(qo, yo, so) \
	VMOVDQU qo(SI), Y6;                     \
	VPSRLW  $4, Y6, Y7;                     \
	VPAND   Y15, Y6, Y6;                    \
	VPAND   Y15, Y7, Y7;                    \
	VPSHUFB k4shuf<>+so(SB), Y4, Y8;        \
	VPSHUFB k4shuf<>+so+32(SB), Y4, Y9;     \
	Q4KX4ACT(yo(DI), yo+32(DI), Y0);                 \
	Q4KX4ACT(yo(DI)(R8*1), yo+32(DI)(R8*1), Y1);     \
	Q4KX4ACT(yo(DI)(R8*2), yo+32(DI)(R8*2), Y2);     \
	Q4KX4ACT(yo(DI)(R9*1), yo+32(DI)(R9*1), Y3)

// Q4KX4FLOAT: out[a] (at oo(R13)) += float32(d·dy·isum) −
// float32(dmin·dy·summs) for one row: isum from acc, summs from the
// row's bsums at bs and the mins in X14, dy at dya; d, dmin in X9, X8.
#define Q4KX4FLOAT(accy, accx, dya, bs, oo) \
	HSUMD(accy, accx, X10);       \
	VMOVD        accx, AX;        \
	VMOVDQU      bs, Y12;         \
	VEXTRACTI128 $1, Y12, X13;    \
	VPHADDW      X13, X12, X12;   \
	VPMADDWD     X14, X12, X12;   \
	VPSHUFD      $0x4e, X12, X13; \
	VPADDD       X13, X12, X12;   \
	VPSHUFD      $0xb1, X12, X13; \
	VPADDD       X13, X12, X12;   \
	VMOVD        X12, DX;         \
	VMOVSS       dya, X12;        \
	VMULSS       X12, X9, X10;    \
	VMULSS       X12, X8, X11;    \
	VCVTSI2SSL   AX, X12, X12;    \
	VMULSS       X12, X10, X10;   \
	VCVTSI2SSL   DX, X13, X13;    \
	VMULSS       X13, X11, X11;   \
	VSUBSS       X11, X10, X10;   \
	VADDSS       oo(R13), X10, X10; \
	VMOVSS       X10, oo(R13)

// X4OUTZERO zeroes out[0:4] (at R13).
#define X4OUTZERO \
	MOVL $0, 0(R13);  \
	MOVL $0, 4(R13);  \
	MOVL $0, 8(R13);  \
	MOVL $0, 12(R13)

// func dotQ4_Kx4AVX2(w, x *byte, stride, nb int, out *float32)
TEXT ·dotQ4_Kx4AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ stride+16(FP), R8
	MOVQ nb+24(FP), CX
	MOVQ out+32(FP), R13
	LEAQ (R8)(R8*2), R9
	BCAST32(0x0f0f0f0f, X15, Y15)
	X4OUTZERO

q4kx4_loop:
	PFSB3
	K4SCALES
	VEXTRACTI128 $1, Y1, X14
	VPERMQ       $0x44, Y1, Y4
	VPXOR        Y0, Y0, Y0
	VPXOR        Y1, Y1, Y1
	VPXOR        Y2, Y2, Y2
	VPXOR        Y3, Y3, Y3
	Q4KX4SUB(16, 4, 0)
	Q4KX4SUB(48, 68, 64)
	Q4KX4SUB(80, 132, 128)
	Q4KX4SUB(112, 196, 192)
	MOVL      (SI), AX
	VMOVD     AX, X9
	VCVTPH2PS X9, X9
	VMOVSHDUP X9, X8
	Q4KX4FLOAT(Y0, X0, (DI), 260(DI), 0)
	Q4KX4FLOAT(Y1, X1, (DI)(R8*1), 260(DI)(R8*1), 4)
	Q4KX4FLOAT(Y2, X2, (DI)(R8*2), 260(DI)(R8*2), 8)
	Q4KX4FLOAT(Y3, X3, (DI)(R9*1), 260(DI)(R9*1), 12)
	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q4kx4_loop
	VZEROUPPER
	RET

// Q6KX4ACT adds one row's Σ q·y·sc for a 32-quant run (quants in Y7,
// scale words in Y9) to acc.
#define Q6KX4ACT(ya, acc) \
	VPMADDUBSW ya, Y7, Y10;  \
	VPMADDWD   Y9, Y10, Y10; \
	VPADDD     Y10, acc, acc

#define Q6KX4RUN(yo, so) \
	VPSHUFB   q6shuf<>+so(SB), X13, X9;       \
	VPMOVSXBW X9, Y9;                         \
	Q6KX4ACT(yo(DI), Y0);                     \
	Q6KX4ACT(yo(DI)(R8*1), Y1);               \
	Q6KX4ACT(yo(DI)(R8*2), Y2);               \
	Q6KX4ACT(yo(DI)(R9*1), Y3)

#define Q6KX4HALF(lo, ho, yo, so) \
	VMOVDQU lo(SI), Y4;        \
	VMOVDQU lo+32(SI), Y5;     \
	VMOVDQU ho(SI), Y6;        \
	VPAND   Y15, Y4, Y7;       \
	VPSLLW  $4, Y6, Y8;        \
	VPAND   Y14, Y8, Y8;       \
	VPOR    Y8, Y7, Y7;        \
	Q6KX4RUN(yo, so);          \
	VPAND   Y15, Y5, Y7;       \
	VPSLLW  $2, Y6, Y8;        \
	VPAND   Y14, Y8, Y8;       \
	VPOR    Y8, Y7, Y7;        \
	Q6KX4RUN(yo+32, so+16);    \
	VPSRLW  $4, Y4, Y7;        \
	VPAND   Y15, Y7, Y7;       \
	VPAND   Y14, Y6, Y8;       \
	VPOR    Y8, Y7, Y7;        \
	Q6KX4RUN(yo+64, so+32);    \
	VPSRLW  $4, Y5, Y7;        \
	VPAND   Y15, Y7, Y7;       \
	VPSRLW  $2, Y6, Y8;        \
	VPAND   Y14, Y8, Y8;       \
	VPOR    Y8, Y7, Y7;        \
	Q6KX4RUN(yo+96, so+48)

// Q6KX4INIT sets acc to −32·Σ sc·bsum for the row whose bsums are at bs.
#define Q6KX4INIT(bs, acc) \
	VPMADDWD bs, Y12, Y10;  \
	VPSLLD   $5, Y10, Y10;  \
	VPXOR    acc, acc, acc; \
	VPSUBD   Y10, acc, acc

// Q6KX4FLOAT: out[a] += float32(d·dy·float32(isum)), d in X8.
#define Q6KX4FLOAT(accy, accx, dya, oo) \
	HSUMD(accy, accx, X10);       \
	VMOVD      accx, AX;          \
	VMULSS     dya, X8, X10;      \
	VCVTSI2SSL AX, X11, X11;      \
	VMULSS     X11, X10, X10;     \
	VADDSS     oo(R13), X10, X10; \
	VMOVSS     X10, oo(R13)

// func dotQ6_Kx4AVX2(w, x *byte, stride, nb int, out *float32)
TEXT ·dotQ6_Kx4AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ stride+16(FP), R8
	MOVQ nb+24(FP), CX
	MOVQ out+32(FP), R13
	LEAQ (R8)(R8*2), R9
	BCAST32(0x0f0f0f0f, X15, Y15)
	BCAST32(0x30303030, X14, Y14)
	X4OUTZERO

q6kx4_loop:
	PFSB4
	VMOVDQU   192(SI), X13
	VPMOVSXBW X13, Y12
	Q6KX4INIT(260(DI), Y0)
	Q6KX4INIT(260(DI)(R8*1), Y1)
	Q6KX4INIT(260(DI)(R8*2), Y2)
	Q6KX4INIT(260(DI)(R9*1), Y3)
	Q6KX4HALF(0, 128, 4, 0)
	Q6KX4HALF(64, 160, 132, 64)
	MOVWLZX   208(SI), BX
	VMOVD     BX, X8
	VCVTPH2PS X8, X8
	Q6KX4FLOAT(Y0, X0, (DI), 0)
	Q6KX4FLOAT(Y1, X1, (DI)(R8*1), 4)
	Q6KX4FLOAT(Y2, X2, (DI)(R8*2), 8)
	Q6KX4FLOAT(Y3, X3, (DI)(R9*1), 12)
	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q6kx4_loop
	VZEROUPPER
	RET

// ---- Q4_0 × Q8_0 by quads, 512-bit ----------------------------------
// Four blocks per Z register, one 128-bit lane each. prepQ8_0Quads lays
// out each four activation blocks once, 256 bytes: the blocks' first 16
// quants, their last 16, the int32 lanes −off·Σ(the eight y a lane's two
// VPDPBUSD meet), and the scales dx as floats, lane for lane. A weight
// quad (72 bytes) is read as two overlapping Z loads; VPERMT2W gathers
// its four 16-byte quant runs into lanes and VPERMW its four scales
// (VCVTPH2PS, no table lookups). Low and high nibbles are then the
// quants of the two activation halves, so each lane's int32 is
// −8·Σy + Σq·y over eight elements, exact; it is scaled by dw·dx and
// summed in float32 lanes, even quads in Z0 and odd ones in Z1. A last
// partial quad is read through byte masks (K2, K3) and the missing
// blocks are zero, which adds +0 to their lanes.
//
// Every Q4_0 product at this level goes through these kernels (VecDot and
// VecDotMulti prepare their activation rows first), so one row, four
// activation rows, many rows and tiles agree bit for bit.

// q40qidx gathers a quad's quants (words) from its first 64 bytes
// (indices 0-31) and from the 64 bytes at +8 (32-63): block b's 16 bytes
// start at byte 2+18b.
DATA q40qidx<>+0(SB)/8, $0x0004000300020001
DATA q40qidx<>+8(SB)/8, $0x0008000700060005
DATA q40qidx<>+16(SB)/8, $0x000d000c000b000a
DATA q40qidx<>+24(SB)/8, $0x00110010000f000e
DATA q40qidx<>+32(SB)/8, $0x0016001500140013
DATA q40qidx<>+40(SB)/8, $0x001a001900180017
DATA q40qidx<>+48(SB)/8, $0x003b003a00390038
DATA q40qidx<>+56(SB)/8, $0x003f003e003d003c
GLOBL q40qidx<>(SB), RODATA|NOPTR, $64

// q40sidx puts block b's scale (word 9b) in words 4b..4b+3.
DATA q40sidx<>+0(SB)/8, $0x0000000000000000
DATA q40sidx<>+8(SB)/8, $0x0009000900090009
DATA q40sidx<>+16(SB)/8, $0x0012001200120012
DATA q40sidx<>+24(SB)/8, $0x001b001b001b001b
GLOBL q40sidx<>(SB), RODATA|NOPTR, $32

// Q40QSETUP: Z12, Z13 = the gathers, Z15 = nibble mask; K2, K3 = the
// byte masks of a last partial quad of nb mod 4 blocks (nb in R13;
// clobbers AX, CX).
#define Q40QSETUP \
	VMOVDQU64       q40qidx<>(SB), Z12; \
	VBROADCASTI64X4 q40sidx<>(SB), Z13; \
	MOVL            $0x0f0f0f0f, AX;    \
	VPBROADCASTD    AX, Z15;            \
	MOVQ            R13, CX;            \
	ANDQ            $3, CX;             \
	IMULQ           $18, CX;            \
	MOVQ            $1, AX;             \
	SHLQ            CX, AX;             \
	DECQ            AX;                 \
	KMOVQ           AX, K2;             \
	SUBQ            $8, CX;             \
	ANDQ            $63, CX;            \
	MOVQ            $1, AX;             \
	SHLQ            CX, AX;             \
	DECQ            AX;                 \
	KMOVQ           AX, K3

// Q40QW decodes the quad at wo(SI): low nibbles in lo, high in hi, the
// scales as floats in Z5 (clobbers Z2).
#define Q40QW(wo, lo, hi) \
	VMOVDQU64 wo(SI), Z2;       \
	VPERMW    Z2, Z13, Z5;      \
	VPERMT2W  wo+8(SI), Z12, Z2; \
	VPANDD    Z15, Z2, lo;      \
	VPSRLW    $4, Z2, hi;       \
	VPANDD    Z15, hi, hi;      \
	VCVTPH2PS Y5, Z5

// Q40QWTAIL decodes the partial quad at SI through K2, K3 (clobbers Z3).
#define Q40QWTAIL(lo, hi) \
	VMOVDQU8.Z (SI), K2, Z2;  \
	VMOVDQU8.Z 8(SI), K3, Z3; \
	VPERMW     Z2, Z13, Z5;   \
	VPERMT2W   Z3, Z12, Z2;   \
	VPANDD     Z15, Z2, lo;   \
	VPSRLW     $4, Z2, hi;    \
	VPANDD     Z15, hi, hi;   \
	VCVTPH2PS  Y5, Z5

// QACT adds the decoded quad (lo, hi, scales Z5) times the prepared
// quad at pa to acc (t, u: scratch).
#define QACT(lo, hi, pa, t, u, acc) \
	VMOVDQU64   128+pa, t;   \
	VPDPBUSD    pa, lo, t;   \
	VPDPBUSD    64+pa, hi, t; \
	VCVTDQ2PS   t, t;        \
	VMULPS      192+pa, Z5, u; \
	VFMADD231PS u, t, acc

// QX4 runs a decoded quad against the prepared quads at po(DI) of four
// activation rows R8 bytes apart (R9 = 3·R8).
#define QX4(po, a0, a1, a2, a3) \
	QACT(Z6, Z7, po(DI), Z8, Z9, a0);        \
	QACT(Z6, Z7, po(DI)(R8*1), Z10, Z11, a1); \
	QACT(Z6, Z7, po(DI)(R8*2), Z8, Z9, a2);  \
	QACT(Z6, Z7, po(DI)(R9*1), Z10, Z11, a3)

// The four-activation kernels sum even quads in Z16-Z19 and odd ones in
// Z20-Z23.
#define QX4ZERO \
	VPXORD Z16, Z16, Z16; VPXORD Z17, Z17, Z17; VPXORD Z18, Z18, Z18; VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; VPXORD Z21, Z21, Z21; VPXORD Z22, Z22, Z22; VPXORD Z23, Z23, Z23

// QX4SUMS adds each pair as HSUMZ01 does, leaving the four sums in
// X0-X3, with X11 as scratch (the quad kernels keep constants in
// Z12-Z15).
#define QX4SUMS \
	VMOVAPS       Z16, Z0;   \
	VMOVAPS       Z17, Z1;   \
	VMOVAPS       Z18, Z2;   \
	VMOVAPS       Z19, Z3;   \
	VADDPS        Z20, Z0, Z0; \
	VEXTRACTF64X4 $1, Z0, Y11; \
	VADDPS        Y11, Y0, Y0; \
	HSUMPS(Y0, X0, X11);     \
	VADDPS        Z21, Z1, Z1; \
	VEXTRACTF64X4 $1, Z1, Y11; \
	VADDPS        Y11, Y1, Y1; \
	HSUMPS(Y1, X1, X11);     \
	VADDPS        Z22, Z2, Z2; \
	VEXTRACTF64X4 $1, Z2, Y11; \
	VADDPS        Y11, Y2, Y2; \
	HSUMPS(Y2, X2, X11);     \
	VADDPS        Z23, Z3, Z3; \
	VEXTRACTF64X4 $1, Z3, Y11; \
	VADDPS        Y11, Y3, Y3; \
	HSUMPS(Y3, X3, X11)

// func prepQ8_0Quads(x *byte, nb, off int, dst *byte)
// Lays out the nb > 0 Q8_0 blocks at x as ⌈nb/4⌉ quads (see above); a
// last partial quad's missing blocks are zero.
TEXT ·prepQ8_0Quads(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         nb+8(FP), CX
	MOVQ         off+16(FP), AX
	MOVQ         dst+24(FP), DI
	VPBROADCASTB AX, Z14
	VPXORD       Z9, Z9, Z9

pq_quad:
	VMOVDQU64 Z9, (DI)
	VMOVDQU64 Z9, 64(DI)
	VMOVDQU64 Z9, 192(DI)
	MOVQ      DI, R8
	MOVQ      $4, DX

pq_blk:
	VMOVDQU      2(SI), X0
	VMOVDQU      X0, (R8)
	VMOVDQU      18(SI), X0
	VMOVDQU      X0, 64(R8)
	VPBROADCASTW (SI), X1
	VCVTPH2PS    X1, X1
	VMOVDQU      X1, 192(R8)
	ADDQ         $34, SI
	ADDQ         $16, R8
	DECQ         CX
	JZ           pq_sum
	DECQ         DX
	JNZ          pq_blk

pq_sum:
	VMOVDQU64 (DI), Z0
	VMOVDQU64 64(DI), Z1
	VPXORD    Z4, Z4, Z4
	VPDPBUSD  Z0, Z14, Z4
	VPDPBUSD  Z1, Z14, Z4
	VPSUBD    Z4, Z9, Z4
	VMOVDQU64 Z4, 128(DI)
	ADDQ      $256, DI
	TESTQ     CX, CX
	JNZ       pq_quad
	VZEROUPPER
	RET

// func dotQ4_0RowsAVX512(w *byte, wstride, nrows int, prep *byte, nb int, out *float32)
TEXT ·dotQ4_0RowsAVX512(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), R10
	MOVQ wstride+8(FP), R11
	MOVQ nrows+16(FP), R12
	MOVQ nb+32(FP), R13
	MOVQ out+40(FP), R9
	Q40QSETUP
	SHRQ $2, R13 // whole quads
	TWOSTREAMS

q40q_row:
	MOVQ   R10, SI
	MOVQ   prep+24(FP), DI
	MOVQ   R13, CX
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	CMPQ   CX, $2
	JLT    q40q_one

q40q_loop2:
	PFSB3
	Q40QW(0, Z6, Z7)
	QACT(Z6, Z7, 0(DI), Z8, Z9, Z0)
	Q40QW(72, Z6, Z7)
	QACT(Z6, Z7, 256(DI), Z8, Z9, Z1)
	ADDQ $144, SI
	ADDQ $512, DI
	SUBQ $2, CX
	CMPQ CX, $2
	JGE  q40q_loop2

q40q_one:
	// A last whole quad goes to Z0, then a partial one to Z1; a partial
	// quad after an even number goes to Z0.
	MOVQ  nb+32(FP), AX
	TESTQ CX, CX
	JEQ   q40q_tail0
	Q40QW(0, Z6, Z7)
	QACT(Z6, Z7, 0(DI), Z8, Z9, Z0)
	TESTQ $3, AX
	JEQ   q40q_done
	ADDQ  $72, SI
	ADDQ  $256, DI
	Q40QWTAIL(Z6, Z7)
	QACT(Z6, Z7, 0(DI), Z8, Z9, Z1)
	JMP   q40q_done

q40q_tail0:
	TESTQ $3, AX
	JEQ   q40q_done
	Q40QWTAIL(Z6, Z7)
	QACT(Z6, Z7, 0(DI), Z8, Z9, Z0)

q40q_done:
	HSUMZ01
	MOVSS X0, (R9)
	NEXTROW
	DECQ  R12
	JNZ   q40q_row
	VZEROUPPER
	RET

// func dotQ4_0TileAVX512(w *byte, wstride, nrows int, prep *byte, pstride, nb int, out *float32, ostride int)
// nrows weight rows against four prepared activation rows pstride apart:
// out[i·ostride + r] for activation row i and weight row r, the rows
// read in two streams (as TWOSTREAMS; here BX is the second stream's
// row and oa, ob the two streams' outputs).
TEXT ·dotQ4_0TileAVX512(SB), NOSPLIT, $16-64
	MOVQ  w+0(FP), R10
	MOVQ  wstride+8(FP), R11
	MOVQ  nrows+16(FP), R12
	MOVQ  nb+40(FP), R13
	MOVQ  out+48(FP), AX
	MOVQ  AX, oa-8(SP)
	MOVQ  R12, CX
	INCQ  CX
	SHRQ  $1, CX
	LEAQ  (AX)(CX*4), DX
	MOVQ  DX, ob-16(SP)
	IMULQ R11, CX
	LEAQ  (R10)(CX*1), BX
	MOVQ  pstride+32(FP), R8
	LEAQ  (R8)(R8*2), R9
	Q40QSETUP

q40qt_row:
	MOVQ R10, SI
	MOVQ prep+24(FP), DI
	QX4ZERO
	MOVQ R13, CX
	SHRQ $2, CX
	CMPQ CX, $2
	JLT  q40qt_one

q40qt_loop2:
	PFSB3
	Q40QW(0, Z6, Z7)
	QX4(0, Z16, Z17, Z18, Z19)
	Q40QW(72, Z6, Z7)
	QX4(256, Z20, Z21, Z22, Z23)
	ADDQ $144, SI
	ADDQ $512, DI
	SUBQ $2, CX
	CMPQ CX, $2
	JGE  q40qt_loop2

q40qt_one:
	TESTQ CX, CX
	JEQ   q40qt_tail0
	Q40QW(0, Z6, Z7)
	QX4(0, Z16, Z17, Z18, Z19)
	TESTQ $3, R13
	JEQ   q40qt_done
	ADDQ  $72, SI
	ADDQ  $256, DI
	Q40QWTAIL(Z6, Z7)
	QX4(0, Z20, Z21, Z22, Z23)
	JMP   q40qt_done

q40qt_tail0:
	TESTQ $3, R13
	JEQ   q40qt_done
	Q40QWTAIL(Z6, Z7)
	QX4(0, Z16, Z17, Z18, Z19)

q40qt_done:
	QX4SUMS
	MOVQ  oa-8(SP), AX
	MOVQ  ostride+56(FP), DX
	MOVQ  AX, CX
	MOVSS X0, (CX)
	LEAQ  (CX)(DX*4), CX
	MOVSS X1, (CX)
	LEAQ  (CX)(DX*4), CX
	MOVSS X2, (CX)
	LEAQ  (CX)(DX*4), CX
	MOVSS X3, (CX)
	ADDQ  $4, AX
	MOVQ  ob-16(SP), DX
	MOVQ  DX, oa-8(SP)
	MOVQ  AX, ob-16(SP)
	ADDQ  R11, R10
	XCHGQ R10, BX
	DECQ  R12
	JNZ   q40qt_row
	VZEROUPPER
	RET

// ---- Q5_0 × Q8_0 by quads, 512-bit ----------------------------------
// As Q4_0's quads, from 88-byte weight quads read as two overlapping Z
// loads (at +0 and +24): VPERMI2W gathers the scales and, per lane, the
// block's 32 high bits, which VPSHUFB and VPTESTMB turn into byte masks
// that add 16 to the nibbles.

// q50qidx: block b's quants start at byte 6+22b.
DATA q50qidx<>+0(SB)/8, $0x0006000500040003
DATA q50qidx<>+8(SB)/8, $0x000a000900080007
DATA q50qidx<>+16(SB)/8, $0x00110010000f000e
DATA q50qidx<>+24(SB)/8, $0x0015001400130012
DATA q50qidx<>+32(SB)/8, $0x0030002f002e002d
DATA q50qidx<>+40(SB)/8, $0x0034003300320031
DATA q50qidx<>+48(SB)/8, $0x003b003a00390038
DATA q50qidx<>+56(SB)/8, $0x003f003e003d003c
GLOBL q50qidx<>(SB), RODATA|NOPTR, $64

// q50sidx: block b's scale (bytes 22b) in words 4b..4b+3.
DATA q50sidx<>+0(SB)/8, $0x0000000000000000
DATA q50sidx<>+8(SB)/8, $0x000b000b000b000b
DATA q50sidx<>+16(SB)/8, $0x0016001600160016
DATA q50sidx<>+24(SB)/8, $0x0035003500350035
DATA q50sidx<>+32(SB)/8, $0
DATA q50sidx<>+40(SB)/8, $0
DATA q50sidx<>+48(SB)/8, $0
DATA q50sidx<>+56(SB)/8, $0
GLOBL q50sidx<>(SB), RODATA|NOPTR, $64

// q50hidx: block b's high bits (bytes 2+22b..5+22b) in words 8b, 8b+1.
DATA q50hidx<>+0(SB)/8, $0x0000000000020001
DATA q50hidx<>+8(SB)/8, $0
DATA q50hidx<>+16(SB)/8, $0x00000000000d000c
DATA q50hidx<>+24(SB)/8, $0
DATA q50hidx<>+32(SB)/8, $0x0000000000180017
DATA q50hidx<>+40(SB)/8, $0
DATA q50hidx<>+48(SB)/8, $0x0000000000370036
DATA q50hidx<>+56(SB)/8, $0
GLOBL q50hidx<>(SB), RODATA|NOPTR, $64

// q50sel spreads a lane's high-bit bytes 0, 1 (low nibbles' bits) and
// 2, 3 (high nibbles') over eight bytes each, for VPTESTMB against
// 1, 2, 4, ..., 128.
DATA q50sel<>+0(SB)/8, $0x0000000000000000
DATA q50sel<>+8(SB)/8, $0x0101010101010101
DATA q50sel<>+16(SB)/8, $0x0202020202020202
DATA q50sel<>+24(SB)/8, $0x0303030303030303
GLOBL q50sel<>(SB), RODATA|NOPTR, $32

// Q50QSETUP: Z12-Z14 the gathers, Z15 the nibble mask, Z24/Z25 the low
// and high selectors, Z26 the bits, Z27 = 16s; K2, K3 the byte masks of
// a last partial quad of nb mod 4 blocks (nb in R13; clobbers AX, CX).
#define Q50QSETUP(la, lb) \
	VMOVDQU64       q50qidx<>(SB), Z12;  \
	VMOVDQU64       q50sidx<>(SB), Z13;  \
	VMOVDQU64       q50hidx<>(SB), Z14;  \
	MOVL            $0x0f0f0f0f, AX;     \
	VPBROADCASTD    AX, Z15;             \
	VBROADCASTI32X4 q50sel<>(SB), Z24;   \
	VBROADCASTI32X4 q50sel<>+16(SB), Z25; \
	MOVQ            $0x8040201008040201, AX; \
	VPBROADCASTQ    AX, Z26;             \
	MOVL            $0x10101010, AX;     \
	VPBROADCASTD    AX, Z27;             \
	MOVQ            R13, CX;             \
	ANDQ            $3, CX;              \
	IMULQ           $22, CX;             \
	MOVQ            $-1, AX;             \
	CMPQ            CX, $64;             \
	JAE             la;                  \
	MOVQ            $1, AX;              \
	SHLQ            CX, AX;              \
	DECQ            AX;                  \
la:;                                          \
	KMOVQ           AX, K2;              \
	XORQ            AX, AX;              \
	SUBQ            $24, CX;             \
	JLE             lb;                  \
	MOVQ            $1, AX;              \
	SHLQ            CX, AX;              \
	DECQ            AX;                  \
lb:;                                          \
	KMOVQ           AX, K3

// Q50QDEC decodes the quad loaded in Z2 (+0) and Z3 (+24): low quants
// in lo, high in hi, scales as floats in Z5.
#define Q50QDEC(lo, hi) \
	VMOVDQA64   Z13, Z5;          \
	VPERMI2W    Z3, Z2, Z5;       \
	VMOVDQA64   Z14, Z4;          \
	VPERMI2W    Z3, Z2, Z4;       \
	VPERMT2W    Z3, Z12, Z2;      \
	VPANDD      Z15, Z2, lo;      \
	VPSRLW      $4, Z2, hi;       \
	VPANDD      Z15, hi, hi;      \
	VPSHUFB     Z24, Z4, Z10;     \
	VPTESTMB    Z26, Z10, K4;     \
	VPADDB      Z27, lo, K4, lo;  \
	VPSHUFB     Z25, Z4, Z11;     \
	VPTESTMB    Z26, Z11, K5;     \
	VPADDB      Z27, hi, K5, hi;  \
	VCVTPH2PS   Y5, Z5

#define Q50QW(wo, lo, hi) \
	VMOVDQU64 wo(SI), Z2;    \
	VMOVDQU64 wo+24(SI), Z3; \
	Q50QDEC(lo, hi)

#define Q50QWTAIL(lo, hi) \
	VMOVDQU8.Z (SI), K2, Z2;   \
	VMOVDQU8.Z 24(SI), K3, Z3; \
	Q50QDEC(lo, hi)

// func dotQ5_0RowsAVX512(w *byte, wstride, nrows int, prep *byte, nb int, out *float32)
TEXT ·dotQ5_0RowsAVX512(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), R10
	MOVQ wstride+8(FP), R11
	MOVQ nrows+16(FP), R12
	MOVQ nb+32(FP), R13
	MOVQ out+40(FP), R9
	Q50QSETUP(q50q_ka, q50q_kb)
	SHRQ $2, R13
	TWOSTREAMS

q50q_row:
	MOVQ   R10, SI
	MOVQ   prep+24(FP), DI
	MOVQ   R13, CX
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	CMPQ   CX, $2
	JLT    q50q_one

q50q_loop2:
	PFSB3
	Q50QW(0, Z6, Z7)
	QACT(Z6, Z7, 0(DI), Z8, Z9, Z0)
	Q50QW(88, Z6, Z7)
	QACT(Z6, Z7, 256(DI), Z8, Z9, Z1)
	ADDQ $176, SI
	ADDQ $512, DI
	SUBQ $2, CX
	CMPQ CX, $2
	JGE  q50q_loop2

q50q_one:
	MOVQ  nb+32(FP), AX
	TESTQ CX, CX
	JEQ   q50q_tail0
	Q50QW(0, Z6, Z7)
	QACT(Z6, Z7, 0(DI), Z8, Z9, Z0)
	TESTQ $3, AX
	JEQ   q50q_done
	ADDQ  $88, SI
	ADDQ  $256, DI
	Q50QWTAIL(Z6, Z7)
	QACT(Z6, Z7, 0(DI), Z8, Z9, Z1)
	JMP   q50q_done

q50q_tail0:
	TESTQ $3, AX
	JEQ   q50q_done
	Q50QWTAIL(Z6, Z7)
	QACT(Z6, Z7, 0(DI), Z8, Z9, Z0)

q50q_done:
	HSUMZ01
	MOVSS X0, (R9)
	NEXTROW
	DECQ  R12
	JNZ   q50q_row
	VZEROUPPER
	RET

// func dotQ5_0TileAVX512(w *byte, wstride, nrows int, prep *byte, pstride, nb int, out *float32, ostride int)
// nrows weight rows against four prepared activation rows pstride apart:
// out[i·ostride + r] for activation row i and weight row r, the rows
// read in two streams (as TWOSTREAMS; here BX is the second stream's
// row and oa, ob the two streams' outputs).
TEXT ·dotQ5_0TileAVX512(SB), NOSPLIT, $16-64
	MOVQ  w+0(FP), R10
	MOVQ  wstride+8(FP), R11
	MOVQ  nrows+16(FP), R12
	MOVQ  nb+40(FP), R13
	MOVQ  out+48(FP), AX
	MOVQ  AX, oa-8(SP)
	MOVQ  R12, CX
	INCQ  CX
	SHRQ  $1, CX
	LEAQ  (AX)(CX*4), DX
	MOVQ  DX, ob-16(SP)
	IMULQ R11, CX
	LEAQ  (R10)(CX*1), BX
	MOVQ  pstride+32(FP), R8
	LEAQ  (R8)(R8*2), R9
	Q50QSETUP(q50qt_ka, q50qt_kb)

q50qt_row:
	MOVQ R10, SI
	MOVQ prep+24(FP), DI
	QX4ZERO
	MOVQ R13, CX
	SHRQ $2, CX
	CMPQ CX, $2
	JLT  q50qt_one

q50qt_loop2:
	PFSB3
	Q50QW(0, Z6, Z7)
	QX4(0, Z16, Z17, Z18, Z19)
	Q50QW(88, Z6, Z7)
	QX4(256, Z20, Z21, Z22, Z23)
	ADDQ $176, SI
	ADDQ $512, DI
	SUBQ $2, CX
	CMPQ CX, $2
	JGE  q50qt_loop2

q50qt_one:
	TESTQ CX, CX
	JEQ   q50qt_tail0
	Q50QW(0, Z6, Z7)
	QX4(0, Z16, Z17, Z18, Z19)
	TESTQ $3, R13
	JEQ   q50qt_done
	ADDQ  $88, SI
	ADDQ  $256, DI
	Q50QWTAIL(Z6, Z7)
	QX4(0, Z20, Z21, Z22, Z23)
	JMP   q50qt_done

q50qt_tail0:
	TESTQ $3, R13
	JEQ   q50qt_done
	Q50QWTAIL(Z6, Z7)
	QX4(0, Z16, Z17, Z18, Z19)

q50qt_done:
	QX4SUMS
	MOVQ  oa-8(SP), AX
	MOVQ  ostride+56(FP), DX
	MOVQ  AX, CX
	MOVSS X0, (CX)
	LEAQ  (CX)(DX*4), CX
	MOVSS X1, (CX)
	LEAQ  (CX)(DX*4), CX
	MOVSS X2, (CX)
	LEAQ  (CX)(DX*4), CX
	MOVSS X3, (CX)
	ADDQ  $4, AX
	MOVQ  ob-16(SP), DX
	MOVQ  DX, oa-8(SP)
	MOVQ  AX, ob-16(SP)
	ADDQ  R11, R10
	XCHGQ R10, BX
	DECQ  R12
	JNZ   q50qt_row
	VZEROUPPER
	RET

// ---- rounding activations to Q8_0, 512-bit ---------------------------
// QuantizeActivations' arithmetic, block by block: amax by VMAXPS (no
// NaN reaches it), d = amax/127 stored by VCVTPS2PH (round to nearest
// even, as FP32ToFP16), id = 127/amax (0 when amax is 0), and the quants
// v·id rounded to nearest even by VCVTPS2DQ (MXCSR's default), as
// math.RoundToEven does. A block with a NaN or an infinity, or one so
// small that id overflows, whose rounding the Go code defines its own
// way, ends the call.

// func quantQ8_0AVX512(src *float32, nb int, dst *byte) int
// Rounds up to nb blocks of 32 floats at src to Q8_0 at dst; returns the
// blocks done.
TEXT ·quantQ8_0AVX512(SB), NOSPLIT, $0-32
	MOVQ         src+0(FP), SI
	MOVQ         nb+8(FP), CX
	MOVQ         dst+16(FP), DI
	XORQ         R8, R8
	MOVL         $0x7fffffff, AX
	VPBROADCASTD AX, Z15
	MOVL         $0x7f800000, AX
	VPBROADCASTD AX, Z14
	MOVL         $0x42fe0000, AX // 127
	VMOVD        AX, X13

qa_loop:
	CMPQ      R8, CX
	JGE       qa_done
	VMOVUPS   (SI), Z0
	VMOVUPS   64(SI), Z1
	VANDPS    Z15, Z0, Z2
	VANDPS    Z15, Z1, Z3
	VPCMPUD   $5, Z14, Z2, K1 // |v| ≥ +Inf as bits: infinite or NaN
	VPCMPUD   $5, Z14, Z3, K2
	KORTESTW  K1, K2
	JNZ       qa_done
	VMAXPS    Z3, Z2, Z2
	VEXTRACTF64X4 $1, Z2, Y3
	VMAXPS    Y3, Y2, Y2
	VEXTRACTF128 $1, Y2, X3
	VMAXPS    X3, X2, X2
	VPERMILPS $0x4e, X2, X3
	VMAXPS    X3, X2, X2
	VPERMILPS $0xb1, X2, X3
	VMAXPS    X3, X2, X2
	VDIVSS    X13, X2, X4
	VCVTPS2PH $0, X4, X5
	VPEXTRW   $0, X5, AX
	MOVW      AX, (DI)
	VXORPS    X7, X7, X7
	VUCOMISS  X7, X2
	JEQ       qa_scale
	VDIVSS    X2, X13, X7
	// An infinite id (amax below 127/MaxFloat32) makes Inf·v and Inf·0,
	// which Go's float-to-int conversion treats its own way.
	VUCOMISS  X14, X7 // X14: +Inf
	JEQ       qa_done

qa_scale:
	VBROADCASTSS X7, Z7
	VMULPS       Z7, Z0, Z0
	VMULPS       Z7, Z1, Z1
	VCVTPS2DQ    Z0, Z0
	VCVTPS2DQ    Z1, Z1
	VPMOVSDB     Z0, X0
	VPMOVSDB     Z1, X1
	VMOVDQU      X0, 2(DI)
	VMOVDQU      X1, 18(DI)
	ADDQ         $128, SI
	ADDQ         $34, DI
	INCQ         R8
	JMP          qa_loop

qa_done:
	VZEROUPPER
	MOVQ R8, ret+24(FP)
	RET

// ---- rounding activations to Q8_K, 512-bit ---------------------------
// quantQ8_K's arithmetic (ggml's quantize_row_q8_K_ref), block by block:
// max, the element of largest magnitude, from the vectors' largest and
// smallest values; iscale = -127/max; each quant min(127, iscale·v)
// rounded to nearest even by VCVTPS2DQ, as nearestInt does for values
// this small; d = 1/iscale; each 16 quants' sum in bsums. A block the Go
// code decides its own way ends the call: a NaN or an infinity, an
// infinite iscale, or +amax and -amax both in it (Go takes the first).

// Q8K_SCALE takes a block's largest value (X2, 0 or more) and smallest
// (X3, 0 or less) to its scales, both kernels alike: to zero for a block
// of zeros; to done where the Go code decides (+amax and -amax both, an
// infinite iscale); else iscale in X4 and d = 1/iscale stored at (DI).
// On the way X5 is -smallest and X4 amax; max is the label it needs
// inside, past the choice of the smallest value as max.
#define Q8K_SCALE(zero, done, max) \
	VXORPS   X6, X6, X6;           \
	VSUBSS   X3, X6, X5;           \
	VMAXSS   X5, X2, X4;           \
	VUCOMISS X6, X4;               \
	JEQ      zero;                 \
	VUCOMISS X5, X2;               \
	JEQ      done;                 \
	JA       max;                  \
	VMOVAPS  X3, X2;               \
max:;                              \
	VDIVSS   X2, X13, X4;          \
	VMOVD    X4, AX;               \
	ANDL     $0x7fffffff, AX;      \
	CMPL     AX, $0x7f800000;      \
	JAE      done;                 \
	VDIVSS   X4, X12, X5;          \
	VMOVSS   X5, (DI)

// Q8K_BSUM adds up the four int32 lanes of x (t a scratch register) and
// stores the sum as an int16 at bs(DI): a sub-block's bsum.
#define Q8K_BSUM(x, t, bs) \
	VPSHUFD $0x4e, x, t; \
	VPADDD  t, x, x;     \
	VPSHUFD $0xb1, x, t; \
	VPADDD  t, x, x;     \
	VMOVD   x, AX;       \
	MOVW    AX, bs(DI)

// Q8K_SCAN folds the 16 floats at off(SI) into the largest (Z2) and
// smallest (Z3) values and flags a NaN or infinity in K3.
#define Q8K_SCAN(off) \
	VMOVUPS off(SI), Z0;     \
	VANDPS  Z15, Z0, Z1;     \
	VPCMPUD $5, Z14, Z1, K1; \
	KORW    K1, K3, K3;      \
	VMAXPS  Z0, Z2, Z2;      \
	VMINPS  Z0, Z3, Z3

// Q8K_PUT rounds the 16 floats at off(SI) by Z7 to quants at qs(DI) and
// stores their sum as an int16 at bs(DI).
#define Q8K_PUT(off, qs, bs) \
	VMULPS        off(SI), Z7, Z0; \
	VCVTPS2DQ     Z0, Z0;          \
	VPMINSD       Z11, Z0, Z0;     \
	VPMOVSDB      Z0, X1;          \
	VMOVDQU       X1, qs(DI);      \
	VEXTRACTI64X4 $1, Z0, Y1;      \
	VPADDD        Y1, Y0, Y0;      \
	VEXTRACTI128  $1, Y0, X1;      \
	VPADDD        X1, X0, X0;      \
	Q8K_BSUM(X0, X1, bs)

// func quantQ8_KAVX512(src *float32, nb int, dst *byte) int
// Rounds up to nb blocks of 256 floats at src to Q8_K at dst; returns
// the blocks done.
TEXT ·quantQ8_KAVX512(SB), NOSPLIT, $0-32
	MOVQ         src+0(FP), SI
	MOVQ         nb+8(FP), CX
	MOVQ         dst+16(FP), DI
	XORQ         R8, R8
	MOVL         $0x7fffffff, AX
	VPBROADCASTD AX, Z15
	MOVL         $0x7f800000, AX
	VPBROADCASTD AX, Z14
	MOVL         $127, AX
	VPBROADCASTD AX, Z11
	MOVL         $0xc2fe0000, AX // -127
	VMOVD        AX, X13
	MOVL         $0x3f800000, AX // 1
	VMOVD        AX, X12

qk_loop:
	CMPQ   R8, CX
	JGE    qk_done
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	KXORW  K3, K3, K3
	Q8K_SCAN(0)
	Q8K_SCAN(64)
	Q8K_SCAN(128)
	Q8K_SCAN(192)
	Q8K_SCAN(256)
	Q8K_SCAN(320)
	Q8K_SCAN(384)
	Q8K_SCAN(448)
	Q8K_SCAN(512)
	Q8K_SCAN(576)
	Q8K_SCAN(640)
	Q8K_SCAN(704)
	Q8K_SCAN(768)
	Q8K_SCAN(832)
	Q8K_SCAN(896)
	Q8K_SCAN(960)
	KORTESTW K3, K3
	JNZ      qk_done
	VEXTRACTF64X4 $1, Z2, Y4
	VMAXPS        Y4, Y2, Y2
	VEXTRACTF128  $1, Y2, X4
	VMAXPS        X4, X2, X2
	VPERMILPS     $0x4e, X2, X4
	VMAXPS        X4, X2, X2
	VPERMILPS     $0xb1, X2, X4
	VMAXPS        X4, X2, X2
	VEXTRACTF64X4 $1, Z3, Y4
	VMINPS        Y4, Y3, Y3
	VEXTRACTF128  $1, Y3, X4
	VMINPS        X4, X3, X3
	VPERMILPS     $0x4e, X3, X4
	VMINPS        X4, X3, X3
	VPERMILPS     $0xb1, X3, X4
	VMINPS        X4, X3, X3
	// X2: the largest value (0 or more), X3: the smallest (0 or less).
	Q8K_SCALE(qk_zero, qk_done, qk_max)
	VBROADCASTSS X4, Z7
	Q8K_PUT(0, 4, 260)
	Q8K_PUT(64, 20, 262)
	Q8K_PUT(128, 36, 264)
	Q8K_PUT(192, 52, 266)
	Q8K_PUT(256, 68, 268)
	Q8K_PUT(320, 84, 270)
	Q8K_PUT(384, 100, 272)
	Q8K_PUT(448, 116, 274)
	Q8K_PUT(512, 132, 276)
	Q8K_PUT(576, 148, 278)
	Q8K_PUT(640, 164, 280)
	Q8K_PUT(704, 180, 282)
	Q8K_PUT(768, 196, 284)
	Q8K_PUT(832, 212, 286)
	Q8K_PUT(896, 228, 288)
	Q8K_PUT(960, 244, 290)
	ADDQ $1024, SI
	ADDQ $292, DI
	INCQ R8
	JMP  qk_loop

qk_zero:
	VPXORD    Z0, Z0, Z0
	VMOVDQU64 Z0, (DI)
	VMOVDQU64 Z0, 64(DI)
	VMOVDQU64 Z0, 128(DI)
	VMOVDQU64 Z0, 192(DI)
	VMOVDQU64 Z0, 228(DI)
	ADDQ      $1024, SI
	ADDQ      $292, DI
	INCQ      R8
	JMP       qk_loop

qk_done:
	VZEROUPPER
	MOVQ R8, ret+24(FP)
	RET

// ---- rounding activations to Q8_0 and Q8_K, 256-bit -----------------
// quantQ8_0AVX512's and quantQ8_KAVX512's arithmetic in AVX2, for the
// machines without AVX-512. Without VPMOVSDB the quants are packed to
// bytes by VPACKSSDW and VPACKSSWB, which work within 128-bit lanes;
// VPERMQ $0xd8 puts the lanes' halves back in order after each.

// func quantQ8_0AVX2(src *float32, nb int, dst *byte) int
// Rounds up to nb blocks of 32 floats at src to Q8_0 at dst; returns the
// blocks done.
TEXT ·quantQ8_0AVX2(SB), NOSPLIT, $0-32
	MOVQ         src+0(FP), SI
	MOVQ         nb+8(FP), CX
	MOVQ         dst+16(FP), DI
	XORQ         R8, R8
	MOVL         $0x7fffffff, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	MOVL         $0x7f7fffff, AX // the largest finite value, as bits
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14
	MOVL         $0x42fe0000, AX // 127
	VMOVD        AX, X13
	MOVL         $0x7f800000, AX // +Inf
	VMOVD        AX, X12

qb_loop:
	CMPQ      R8, CX
	JGE       qb_done
	VMOVUPS   (SI), Y0
	VMOVUPS   32(SI), Y1
	VMOVUPS   64(SI), Y2
	VMOVUPS   96(SI), Y3
	VANDPS    Y15, Y0, Y4
	VANDPS    Y15, Y1, Y5
	VANDPS    Y15, Y2, Y6
	VANDPS    Y15, Y3, Y7
	VPCMPGTD  Y14, Y4, Y8 // |v| beyond the largest finite: infinite or NaN
	VPCMPGTD  Y14, Y5, Y9
	VPOR      Y9, Y8, Y8
	VPCMPGTD  Y14, Y6, Y9
	VPOR      Y9, Y8, Y8
	VPCMPGTD  Y14, Y7, Y9
	VPOR      Y9, Y8, Y8
	VPTEST    Y8, Y8
	JNZ       qb_done
	VMAXPS    Y5, Y4, Y4
	VMAXPS    Y7, Y6, Y6
	VMAXPS    Y6, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS    X5, X4, X4
	VPERMILPS $0x4e, X4, X5
	VMAXPS    X5, X4, X4
	VPERMILPS $0xb1, X4, X5
	VMAXPS    X5, X4, X4
	VDIVSS    X13, X4, X5
	VCVTPS2PH $0, X5, X6
	VPEXTRW   $0, X6, AX
	MOVW      AX, (DI)
	VXORPS    X7, X7, X7
	VUCOMISS  X7, X4
	JEQ       qb_scale
	VDIVSS    X4, X13, X7
	VUCOMISS  X12, X7
	JEQ       qb_done // an infinite id: see quantQ8_0AVX512

qb_scale:
	VBROADCASTSS X7, Y7
	VMULPS       Y7, Y0, Y0
	VMULPS       Y7, Y1, Y1
	VMULPS       Y7, Y2, Y2
	VMULPS       Y7, Y3, Y3
	VCVTPS2DQ    Y0, Y0
	VCVTPS2DQ    Y1, Y1
	VCVTPS2DQ    Y2, Y2
	VCVTPS2DQ    Y3, Y3
	VPACKSSDW    Y1, Y0, Y0
	VPACKSSDW    Y3, Y2, Y2
	VPERMQ       $0xd8, Y0, Y0
	VPERMQ       $0xd8, Y2, Y2
	VPACKSSWB    Y2, Y0, Y0
	VPERMQ       $0xd8, Y0, Y0
	VMOVDQU      Y0, 2(DI)
	ADDQ         $128, SI
	ADDQ         $34, DI
	INCQ         R8
	JMP          qb_loop

qb_done:
	VZEROUPPER
	MOVQ R8, ret+24(FP)
	RET

// Q8K2_SCAN is Q8K_SCAN for 8 floats: the largest value in Y2, the
// smallest in Y3, a NaN or an infinity flagged in Y8.
#define Q8K2_SCAN(off) \
	VMOVUPS  off(SI), Y0;    \
	VANDPS   Y15, Y0, Y1;    \
	VPCMPGTD Y14, Y1, Y1;    \
	VPOR     Y1, Y8, Y8;     \
	VMAXPS   Y0, Y2, Y2;     \
	VMINPS   Y0, Y3, Y3

// Q8K2_PUT is Q8K_PUT for the 16 floats at lo(SI) and hi(SI).
#define Q8K2_PUT(lo, hi, qs, bs) \
	VMULPS       lo(SI), Y7, Y0; \
	VMULPS       hi(SI), Y7, Y1; \
	VCVTPS2DQ    Y0, Y0;         \
	VCVTPS2DQ    Y1, Y1;         \
	VPMINSD      Y11, Y0, Y0;    \
	VPMINSD      Y11, Y1, Y1;    \
	VPADDD       Y1, Y0, Y4;     \
	VPACKSSDW    Y1, Y0, Y0;     \
	VPERMQ       $0xd8, Y0, Y0;  \
	VEXTRACTI128 $1, Y0, X1;     \
	VPACKSSWB    X1, X0, X0;     \
	VMOVDQU      X0, qs(DI);     \
	VEXTRACTI128 $1, Y4, X5;     \
	VPADDD       X5, X4, X4;     \
	Q8K_BSUM(X4, X5, bs)

// func quantQ8_KAVX2(src *float32, nb int, dst *byte) int
// Rounds up to nb blocks of 256 floats at src to Q8_K at dst; returns
// the blocks done.
TEXT ·quantQ8_KAVX2(SB), NOSPLIT, $0-32
	MOVQ         src+0(FP), SI
	MOVQ         nb+8(FP), CX
	MOVQ         dst+16(FP), DI
	XORQ         R8, R8
	MOVL         $0x7fffffff, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	MOVL         $0x7f7fffff, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14
	MOVL         $127, AX
	VMOVD        AX, X11
	VPBROADCASTD X11, Y11
	MOVL         $0xc2fe0000, AX // -127
	VMOVD        AX, X13
	MOVL         $0x3f800000, AX // 1
	VMOVD        AX, X12

qc_loop:
	CMPQ   R8, CX
	JGE    qc_done
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VPXOR  Y8, Y8, Y8
	Q8K2_SCAN(0)
	Q8K2_SCAN(32)
	Q8K2_SCAN(64)
	Q8K2_SCAN(96)
	Q8K2_SCAN(128)
	Q8K2_SCAN(160)
	Q8K2_SCAN(192)
	Q8K2_SCAN(224)
	Q8K2_SCAN(256)
	Q8K2_SCAN(288)
	Q8K2_SCAN(320)
	Q8K2_SCAN(352)
	Q8K2_SCAN(384)
	Q8K2_SCAN(416)
	Q8K2_SCAN(448)
	Q8K2_SCAN(480)
	Q8K2_SCAN(512)
	Q8K2_SCAN(544)
	Q8K2_SCAN(576)
	Q8K2_SCAN(608)
	Q8K2_SCAN(640)
	Q8K2_SCAN(672)
	Q8K2_SCAN(704)
	Q8K2_SCAN(736)
	Q8K2_SCAN(768)
	Q8K2_SCAN(800)
	Q8K2_SCAN(832)
	Q8K2_SCAN(864)
	Q8K2_SCAN(896)
	Q8K2_SCAN(928)
	Q8K2_SCAN(960)
	Q8K2_SCAN(992)
	VPTEST Y8, Y8
	JNZ    qc_done
	VEXTRACTF128 $1, Y2, X4
	VMAXPS       X4, X2, X2
	VPERMILPS    $0x4e, X2, X4
	VMAXPS       X4, X2, X2
	VPERMILPS    $0xb1, X2, X4
	VMAXPS       X4, X2, X2
	VEXTRACTF128 $1, Y3, X4
	VMINPS       X4, X3, X3
	VPERMILPS    $0x4e, X3, X4
	VMINPS       X4, X3, X3
	VPERMILPS    $0xb1, X3, X4
	VMINPS       X4, X3, X3
	Q8K_SCALE(qc_zero, qc_done, qc_max)
	VBROADCASTSS X4, Y7
	Q8K2_PUT(0, 32, 4, 260)
	Q8K2_PUT(64, 96, 20, 262)
	Q8K2_PUT(128, 160, 36, 264)
	Q8K2_PUT(192, 224, 52, 266)
	Q8K2_PUT(256, 288, 68, 268)
	Q8K2_PUT(320, 352, 84, 270)
	Q8K2_PUT(384, 416, 100, 272)
	Q8K2_PUT(448, 480, 116, 274)
	Q8K2_PUT(512, 544, 132, 276)
	Q8K2_PUT(576, 608, 148, 278)
	Q8K2_PUT(640, 672, 164, 280)
	Q8K2_PUT(704, 736, 180, 282)
	Q8K2_PUT(768, 800, 196, 284)
	Q8K2_PUT(832, 864, 212, 286)
	Q8K2_PUT(896, 928, 228, 288)
	Q8K2_PUT(960, 992, 244, 290)
	ADDQ $1024, SI
	ADDQ $292, DI
	INCQ R8
	JMP  qc_loop

qc_zero:
	VPXOR   Y0, Y0, Y0
	VMOVDQU Y0, (DI)
	VMOVDQU Y0, 32(DI)
	VMOVDQU Y0, 64(DI)
	VMOVDQU Y0, 96(DI)
	VMOVDQU Y0, 128(DI)
	VMOVDQU Y0, 160(DI)
	VMOVDQU Y0, 192(DI)
	VMOVDQU Y0, 224(DI)
	VMOVDQU Y0, 256(DI)
	VMOVDQU Y0, 260(DI)
	ADDQ    $1024, SI
	ADDQ    $292, DI
	INCQ    R8
	JMP     qc_loop

qc_done:
	VZEROUPPER
	MOVQ R8, ret+24(FP)
	RET

// ---- F16 × four activation rows, 512-bit -----------------------------
// dotF16AVX512's arithmetic for four activation rows at once, the rows
// widened to float32 beforehand (widenF16) so that each weight vector is
// converted once and met by four FMAs from memory.

// func widenF16(dst *float32, src *byte, n int)
// Widens n halves (n a positive multiple of 16) to float32, exactly.
TEXT ·widenF16(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

wf_loop:
	VCVTPH2PS (SI), Z0
	VMOVUPS   Z0, (DI)
	ADDQ      $32, SI
	ADDQ      $64, DI
	SUBQ      $16, CX
	JNZ       wf_loop
	VZEROUPPER
	RET

// F16X4ACT adds the converted weights Z16-Z19 times the 64 floats at
// xo to accumulators a0-a3, as dotF16AVX512 does for one row.
#define F16X4ACT(xo, a0, a1, a2, a3) \
	VFMADD231PS xo, Z16, a0;       \
	VFMADD231PS 64+xo, Z17, a1;    \
	VFMADD231PS 128+xo, Z18, a2;   \
	VFMADD231PS 192+xo, Z19, a3

// F16X4SUM leaves act's sum (accumulators a0-a3) in x, as dotF16AVX512
// adds them up.
#define F16X4SUM(a0, a1, a2, a3, y0, x0, y1, x1) \
	VADDPS        a1, a0, a0; \
	VADDPS        a3, a2, a2; \
	VADDPS        a2, a0, a0; \
	VEXTRACTF64X4 $1, a0, y1; \
	VADDPS        y1, y0, y0; \
	HSUMPS(y0, x0, x1)

// func dotF16x4AVX512(w *byte, xf *float32, xstride, n int, out *float32)
// One F16 row (n halves, n a positive multiple of 64) against four
// widened activation rows xstride bytes apart.
TEXT ·dotF16x4AVX512(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ xf+8(FP), DI
	MOVQ xstride+16(FP), R8
	MOVQ n+24(FP), CX
	LEAQ (R8)(R8*2), R9
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	VXORPS Z4, Z4, Z4
	VXORPS Z5, Z5, Z5
	VXORPS Z6, Z6, Z6
	VXORPS Z7, Z7, Z7
	VXORPS Z8, Z8, Z8
	VXORPS Z9, Z9, Z9
	VXORPS Z10, Z10, Z10
	VXORPS Z11, Z11, Z11
	VXORPS Z12, Z12, Z12
	VXORPS Z13, Z13, Z13
	VXORPS Z14, Z14, Z14
	VXORPS Z15, Z15, Z15

f16x4_loop:
	PFSB2
	VCVTPH2PS (SI), Z16
	VCVTPH2PS 32(SI), Z17
	VCVTPH2PS 64(SI), Z18
	VCVTPH2PS 96(SI), Z19
	F16X4ACT(0(DI), Z0, Z1, Z2, Z3)
	F16X4ACT(0(DI)(R8*1), Z4, Z5, Z6, Z7)
	F16X4ACT(0(DI)(R8*2), Z8, Z9, Z10, Z11)
	F16X4ACT(0(DI)(R9*1), Z12, Z13, Z14, Z15)
	ADDQ $128, SI
	ADDQ $256, DI
	SUBQ $64, CX
	JNZ  f16x4_loop

	F16X4SUM(Z0, Z1, Z2, Z3, Y0, X0, Y1, X1)
	F16X4SUM(Z4, Z5, Z6, Z7, Y4, X4, Y5, X5)
	F16X4SUM(Z8, Z9, Z10, Z11, Y8, X8, Y9, X9)
	F16X4SUM(Z12, Z13, Z14, Z15, Y12, X12, Y13, X13)
	MOVQ  out+32(FP), AX
	MOVSS X0, 0(AX)
	MOVSS X4, 4(AX)
	MOVSS X8, 8(AX)
	MOVSS X12, 12(AX)
	VZEROUPPER
	RET
