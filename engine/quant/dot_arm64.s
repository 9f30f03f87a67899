//go:build arm64 && !noasm

#include "textflag.h"

// Dot-product kernels for arm64 (NEON); see simd_arm64.go for the Go side
// and doc.go for the levels. Register conventions: R0 walks the weights,
// R1 the activations (R8-R10 the other three rows of a four-row kernel:
// activation rows for VecDotMulti, weight rows for VecDotRows), R2
// counts blocks (or elements); V27-V31 hold constants, V0-V7 the
// accumulators. Every integer path is exact for all int8 inputs, -128
// included: products are summed in int32 lanes (SDOT), or formed in
// int16 lanes only as far as they cannot overflow and then widened
// (SMULL/SMLAL, SADDLP/SADALP).

// ---- encodings ------------------------------------------------------
// The Go assembler has no mnemonics for these, so they are emitted as
// words. Arguments are register numbers: d, n, m stand for Vd, Vn, Vm;
// i is a lane index.

// movi vd.2d, #0
#define ZERO(d) WORD $(0x6f00e400 | (d))

// sdot vd.4s, vn.16b, vm.16b (FEAT_DotProd)
#define SDOT(d, n, m) WORD $(0x4e809400 | (m)<<16 | (n)<<5 | (d))

// smull vd.8h, vn.8b, vm.8b
#define SMULL(d, n, m) WORD $(0x0e20c000 | (m)<<16 | (n)<<5 | (d))

// smull2 vd.8h, vn.16b, vm.16b
#define SMULL2(d, n, m) WORD $(0x4e20c000 | (m)<<16 | (n)<<5 | (d))

// smlal vd.8h, vn.8b, vm.8b
#define SMLAL(d, n, m) WORD $(0x0e208000 | (m)<<16 | (n)<<5 | (d))

// smlal2 vd.8h, vn.16b, vm.16b
#define SMLAL2(d, n, m) WORD $(0x4e208000 | (m)<<16 | (n)<<5 | (d))

// saddlp vd.4s, vn.8h
#define SADDLP(d, n) WORD $(0x4e602800 | (n)<<5 | (d))

// sadalp vd.4s, vn.8h
#define SADALP(d, n) WORD $(0x4e606800 | (n)<<5 | (d))

// sxtl vd.8h, vn.8b
#define SXTL(d, n) WORD $(0x0f08a400 | (n)<<5 | (d))

// sxtl2 vd.8h, vn.16b
#define SXTL2(d, n) WORD $(0x4f08a400 | (n)<<5 | (d))

// sxtl vd.4s, vn.4h
#define SXTLH(d, n) WORD $(0x0f10a400 | (n)<<5 | (d))

// sxtl2 vd.4s, vn.8h
#define SXTL2H(d, n) WORD $(0x4f10a400 | (n)<<5 | (d))

// mul vd.4s, vn.4s, vm.4s
#define MUL(d, n, m) WORD $(0x4ea09c00 | (m)<<16 | (n)<<5 | (d))

// mla vd.4s, vn.4s, vm.4s
#define MLA(d, n, m) WORD $(0x4ea09400 | (m)<<16 | (n)<<5 | (d))

// mla vd.4s, vn.4s, vm.s[i]
#define MLAE(d, n, m, i) WORD $(0x6f800000 | ((i)&1)<<21 | (m)<<16 | ((i)>>1)<<11 | (n)<<5 | (d))

// scvtf vd.4s, vn.4s
#define SCVTF(d, n) WORD $(0x4e21d800 | (n)<<5 | (d))

// fcvtl vd.4s, vn.4h
#define FCVTL(d, n) WORD $(0x0e217800 | (n)<<5 | (d))

// fcvtl2 vd.4s, vn.8h
#define FCVTL2(d, n) WORD $(0x4e217800 | (n)<<5 | (d))

// fadd vd.4s, vn.4s, vm.4s
#define FADD(d, n, m) WORD $(0x4e20d400 | (m)<<16 | (n)<<5 | (d))

// faddp vd.4s, vn.4s, vm.4s
#define FADDP(d, n, m) WORD $(0x6e20d400 | (m)<<16 | (n)<<5 | (d))

// faddp sd, vn.2s
#define FADDPS(d, n) WORD $(0x7e30d800 | (n)<<5 | (d))

// fmla vd.4s, vn.4s, vm.s[i]
#define FMLAE(d, n, m, i) WORD $(0x4f801000 | ((i)&1)<<21 | (m)<<16 | ((i)>>1)<<11 | (n)<<5 | (d))

// HSUM leaves the sum of the four floats of Vd in Fd, as
// (d0+d1) + (d2+d3).
#define HSUM(d) FADDP(d, d, d); FADDPS(d, d)

// HALF converts the half float at addr to float32 in f (r clobbered).
#define HALF(addr, r, f) MOVHU addr, r; FMOVS r, f; FCVTHS f, f

// ---- Q4_0 and Q8_0 × Q8_0 -------------------------------------------
// Per block: the 32 weight quants (Q4_0's nibbles minus 8, as int8) times
// the activations give Σq·y in four int32 lanes, which are converted to
// float and added, times dw·dx, to four float32 lanes (one rounding per
// lane and block: FMLA). Even blocks go to one accumulator, odd blocks to
// another (two independent chains); at the end the two are added and the
// lanes summed. The four-activation and four-weight-row kernels run the
// same operations per pair of rows, so their results are bit-identical
// to the one-row kernel's.

// The integer dot products of the weights in V12 (elements 0-15) and V13
// (16-31) with the activations in V14, V15, as four int32 lanes in V18.
// INTDOT needs FEAT_DotProd. INTQ8 widens each int8 product to int16 (at
// most 128·128) and pairs of them to int32. INTQ4 is for weights of
// magnitude at most 31: four products (at most 4·31·128 = 15872 in
// magnitude) share an int16 lane before widening.
#define INTDOT ZERO(18); SDOT(18, 12, 14); SDOT(18, 13, 15)

#define INTQ8 \
	SMULL(20, 12, 14);  \
	SMULL2(21, 12, 14); \
	SADDLP(18, 20);     \
	SADALP(18, 21);     \
	SMULL(20, 13, 15);  \
	SMULL2(21, 13, 15); \
	SADALP(18, 20);     \
	SADALP(18, 21)

#define INTQ4 \
	SMULL(20, 12, 14);  \
	SMLAL2(20, 12, 14); \
	SMLAL(20, 13, 15);  \
	SMLAL2(20, 13, 15); \
	SADDLP(18, 20)

// Q80W loads the Q8_0 weight block at wo(wp): quants in V12, V13, scale
// in F16.
#define Q80W(wo, wp) \
	HALF(wo(wp), R4, F16);   \
	ADD  $(wo+2), wp, R6;    \
	VLD1 (R6), [V12.B16, V13.B16]

// Q40W loads the Q4_0 weight block at wo(wp): low nibbles − 8 in V12,
// high nibbles − 8 in V13 (V31 = 0x0f, V30 = 0x08 bytes), scale in F16.
#define Q40W(wo, wp) \
	HALF(wo(wp), R4, F16);          \
	ADD   $(wo+2), wp, R6;          \
	VLD1  (R6), [V13.B16];          \
	VAND  V31.B16, V13.B16, V12.B16; \
	VUSHR $4, V13.B16, V13.B16;     \
	VSUB  V30.B16, V12.B16, V12.B16; \
	VSUB  V30.B16, V13.B16, V13.B16

// ACT adds the activation block at xo(xp) times the weight block to
// accumulator V<acc>.
#define ACT(INT, xo, xp, acc) \
	HALF(xo(xp), R5, F17);          \
	FMULS F16, F17, F17;            \
	ADD   $(xo+2), xp, R7;          \
	VLD1  (R7), [V14.B16, V15.B16]; \
	INT;                            \
	SCVTF(18, 18);                  \
	FMLAE(acc, 18, 17, 0)

// ONEROW is a one-row kernel's loop over R2 blocks: W loads a weight
// block of wsize bytes, ACT adds an activation block of xsize bytes; the
// result is left in F0.
#define ONEROW(W, ACT, INT, wsize, xsize, loop, tail, done) \
	VEOR V0.B16, V0.B16, V0.B16; \
	VEOR V4.B16, V4.B16, V4.B16; \
	CMP  $2, R2;                 \
	BLT  tail;                   \
loop:                            \
	W(0, R0);                    \
	ACT(INT, 0, R1, 0);          \
	W(wsize, R0);                \
	ACT(INT, xsize, R1, 4);      \
	ADD  $(2*wsize), R0;         \
	ADD  $(2*xsize), R1;         \
	SUB  $2, R2;                 \
	CMP  $2, R2;                 \
	BGE  loop;                   \
tail:                            \
	CBZ  R2, done;               \
	W(0, R0);                    \
	ACT(INT, 0, R1, 0);          \
done:                            \
	FADD(0, 0, 4);               \
	HSUM(0)

// FOURROWS is a four-activation kernel's loop (Q8_0 activations): row
// k's accumulators are V<k> (even blocks) and V<k+4> (odd blocks), its
// activations at R1, R8, R9, R10 for k = 0..3. The four sums go to
// out[0:4] (address in R11).
#define FOURROWS(W, INT, wsize, loop, tail, done) \
	VEOR V0.B16, V0.B16, V0.B16; \
	VEOR V1.B16, V1.B16, V1.B16; \
	VEOR V2.B16, V2.B16, V2.B16; \
	VEOR V3.B16, V3.B16, V3.B16; \
	VEOR V4.B16, V4.B16, V4.B16; \
	VEOR V5.B16, V5.B16, V5.B16; \
	VEOR V6.B16, V6.B16, V6.B16; \
	VEOR V7.B16, V7.B16, V7.B16; \
	CMP  $2, R2;                 \
	BLT  tail;                   \
loop:                            \
	W(0, R0);                    \
	ACT(INT, 0, R1, 0);          \
	ACT(INT, 0, R8, 1);          \
	ACT(INT, 0, R9, 2);          \
	ACT(INT, 0, R10, 3);         \
	W(wsize, R0);                \
	ACT(INT, 34, R1, 4);         \
	ACT(INT, 34, R8, 5);         \
	ACT(INT, 34, R9, 6);         \
	ACT(INT, 34, R10, 7);        \
	ADD  $(2*wsize), R0;         \
	ADD  $68, R1;                \
	ADD  $68, R8;                \
	ADD  $68, R9;                \
	ADD  $68, R10;               \
	SUB  $2, R2;                 \
	CMP  $2, R2;                 \
	BGE  loop;                   \
tail:                            \
	CBZ  R2, done;               \
	W(0, R0);                    \
	ACT(INT, 0, R1, 0);          \
	ACT(INT, 0, R8, 1);          \
	ACT(INT, 0, R9, 2);          \
	ACT(INT, 0, R10, 3);         \
done:                            \
	STORE4

// FOURWROWS is a four-weight-row kernel's loop (VecDotRows): each
// activation block is loaded once for weight rows at R0, R8, R9, R10;
// row k's accumulators are V<k> and V<k+4>, and each row sees exactly
// the operations of the one-row kernel. The four sums go to out[0:4]
// (address in R11).
#define FOURWROWS(W, INT, wsize, loop, tail, done) \
	VEOR V0.B16, V0.B16, V0.B16; \
	VEOR V1.B16, V1.B16, V1.B16; \
	VEOR V2.B16, V2.B16, V2.B16; \
	VEOR V3.B16, V3.B16, V3.B16; \
	VEOR V4.B16, V4.B16, V4.B16; \
	VEOR V5.B16, V5.B16, V5.B16; \
	VEOR V6.B16, V6.B16, V6.B16; \
	VEOR V7.B16, V7.B16, V7.B16; \
	CMP  $2, R2;                 \
	BLT  tail;                   \
loop:                            \
	ACTLOAD(0);                  \
	WROW(W, INT, 0, R0, 0);      \
	WROW(W, INT, 0, R8, 1);      \
	WROW(W, INT, 0, R9, 2);      \
	WROW(W, INT, 0, R10, 3);     \
	ACTLOAD(34);                 \
	WROW(W, INT, wsize, R0, 4);  \
	WROW(W, INT, wsize, R8, 5);  \
	WROW(W, INT, wsize, R9, 6);  \
	WROW(W, INT, wsize, R10, 7); \
	ADD  $(2*wsize), R0;         \
	ADD  $(2*wsize), R8;         \
	ADD  $(2*wsize), R9;         \
	ADD  $(2*wsize), R10;        \
	ADD  $68, R1;                \
	SUB  $2, R2;                 \
	CMP  $2, R2;                 \
	BGE  loop;                   \
tail:                            \
	CBZ  R2, done;               \
	ACTLOAD(0);                  \
	WROW(W, INT, 0, R0, 0);      \
	WROW(W, INT, 0, R8, 1);      \
	WROW(W, INT, 0, R9, 2);      \
	WROW(W, INT, 0, R10, 3);     \
done:                            \
	STORE4

// ACTLOAD loads the Q8_0 activation block at xo(R1): quants in V14, V15,
// scale in F17.
#define ACTLOAD(xo) \
	HALF(xo(R1), R5, F17); \
	ADD  $(xo+2), R1, R7;  \
	VLD1 (R7), [V14.B16, V15.B16]

// WROW adds the weight block at wo(wp) times the loaded activation block
// to accumulator V<acc>: the operations of ACT, with dw·dx in F19.
#define WROW(W, INT, wo, wp, acc) \
	W(wo, wp);           \
	FMULS F16, F17, F19; \
	INT;                 \
	SCVTF(18, 18);       \
	FMLAE(acc, 18, 19, 0)

// STORE4 adds each row's two accumulators, sums their lanes and writes
// the four sums to out[0:4] (address in R11).
#define STORE4 \
	FADD(0, 0, 4);    \
	FADD(1, 1, 5);    \
	FADD(2, 2, 6);    \
	FADD(3, 3, 7);    \
	HSUM(0);          \
	HSUM(1);          \
	HSUM(2);          \
	HSUM(3);          \
	FMOVS F0, 0(R11); \
	FMOVS F1, 4(R11); \
	FMOVS F2, 8(R11); \
	FMOVS F3, 12(R11)

// FOURWROWSARGS loads a four-weight-row kernel's arguments.
#define FOURWROWSARGS \
	MOVD w+0(FP), R0;       \
	MOVD wstride+8(FP), R3; \
	MOVD x+16(FP), R1;      \
	MOVD nb+24(FP), R2;     \
	MOVD out+32(FP), R11;   \
	ADD  R3, R0, R8;        \
	ADD  R3, R8, R9;        \
	ADD  R3, R9, R10

// ONEROWARGS loads a one-row kernel's arguments.
#define ONEROWARGS \
	MOVD w+0(FP), R0; \
	MOVD x+8(FP), R1; \
	MOVD nb+16(FP), R2

// FOURROWSARGS loads a four-activation kernel's arguments.
#define FOURROWSARGS \
	MOVD w+0(FP), R0;      \
	MOVD x+8(FP), R1;      \
	MOVD stride+16(FP), R3; \
	MOVD nb+24(FP), R2;    \
	MOVD out+32(FP), R11;  \
	ADD  R3, R1, R8;       \
	ADD  R3, R8, R9;       \
	ADD  R3, R9, R10

// func dotQ4_0NEON(w, x *byte, nb int) float32
TEXT ·dotQ4_0NEON(SB), NOSPLIT, $0-28
	ONEROWARGS
	VMOVI $15, V31.B16
	VMOVI $8, V30.B16
	ONEROW(Q40W, ACT, INTQ4, 18, 34, q40n_loop, q40n_tail, q40n_done)
	FMOVS F0, ret+24(FP)
	RET

// func dotQ4_0DOT(w, x *byte, nb int) float32
TEXT ·dotQ4_0DOT(SB), NOSPLIT, $0-28
	ONEROWARGS
	VMOVI $15, V31.B16
	VMOVI $8, V30.B16
	ONEROW(Q40W, ACT, INTDOT, 18, 34, q40d_loop, q40d_tail, q40d_done)
	FMOVS F0, ret+24(FP)
	RET

// func dotQ8_0NEON(w, x *byte, nb int) float32
TEXT ·dotQ8_0NEON(SB), NOSPLIT, $0-28
	ONEROWARGS
	ONEROW(Q80W, ACT, INTQ8, 34, 34, q80n_loop, q80n_tail, q80n_done)
	FMOVS F0, ret+24(FP)
	RET

// func dotQ8_0DOT(w, x *byte, nb int) float32
TEXT ·dotQ8_0DOT(SB), NOSPLIT, $0-28
	ONEROWARGS
	ONEROW(Q80W, ACT, INTDOT, 34, 34, q80d_loop, q80d_tail, q80d_done)
	FMOVS F0, ret+24(FP)
	RET

// func dotQ4_0x4NEON(w, x *byte, stride, nb int, out *float32)
TEXT ·dotQ4_0x4NEON(SB), NOSPLIT, $0-40
	FOURROWSARGS
	VMOVI $15, V31.B16
	VMOVI $8, V30.B16
	FOURROWS(Q40W, INTQ4, 18, q40n4_loop, q40n4_tail, q40n4_done)
	RET

// func dotQ4_0x4DOT(w, x *byte, stride, nb int, out *float32)
TEXT ·dotQ4_0x4DOT(SB), NOSPLIT, $0-40
	FOURROWSARGS
	VMOVI $15, V31.B16
	VMOVI $8, V30.B16
	FOURROWS(Q40W, INTDOT, 18, q40d4_loop, q40d4_tail, q40d4_done)
	RET

// func dotQ8_0x4NEON(w, x *byte, stride, nb int, out *float32)
TEXT ·dotQ8_0x4NEON(SB), NOSPLIT, $0-40
	FOURROWSARGS
	FOURROWS(Q80W, INTQ8, 34, q80n4_loop, q80n4_tail, q80n4_done)
	RET

// func dotQ8_0x4DOT(w, x *byte, stride, nb int, out *float32)
TEXT ·dotQ8_0x4DOT(SB), NOSPLIT, $0-40
	FOURROWSARGS
	FOURROWS(Q80W, INTDOT, 34, q80d4_loop, q80d4_tail, q80d4_done)
	RET

// func dotQ4_0r4NEON(w *byte, wstride int, x *byte, nb int, out *float32)
TEXT ·dotQ4_0r4NEON(SB), NOSPLIT, $0-40
	FOURWROWSARGS
	VMOVI $15, V31.B16
	VMOVI $8, V30.B16
	FOURWROWS(Q40W, INTQ4, 18, q40nr_loop, q40nr_tail, q40nr_done)
	RET

// func dotQ4_0r4DOT(w *byte, wstride int, x *byte, nb int, out *float32)
TEXT ·dotQ4_0r4DOT(SB), NOSPLIT, $0-40
	FOURWROWSARGS
	VMOVI $15, V31.B16
	VMOVI $8, V30.B16
	FOURWROWS(Q40W, INTDOT, 18, q40dr_loop, q40dr_tail, q40dr_done)
	RET

// func dotQ8_0r4NEON(w *byte, wstride int, x *byte, nb int, out *float32)
TEXT ·dotQ8_0r4NEON(SB), NOSPLIT, $0-40
	FOURWROWSARGS
	FOURWROWS(Q80W, INTQ8, 34, q80nr_loop, q80nr_tail, q80nr_done)
	RET

// func dotQ8_0r4DOT(w *byte, wstride int, x *byte, nb int, out *float32)
TEXT ·dotQ8_0r4DOT(SB), NOSPLIT, $0-40
	FOURWROWSARGS
	FOURWROWS(Q80W, INTDOT, 34, q80dr_loop, q80dr_tail, q80dr_done)
	RET

// ---- Q5_0 and IQ4_NL × Q8_0 -----------------------------------------
// The same loops as Q4_0's with other weight decoders. Q5_0's quants
// minus 16 lie in [-16, 15], so INTQ4's int16 lanes hold four products
// (at most 4·16·128); IQ4_NL's codebook values reach 127 and need INTQ8.

// q5idx selects, per element of a 16-element half, the byte of qh that
// holds its fifth bit (bytes 0-1 for elements 0-15, 2-3 for 16-31);
// q5bit is each element's bit within that byte.
DATA q5idx<>+0(SB)/8, $0x0000000000000000
DATA q5idx<>+8(SB)/8, $0x0101010101010101
DATA q5idx<>+16(SB)/8, $0x0202020202020202
DATA q5idx<>+24(SB)/8, $0x0303030303030303
GLOBL q5idx<>(SB), RODATA|NOPTR, $32

DATA q5bit<>+0(SB)/8, $0x8040201008040201
DATA q5bit<>+8(SB)/8, $0x8040201008040201
GLOBL q5bit<>(SB), RODATA|NOPTR, $16

// Q50SETUP loads Q5_0's constants: V31 = 0x0f, V30 = 0x10 bytes, V28,
// V29 = q5idx, V27 = q5bit.
#define Q50SETUP \
	VMOVI $15, V31.B16;               \
	VMOVI $16, V30.B16;               \
	MOVD  $q5idx<>(SB), R4;           \
	VLD1  (R4), [V28.B16, V29.B16];   \
	MOVD  $q5bit<>(SB), R4;           \
	VLD1  (R4), [V27.B16]

// Q50W loads the Q5_0 block at wo(wp) (d, qh, qs): q − 16 in V12
// (elements 0-15) and V13 (16-31), scale in F16; V22, V23 clobbered.
#define Q50W(wo, wp) \
	HALF(wo(wp), R4, F16);             \
	MOVWU  wo+2(wp), R4;               \
	VMOV   R4, V22.S[0];               \
	VTBL   V28.B16, [V22.B16], V23.B16; \
	VTBL   V29.B16, [V22.B16], V22.B16; \
	VCMTST V27.B16, V23.B16, V23.B16;  \
	VCMTST V27.B16, V22.B16, V22.B16;  \
	VAND   V30.B16, V23.B16, V23.B16;  \
	VAND   V30.B16, V22.B16, V22.B16;  \
	ADD    $(wo+6), wp, R6;            \
	VLD1   (R6), [V13.B16];            \
	VAND   V31.B16, V13.B16, V12.B16;  \
	VUSHR  $4, V13.B16, V13.B16;       \
	VORR   V23.B16, V12.B16, V12.B16;  \
	VORR   V22.B16, V13.B16, V13.B16;  \
	VSUB   V30.B16, V12.B16, V12.B16;  \
	VSUB   V30.B16, V13.B16, V13.B16

// IQ4NLSETUP loads V31 = 0x0f bytes and the codebook into V30.
#define IQ4NLSETUP \
	VMOVI $15, V31.B16;              \
	MOVD  $·kvaluesIQ4NL(SB), R4;    \
	VLD1  (R4), [V30.B16]

// IQ4NLW loads the IQ4_NL block at wo(wp): codebook values in V12, V13,
// scale in F16.
#define IQ4NLW(wo, wp) \
	HALF(wo(wp), R4, F16);            \
	ADD   $(wo+2), wp, R6;            \
	VLD1  (R6), [V13.B16];            \
	VAND  V31.B16, V13.B16, V12.B16;  \
	VUSHR $4, V13.B16, V13.B16;       \
	VTBL  V12.B16, [V30.B16], V12.B16; \
	VTBL  V13.B16, [V30.B16], V13.B16

// func dotQ5_0NEON(w, x *byte, nb int) float32
TEXT ·dotQ5_0NEON(SB), NOSPLIT, $0-28
	ONEROWARGS
	Q50SETUP
	ONEROW(Q50W, ACT, INTQ4, 22, 34, q50n_loop, q50n_tail, q50n_done)
	FMOVS F0, ret+24(FP)
	RET

// func dotQ5_0DOT(w, x *byte, nb int) float32
TEXT ·dotQ5_0DOT(SB), NOSPLIT, $0-28
	ONEROWARGS
	Q50SETUP
	ONEROW(Q50W, ACT, INTDOT, 22, 34, q50d_loop, q50d_tail, q50d_done)
	FMOVS F0, ret+24(FP)
	RET

// func dotQ5_0x4NEON(w, x *byte, stride, nb int, out *float32)
TEXT ·dotQ5_0x4NEON(SB), NOSPLIT, $0-40
	FOURROWSARGS
	Q50SETUP
	FOURROWS(Q50W, INTQ4, 22, q50n4_loop, q50n4_tail, q50n4_done)
	RET

// func dotQ5_0x4DOT(w, x *byte, stride, nb int, out *float32)
TEXT ·dotQ5_0x4DOT(SB), NOSPLIT, $0-40
	FOURROWSARGS
	Q50SETUP
	FOURROWS(Q50W, INTDOT, 22, q50d4_loop, q50d4_tail, q50d4_done)
	RET

// func dotQ5_0r4NEON(w *byte, wstride int, x *byte, nb int, out *float32)
TEXT ·dotQ5_0r4NEON(SB), NOSPLIT, $0-40
	FOURWROWSARGS
	Q50SETUP
	FOURWROWS(Q50W, INTQ4, 22, q50nr_loop, q50nr_tail, q50nr_done)
	RET

// func dotQ5_0r4DOT(w *byte, wstride int, x *byte, nb int, out *float32)
TEXT ·dotQ5_0r4DOT(SB), NOSPLIT, $0-40
	FOURWROWSARGS
	Q50SETUP
	FOURWROWS(Q50W, INTDOT, 22, q50dr_loop, q50dr_tail, q50dr_done)
	RET

// func dotIQ4_NLNEON(w, x *byte, nb int) float32
TEXT ·dotIQ4_NLNEON(SB), NOSPLIT, $0-28
	ONEROWARGS
	IQ4NLSETUP
	ONEROW(IQ4NLW, ACT, INTQ8, 18, 34, iq4n_loop, iq4n_tail, iq4n_done)
	FMOVS F0, ret+24(FP)
	RET

// func dotIQ4_NLDOT(w, x *byte, nb int) float32
TEXT ·dotIQ4_NLDOT(SB), NOSPLIT, $0-28
	ONEROWARGS
	IQ4NLSETUP
	ONEROW(IQ4NLW, ACT, INTDOT, 18, 34, iq4d_loop, iq4d_tail, iq4d_done)
	FMOVS F0, ret+24(FP)
	RET

// ---- Q4_1 and Q5_1 × Q8_1 -------------------------------------------
// As Q4_0 with unsigned quants (at most 31, so INTQ4's lanes still hold
// four products) and 36-byte Q8_1 activations (d, s, qs); each block
// adds its min term m·s (rounded once, as the generic code does) to lane
// 0 of the accumulator after dw·dx·Σq·y.

// ACT1 adds the Q8_1 block at xo(xp) times the weight block (scale in
// F16, min in F24) to accumulator V<acc>; V19 clobbered.
#define ACT1(INT, xo, xp, acc) \
	HALF(xo(xp), R5, F17);          \
	FMULS F16, F17, F17;            \
	HALF(xo+2(xp), R5, F19);        \
	FMULS F24, F19, F19;            \
	ADD   $(xo+4), xp, R7;          \
	VLD1  (R7), [V14.B16, V15.B16]; \
	INT;                            \
	SCVTF(18, 18);                  \
	FMLAE(acc, 18, 17, 0);          \
	FADD(acc, acc, 19)

// Q41W loads the Q4_1 block at wo(wp) (d, m, qs): nibbles in V12
// (elements 0-15) and V13 (16-31), d in F16, m in F24.
#define Q41W(wo, wp) \
	HALF(wo(wp), R4, F16);          \
	HALF(wo+2(wp), R4, F24);        \
	ADD   $(wo+4), wp, R6;          \
	VLD1  (R6), [V13.B16];          \
	VAND  V31.B16, V13.B16, V12.B16; \
	VUSHR $4, V13.B16, V13.B16

// Q51W loads the Q5_1 block at wo(wp) (d, m, qh, qs): 5-bit quants in
// V12, V13, d in F16, m in F24 (constants as for Q5_0; V22, V23
// clobbered).
#define Q51W(wo, wp) \
	HALF(wo(wp), R4, F16);             \
	HALF(wo+2(wp), R4, F24);           \
	MOVWU  wo+4(wp), R4;               \
	VMOV   R4, V22.S[0];               \
	VTBL   V28.B16, [V22.B16], V23.B16; \
	VTBL   V29.B16, [V22.B16], V22.B16; \
	VCMTST V27.B16, V23.B16, V23.B16;  \
	VCMTST V27.B16, V22.B16, V22.B16;  \
	VAND   V30.B16, V23.B16, V23.B16;  \
	VAND   V30.B16, V22.B16, V22.B16;  \
	ADD    $(wo+8), wp, R6;            \
	VLD1   (R6), [V13.B16];            \
	VAND   V31.B16, V13.B16, V12.B16;  \
	VUSHR  $4, V13.B16, V13.B16;       \
	VORR   V23.B16, V12.B16, V12.B16;  \
	VORR   V22.B16, V13.B16, V13.B16

// func dotQ4_1NEON(w, x *byte, nb int) float32
TEXT ·dotQ4_1NEON(SB), NOSPLIT, $0-28
	ONEROWARGS
	VMOVI $15, V31.B16
	ONEROW(Q41W, ACT1, INTQ4, 20, 36, q41n_loop, q41n_tail, q41n_done)
	FMOVS F0, ret+24(FP)
	RET

// func dotQ4_1DOT(w, x *byte, nb int) float32
TEXT ·dotQ4_1DOT(SB), NOSPLIT, $0-28
	ONEROWARGS
	VMOVI $15, V31.B16
	ONEROW(Q41W, ACT1, INTDOT, 20, 36, q41d_loop, q41d_tail, q41d_done)
	FMOVS F0, ret+24(FP)
	RET

// func dotQ5_1NEON(w, x *byte, nb int) float32
TEXT ·dotQ5_1NEON(SB), NOSPLIT, $0-28
	ONEROWARGS
	Q50SETUP
	ONEROW(Q51W, ACT1, INTQ4, 24, 36, q51n_loop, q51n_tail, q51n_done)
	FMOVS F0, ret+24(FP)
	RET

// func dotQ5_1DOT(w, x *byte, nb int) float32
TEXT ·dotQ5_1DOT(SB), NOSPLIT, $0-28
	ONEROWARGS
	Q50SETUP
	ONEROW(Q51W, ACT1, INTDOT, 24, 36, q51d_loop, q51d_tail, q51d_done)
	FMOVS F0, ret+24(FP)
	RET

// ---- K-quants × Q8_K ------------------------------------------------
// These reproduce the generic arithmetic bit for bit: each super-block's
// integer sums are exact (in int32 lanes, reduced at the end of the
// block), and the float combination is done in scalar registers with the
// generic code's operations in its order (FMULS, FSUBS, FADDS: no fused
// multiply-add).

// The integer dot products of 32 unsigned quants (at most 63) in Va, Vb
// with the activations in Vya, Vyb (K32), or of 16 signed quants (at most
// 32 in magnitude) in Va with Vya (K16), as four int32 lanes in Vd. The
// NEON forms let four (K32) or two (K16) products, each at most 63·128 in
// magnitude, share an int16 lane, with V27 as scratch.
#define K32DOT(d, a, b, ya, yb) ZERO(d); SDOT(d, a, ya); SDOT(d, b, yb)

#define K32NEON(d, a, b, ya, yb) \
	SMULL(27, a, ya);  \
	SMLAL2(27, a, ya); \
	SMLAL(27, b, yb);  \
	SMLAL2(27, b, yb); \
	SADDLP(d, 27)

#define K16DOT(d, a, ya) ZERO(d); SDOT(d, a, ya)

#define K16NEON(d, a, ya) \
	SMULL(27, a, ya);  \
	SMLAL2(27, a, ya); \
	SADDLP(d, 27)

// K4SCALES unpacks the 6-bit scales and mins of the Q4_K block at R0
// (ggml's get_scale_min_k4, four at a time) into int32 lanes: sc0-sc3 in
// V23, sc4-sc7 in V24, m0-m3 in V25, m4-m7 in V26 (R4-R9 clobbered).
#define K4SCALES \
	MOVWU 4(R0), R4;                  \
	MOVWU 8(R0), R5;                  \
	MOVWU 12(R0), R6;                 \
	LSRW  $4, R6, R7;                 \
	ANDW  $0x0f0f0f0f, R7;            \
	LSRW  $2, R5, R8;                 \
	ANDW  $0x30303030, R8;            \
	ORRW  R8, R7;                     \
	ANDW  $0x3f3f3f3f, R5, R8;        \
	ANDW  $0x0f0f0f0f, R6;            \
	LSRW  $2, R4, R9;                 \
	ANDW  $0x30303030, R9;            \
	ORRW  R9, R6;                     \
	ANDW  $0x3f3f3f3f, R4;            \
	ORR   R6<<32, R4, R4;             \
	ORR   R7<<32, R8, R8;             \
	VMOV  R4, V20.D[0];               \
	VMOV  R8, V20.D[1];               \
	VUXTL  V20.B8, V21.H8;            \
	VUXTL2 V20.B16, V22.H8;           \
	VUXTL  V21.H4, V23.S4;            \
	VUXTL2 V21.H8, V24.S4;            \
	VUXTL  V22.H4, V25.S4;            \
	VUXTL2 V22.H8, V26.S4

// K4MINS leaves summs = Σ m_k·(bsum[2k] + bsum[2k+1]) in R12, the pair
// sums widened to int32 first.
#define K4MINS \
	ADD   $260, R1, R7;           \
	VLD1  (R7), [V16.H8, V17.H8]; \
	SADDLP(16, 16);               \
	SADDLP(17, 17);               \
	MUL(16, 16, 25);              \
	MLA(16, 17, 26);              \
	VADDV V16.S4, V16;            \
	VMOV  V16.S[0], R12

// K4FLOATAT: sumf (F0) += float32(d·dy·isum) − float32(dmin·dy·summs),
// with isum the sum of V19's lanes and summs in R12, rounded as the
// generic code rounds it; d and dmin are the halves at off(R0), dy the
// float32 at R1.
#define K4FLOATAT(off) \
	VADDV   V19.S4, V19;   \
	VMOV    V19.S[0], R13; \
	HALF(off(R0), R4, F14);  \
	HALF(off+2(R0), R5, F15); \
	FMOVS   (R1), F16;     \
	FMULS   F16, F14, F14; \
	FMULS   F16, F15, F15; \
	SCVTFWS R13, F17;      \
	FMULS   F17, F14, F14; \
	SCVTFWS R12, F17;      \
	FMULS   F17, F15, F15; \
	FSUBS   F15, F14, F14; \
	FADDS   F14, F0, F0

#define K4FLOAT K4FLOATAT(0)

// DFLOATAT: sumf (F0) += float32(d·dy·float32(isum)), isum the sum of
// V19's lanes, d the half at off(R0), dy the float32 at R1 (Q3_K, Q6_K,
// IQ4_XS).
#define DFLOATAT(off) \
	VADDV   V19.S4, V19;        \
	VMOV    V19.S[0], R13;      \
	HALF(off(R0), R4, F14);     \
	FMOVS   (R1), F15;          \
	FMULS   F15, F14, F14;      \
	SCVTFWS R13, F15;           \
	FMULS   F15, F14, F14;      \
	FADDS   F14, F0, F0

// Q4KSUB adds sc[2j]·Σq·y and sc[2j+1]·Σq·y of sub-blocks 2j, 2j+1 to
// the int32 lanes of V19: quants (32 bytes) at R6, activations (64
// bytes) at R7, both advanced; the scales are lanes i, i+1 of V<sv>.
#define Q4KSUB(K32, sv, i) \
	VLD1.P 32(R6), [V2.B16, V3.B16];                 \
	VLD1.P 64(R7), [V4.B16, V5.B16, V6.B16, V7.B16]; \
	VAND   V31.B16, V2.B16, V8.B16;                  \
	VAND   V31.B16, V3.B16, V9.B16;                  \
	VUSHR  $4, V2.B16, V10.B16;                      \
	VUSHR  $4, V3.B16, V11.B16;                      \
	K32(12, 8, 9, 4, 5);                             \
	K32(13, 10, 11, 6, 7);                           \
	MLAE(19, 12, sv, i);                             \
	MLAE(19, 13, sv, i+1)

// Q4KBODY is the Q4_K kernel's loop over R2 super-blocks: sumf in F0.
#define Q4KBODY(K32, loop) \
	VMOVI $15, V31.B16;          \
	VEOR  V0.B16, V0.B16, V0.B16; \
loop:                            \
	K4SCALES;                    \
	K4MINS;                      \
	ZERO(19);                    \
	ADD   $16, R0, R6;           \
	ADD   $4, R1, R7;            \
	Q4KSUB(K32, 23, 0);          \
	Q4KSUB(K32, 23, 2);          \
	Q4KSUB(K32, 24, 0);          \
	Q4KSUB(K32, 24, 2);          \
	K4FLOAT;                     \
	ADD   $144, R0;              \
	ADD   $292, R1;              \
	SUB   $1, R2;                \
	CBNZ  R2, loop

// func dotQ4_KNEON(w, x *byte, nb int) float32
TEXT ·dotQ4_KNEON(SB), NOSPLIT, $0-28
	ONEROWARGS
	Q4KBODY(K32NEON, q4kn_loop)
	FMOVS F0, ret+24(FP)
	RET

// func dotQ4_KDOT(w, x *byte, nb int) float32
TEXT ·dotQ4_KDOT(SB), NOSPLIT, $0-28
	ONEROWARGS
	Q4KBODY(K32DOT, q4kd_loop)
	FMOVS F0, ret+24(FP)
	RET

// Q5_K is Q4_K with a fifth bit per quant: bits 2j and 2j+1 of the qh
// bytes (held in V14, V15 and shifted down by two per pair of
// sub-blocks) go to bit 4 of sub-blocks 2j, 2j+1 (V30 = 0x10 bytes).
#define Q5KSUB(K32, sv, i) \
	VLD1.P 32(R6), [V2.B16, V3.B16];                 \
	VLD1.P 64(R7), [V4.B16, V5.B16, V6.B16, V7.B16]; \
	VAND   V31.B16, V2.B16, V8.B16;                  \
	VAND   V31.B16, V3.B16, V9.B16;                  \
	VUSHR  $4, V2.B16, V10.B16;                      \
	VUSHR  $4, V3.B16, V11.B16;                      \
	VSHL   $4, V14.B16, V12.B16;                     \
	VAND   V30.B16, V12.B16, V12.B16;                \
	VORR   V12.B16, V8.B16, V8.B16;                  \
	VSHL   $4, V15.B16, V12.B16;                     \
	VAND   V30.B16, V12.B16, V12.B16;                \
	VORR   V12.B16, V9.B16, V9.B16;                  \
	VSHL   $3, V14.B16, V12.B16;                     \
	VAND   V30.B16, V12.B16, V12.B16;                \
	VORR   V12.B16, V10.B16, V10.B16;                \
	VSHL   $3, V15.B16, V12.B16;                     \
	VAND   V30.B16, V12.B16, V12.B16;                \
	VORR   V12.B16, V11.B16, V11.B16;                \
	VUSHR  $2, V14.B16, V14.B16;                     \
	VUSHR  $2, V15.B16, V15.B16;                     \
	K32(12, 8, 9, 4, 5);                             \
	K32(13, 10, 11, 6, 7);                           \
	MLAE(19, 12, sv, i);                             \
	MLAE(19, 13, sv, i+1)

// Q5KBODY is the Q5_K kernel's loop over R2 super-blocks: sumf in F0.
#define Q5KBODY(K32, loop) \
	VMOVI $15, V31.B16;           \
	VMOVI $16, V30.B16;           \
	VEOR  V0.B16, V0.B16, V0.B16; \
loop:                             \
	K4SCALES;                     \
	K4MINS;                       \
	ZERO(19);                     \
	ADD   $16, R0, R6;            \
	VLD1.P 32(R6), [V14.B16, V15.B16]; \
	ADD   $4, R1, R7;             \
	Q5KSUB(K32, 23, 0);           \
	Q5KSUB(K32, 23, 2);           \
	Q5KSUB(K32, 24, 0);           \
	Q5KSUB(K32, 24, 2);           \
	K4FLOAT;                      \
	ADD   $176, R0;               \
	ADD   $292, R1;               \
	SUB   $1, R2;                 \
	CBNZ  R2, loop

// func dotQ5_KNEON(w, x *byte, nb int) float32
TEXT ·dotQ5_KNEON(SB), NOSPLIT, $0-28
	ONEROWARGS
	Q5KBODY(K32NEON, q5kn_loop)
	FMOVS F0, ret+24(FP)
	RET

// func dotQ5_KDOT(w, x *byte, nb int) float32
TEXT ·dotQ5_KDOT(SB), NOSPLIT, $0-28
	ONEROWARGS
	Q5KBODY(K32DOT, q5kd_loop)
	FMOVS F0, ret+24(FP)
	RET

// Q6_K: the 6-bit quants q of group g (16 elements) pair with activations
// 16g..16g+15 and scale sc[g], so isum = Σ_g sc[g]·Σ(q−32)·y. The quants
// minus 32 are int8 in [-32, 31].

// Q6KQ1-Q6KQ4 assemble q − 32 in V17 from low bits in l and high bits in
// h (V31 = 0x0f, V29 = 0x30, V28 = 0x20 bytes; V18 clobbered):
// q1 = l&15 | (h&3)<<4, q2 = l&15 | (h>>2&3)<<4, q3 = l>>4 | (h>>4&3)<<4,
// q4 = l>>4 | (h>>6)<<4.
#define Q6KQ1(l, h) \
	VAND  V31.B16, l, V17.B16;        \
	VSHL  $4, h, V18.B16;             \
	VAND  V29.B16, V18.B16, V18.B16;  \
	VORR  V18.B16, V17.B16, V17.B16;  \
	VSUB  V28.B16, V17.B16, V17.B16

#define Q6KQ2(l, h) \
	VAND  V31.B16, l, V17.B16;        \
	VSHL  $2, h, V18.B16;             \
	VAND  V29.B16, V18.B16, V18.B16;  \
	VORR  V18.B16, V17.B16, V17.B16;  \
	VSUB  V28.B16, V17.B16, V17.B16

#define Q6KQ3(l, h) \
	VUSHR $4, l, V17.B16;             \
	VAND  V29.B16, h, V18.B16;        \
	VORR  V18.B16, V17.B16, V17.B16;  \
	VSUB  V28.B16, V17.B16, V17.B16

#define Q6KQ4(l, h) \
	VUSHR $4, l, V17.B16;             \
	VUSHR $2, h, V18.B16;             \
	VAND  V29.B16, V18.B16, V18.B16;  \
	VORR  V18.B16, V17.B16, V17.B16;  \
	VSUB  V28.B16, V17.B16, V17.B16

// Q6KGRP adds sc·Σ(q−32)·y of the group in V17 with the activations in
// V<y> and the scale at lane i of V<sv> to V19.
#define Q6KGRP(K16, y, sv, i) \
	K16(16, 17, y); \
	MLAE(19, 16, sv, i)

// Q6KHALF adds one 128-element half: low bits (64 bytes) at R6, high
// bits (32 bytes) at R5, activations (128 bytes) at R7, all advanced;
// the half's eight scales are in V<sa> (0-3) and V<sb> (4-7).
#define Q6KHALF(K16, sa, sb) \
	VLD1.P 64(R6), [V2.B16, V3.B16, V4.B16, V5.B16];     \
	VLD1.P 32(R5), [V6.B16, V7.B16];                     \
	VLD1.P 64(R7), [V8.B16, V9.B16, V10.B16, V11.B16];   \
	VLD1.P 64(R7), [V12.B16, V13.B16, V14.B16, V15.B16]; \
	Q6KQ1(V2.B16, V6.B16);                               \
	Q6KGRP(K16, 8, sa, 0);                               \
	Q6KQ1(V3.B16, V7.B16);                               \
	Q6KGRP(K16, 9, sa, 1);                               \
	Q6KQ2(V4.B16, V6.B16);                               \
	Q6KGRP(K16, 10, sa, 2);                              \
	Q6KQ2(V5.B16, V7.B16);                               \
	Q6KGRP(K16, 11, sa, 3);                              \
	Q6KQ3(V2.B16, V6.B16);                               \
	Q6KGRP(K16, 12, sb, 0);                              \
	Q6KQ3(V3.B16, V7.B16);                               \
	Q6KGRP(K16, 13, sb, 1);                              \
	Q6KQ4(V4.B16, V6.B16);                               \
	Q6KGRP(K16, 14, sb, 2);                              \
	Q6KQ4(V5.B16, V7.B16);                               \
	Q6KGRP(K16, 15, sb, 3)

// Q6KBODY is the Q6_K kernel's loop over R2 super-blocks: sumf in F0.
#define Q6KBODY(K16, loop) \
	VMOVI $15, V31.B16;           \
	VMOVI $48, V29.B16;           \
	VMOVI $32, V28.B16;           \
	VEOR  V0.B16, V0.B16, V0.B16; \
loop:                             \
	ADD   $192, R0, R6;           \
	VLD1  (R6), [V20.B16];        \
	SXTL(21, 20);                 \
	SXTL2(22, 20);                \
	SXTLH(23, 21);                \
	SXTL2H(24, 21);               \
	SXTLH(25, 22);                \
	SXTL2H(26, 22);               \
	ZERO(19);                     \
	MOVD  R0, R6;                 \
	ADD   $128, R0, R5;           \
	ADD   $4, R1, R7;             \
	Q6KHALF(K16, 23, 24);         \
	Q6KHALF(K16, 25, 26);         \
	DFLOATAT(208);                \
	ADD   $210, R0;               \
	ADD   $292, R1;               \
	SUB   $1, R2;                 \
	CBNZ  R2, loop

// func dotQ6_KNEON(w, x *byte, nb int) float32
TEXT ·dotQ6_KNEON(SB), NOSPLIT, $0-28
	ONEROWARGS
	Q6KBODY(K16NEON, q6kn_loop)
	FMOVS F0, ret+24(FP)
	RET

// func dotQ6_KDOT(w, x *byte, nb int) float32
TEXT ·dotQ6_KDOT(SB), NOSPLIT, $0-28
	ONEROWARGS
	Q6KBODY(K16DOT, q6kd_loop)
	FMOVS F0, ret+24(FP)
	RET

// ---- Q2_K, Q3_K and IQ4_XS ------------------------------------------

// Q2_K: group g (16 elements, activations 16g..16g+15) has the 2-bit
// quants (qs[32n+16h+l] >> 2k) & 3 for g = 8n+2k+h, scale sc[g]&15 and
// min sc[g]>>4; isum = Σ_g (sc[g]&15)·Σq·y, summs = Σ_g (sc[g]>>4)·bsum[g].

// smull vd.4s, vn.4h, vm.4h; smlal vd.4s, vn.4h, vm.4h; smlal2 vd.4s,
// vn.8h, vm.8h
#define SMULLH(d, n, m) WORD $(0x0e60c000 | (m)<<16 | (n)<<5 | (d))
#define SMLALH(d, n, m) WORD $(0x0e608000 | (m)<<16 | (n)<<5 | (d))
#define SMLAL2H(d, n, m) WORD $(0x4e608000 | (m)<<16 | (n)<<5 | (d))

// Q2KGRP adds sc·Σq·y of the quants in V17 and the activations in V<y>,
// the scale at lane i of V<sv>, to V19 (V18 clobbered).
#define Q2KGRP(K16, y, sv, i) \
	K16(18, 17, y); \
	MLAE(19, 18, sv, i)

// Q2KHALF adds one 128-element half: quants (32 bytes) at R6,
// activations (128 bytes) at R7, both advanced; scales of groups 0-3 of
// the half in V<sa>, 4-7 in V<sb> (V30 = 0x03 bytes).
#define Q2KHALF(K16, sa, sb) \
	VLD1.P 32(R6), [V2.B16, V3.B16];                     \
	VLD1.P 64(R7), [V8.B16, V9.B16, V10.B16, V11.B16];   \
	VLD1.P 64(R7), [V12.B16, V13.B16, V14.B16, V15.B16]; \
	VAND   V30.B16, V2.B16, V17.B16;                     \
	Q2KGRP(K16, 8, sa, 0);                               \
	VAND   V30.B16, V3.B16, V17.B16;                     \
	Q2KGRP(K16, 9, sa, 1);                               \
	VUSHR  $2, V2.B16, V17.B16;                          \
	VAND   V30.B16, V17.B16, V17.B16;                    \
	Q2KGRP(K16, 10, sa, 2);                              \
	VUSHR  $2, V3.B16, V17.B16;                          \
	VAND   V30.B16, V17.B16, V17.B16;                    \
	Q2KGRP(K16, 11, sa, 3);                              \
	VUSHR  $4, V2.B16, V17.B16;                          \
	VAND   V30.B16, V17.B16, V17.B16;                    \
	Q2KGRP(K16, 12, sb, 0);                              \
	VUSHR  $4, V3.B16, V17.B16;                          \
	VAND   V30.B16, V17.B16, V17.B16;                    \
	Q2KGRP(K16, 13, sb, 1);                              \
	VUSHR  $6, V2.B16, V17.B16;                          \
	Q2KGRP(K16, 14, sb, 2);                              \
	VUSHR  $6, V3.B16, V17.B16;                          \
	Q2KGRP(K16, 15, sb, 3)

// Q2KBODY is the Q2_K kernel's loop over R2 super-blocks: sumf in F0.
#define Q2KBODY(K16, loop) \
	VMOVI $15, V31.B16;           \
	VMOVI $3, V30.B16;            \
	VEOR  V0.B16, V0.B16, V0.B16; \
loop:                             \
	VLD1  (R0), [V20.B16];        \
	VAND  V31.B16, V20.B16, V21.B16; \
	VUSHR $4, V20.B16, V22.B16;   \
	VUXTL  V21.B8, V2.H8;         \
	VUXTL2 V21.B16, V3.H8;        \
	VUXTL  V2.H4, V23.S4;         \
	VUXTL2 V2.H8, V24.S4;         \
	VUXTL  V3.H4, V25.S4;         \
	VUXTL2 V3.H8, V26.S4;         \
	VUXTL  V22.B8, V4.H8;         \
	VUXTL2 V22.B16, V5.H8;        \
	ADD   $260, R1, R7;           \
	VLD1  (R7), [V6.H8, V7.H8];   \
	SMULLH(16, 4, 6);             \
	SMLAL2H(16, 4, 6);            \
	SMLALH(16, 5, 7);             \
	SMLAL2H(16, 5, 7);            \
	VADDV V16.S4, V16;            \
	VMOV  V16.S[0], R12;          \
	ZERO(19);                     \
	ADD   $16, R0, R6;            \
	ADD   $4, R1, R7;             \
	Q2KHALF(K16, 23, 24);         \
	Q2KHALF(K16, 25, 26);         \
	K4FLOATAT(80);                \
	ADD   $84, R0;                \
	ADD   $292, R1;               \
	SUB   $1, R2;                 \
	CBNZ  R2, loop

// func dotQ2_KNEON(w, x *byte, nb int) float32
TEXT ·dotQ2_KNEON(SB), NOSPLIT, $0-28
	ONEROWARGS
	Q2KBODY(K16NEON, q2kn_loop)
	FMOVS F0, ret+24(FP)
	RET

// func dotQ2_KDOT(w, x *byte, nb int) float32
TEXT ·dotQ2_KDOT(SB), NOSPLIT, $0-28
	ONEROWARGS
	Q2KBODY(K16DOT, q2kd_loop)
	FMOVS F0, ret+24(FP)
	RET

// Q3_K: group g = 8n+2k+h as in Q2_K, with the quant's third bit from
// bit 4n+k of hmask[16h+l] (a clear bit subtracts 4: q = (q2 | h<<2) − 4,
// in [-4, 3]) and the 6-bit scale sc[g] − 32.

// K3SCALES unpacks the 16 scales of the Q3_K block at R0 (ggml's
// q3KScales: low nibbles from bytes 0-7, top two bits from bytes 8-11)
// minus 32 into int32 lanes: groups 0-3 in V23, ..., 12-15 in V26
// (V29 = 0x20 bytes; R4-R10 clobbered).
#define K3SCALES \
	MOVD  96(R0), R4;                      \
	MOVWU 104(R0), R5;                     \
	AND   $0x0f0f0f0f0f0f0f0f, R4, R6;     \
	LSR   $4, R4, R7;                      \
	AND   $0x0f0f0f0f0f0f0f0f, R7;         \
	ANDW  $0x03030303, R5, R8;             \
	LSRW  $2, R5, R9;                      \
	ANDW  $0x03030303, R9;                 \
	ORR   R9<<32, R8, R8;                  \
	LSRW  $4, R5, R9;                      \
	ANDW  $0x03030303, R9;                 \
	LSRW  $6, R5, R10;                     \
	ANDW  $0x03030303, R10;                \
	ORR   R10<<32, R9, R9;                 \
	ORR   R8<<4, R6, R6;                   \
	ORR   R9<<4, R7, R7;                   \
	VMOV  R6, V20.D[0];                    \
	VMOV  R7, V20.D[1];                    \
	VSUB  V29.B16, V20.B16, V20.B16;       \
	SXTL(21, 20);                          \
	SXTL2(22, 20);                         \
	SXTLH(23, 21);                         \
	SXTL2H(24, 21);                        \
	SXTLH(25, 22);                         \
	SXTL2H(26, 22)

// Q3KHI turns the 2-bit quants in V17 into q − 4 with the hmask bits at
// bit 0 of hs (V31 = 0x03, V30 = 0x04 bytes; V18 clobbered).
#define Q3KHI(hs) \
	VSHL  $2, hs, V18.B16;            \
	VAND  V30.B16, V18.B16, V18.B16;  \
	VORR  V18.B16, V17.B16, V17.B16;  \
	VSUB  V30.B16, V17.B16, V17.B16

// Q3KGRP0 and Q3KGRP add the group whose 2-bit quants are q (shifted
// right by sh) and hmask bits hs, with activations V<y> and the scale at
// lane i of V<sv>, to V19 (V16-V18 clobbered).
#define Q3KGRP0(K16, q, hs, y, sv, i) \
	VAND  V31.B16, q, V17.B16;       \
	Q3KHI(hs);                       \
	K16(16, 17, y);                  \
	MLAE(19, 16, sv, i)

#define Q3KGRP(K16, q, sh, hs, y, sv, i) \
	VUSHR $sh, q, V17.B16;           \
	VAND  V31.B16, V17.B16, V17.B16; \
	Q3KHI(hs);                       \
	K16(16, 17, y);                  \
	MLAE(19, 16, sv, i)

// Q3KNEXT moves the next hmask bit of V4, V5 down to bit 0.
#define Q3KNEXT \
	VUSHR $1, V4.B16, V4.B16; \
	VUSHR $1, V5.B16, V5.B16

// Q3KHALF adds one 128-element half: quants (32 bytes) at R6,
// activations at R7, both advanced; hmask bits in V4, V5 (advanced by
// four bits); scales in V<sa>, V<sb>.
#define Q3KHALF(K16, sa, sb) \
	VLD1.P 32(R6), [V2.B16, V3.B16];                         \
	VLD1.P 64(R7), [V8.B16, V9.B16, V10.B16, V11.B16];       \
	VLD1.P 64(R7), [V12.B16, V13.B16, V14.B16, V15.B16];     \
	Q3KGRP0(K16, V2.B16, V4.B16, 8, sa, 0);                  \
	Q3KGRP0(K16, V3.B16, V5.B16, 9, sa, 1);                  \
	Q3KNEXT;                                                 \
	Q3KGRP(K16, V2.B16, 2, V4.B16, 10, sa, 2);               \
	Q3KGRP(K16, V3.B16, 2, V5.B16, 11, sa, 3);               \
	Q3KNEXT;                                                 \
	Q3KGRP(K16, V2.B16, 4, V4.B16, 12, sb, 0);               \
	Q3KGRP(K16, V3.B16, 4, V5.B16, 13, sb, 1);               \
	Q3KNEXT;                                                 \
	Q3KGRP(K16, V2.B16, 6, V4.B16, 14, sb, 2);               \
	Q3KGRP(K16, V3.B16, 6, V5.B16, 15, sb, 3);               \
	Q3KNEXT

// Q3KBODY is the Q3_K kernel's loop over R2 super-blocks: sumf in F0.
#define Q3KBODY(K16, loop) \
	VMOVI $3, V31.B16;            \
	VMOVI $4, V30.B16;            \
	VMOVI $32, V29.B16;           \
	VEOR  V0.B16, V0.B16, V0.B16; \
loop:                             \
	K3SCALES;                     \
	VLD1  (R0), [V4.B16, V5.B16]; \
	ZERO(19);                     \
	ADD   $32, R0, R6;            \
	ADD   $4, R1, R7;             \
	Q3KHALF(K16, 23, 24);         \
	Q3KHALF(K16, 25, 26);         \
	DFLOATAT(108);                \
	ADD   $110, R0;               \
	ADD   $292, R1;               \
	SUB   $1, R2;                 \
	CBNZ  R2, loop

// func dotQ3_KNEON(w, x *byte, nb int) float32
TEXT ·dotQ3_KNEON(SB), NOSPLIT, $0-28
	ONEROWARGS
	Q3KBODY(K16NEON, q3kn_loop)
	FMOVS F0, ret+24(FP)
	RET

// func dotQ3_KDOT(w, x *byte, nb int) float32
TEXT ·dotQ3_KDOT(SB), NOSPLIT, $0-28
	ONEROWARGS
	Q3KBODY(K16DOT, q3kd_loop)
	FMOVS F0, ret+24(FP)
	RET

// IQ4_XS: group ib (32 elements) has codebook values of the low nibbles
// of qs[16ib..16ib+15] for activations 32ib..32ib+15 and of the high
// nibbles for the next 16, and the 6-bit scale ls − 32.

// K32W is K32 for int8 weights of any magnitude (codebook values up to
// 127): the NEON form widens each pair of int16 products to int32, with
// V25, V26 as scratch.
#define K32WDOT(d, a, b, ya, yb) K32DOT(d, a, b, ya, yb)

#define K32WNEON(d, a, b, ya, yb) \
	SMULL(25, a, ya);  \
	SMULL2(26, a, ya); \
	SADDLP(d, 25);     \
	SADALP(d, 26);     \
	SMULL(25, b, yb);  \
	SMULL2(26, b, yb); \
	SADALP(d, 25);     \
	SADALP(d, 26)

// XSSCALES unpacks the eight scales of the IQ4_XS block at R0 (low
// nibbles from scales_l, two high bits each from scales_h, spread into
// bytes by shifting and masking) minus 32 into int32 lanes: groups 0-3 in
// V23, 4-7 in V24 (V29 = 0x20 bytes; R4-R6 clobbered).
#define XSSCALES \
	MOVWU 4(R0), R5;                        \
	ORR   R5<<16, R5, R6;                   \
	AND   $0x0000ffff0000ffff, R6;          \
	ORR   R6<<8, R6, R6;                    \
	AND   $0x00ff00ff00ff00ff, R6;          \
	ORR   R6<<4, R6, R6;                    \
	AND   $0x0f0f0f0f0f0f0f0f, R6;          \
	MOVHU 2(R0), R4;                        \
	ORR   R4<<24, R4, R4;                   \
	AND   $0x000000ff000000ff, R4;          \
	ORR   R4<<12, R4, R4;                   \
	AND   $0x000f000f000f000f, R4;          \
	ORR   R4<<6, R4, R4;                    \
	AND   $0x0303030303030303, R4;          \
	ORR   R4<<4, R6, R6;                    \
	VMOV  R6, V20.D[0];                     \
	VSUB  V29.B16, V20.B16, V20.B16;        \
	SXTL(21, 20);                           \
	SXTLH(23, 21);                          \
	SXTL2H(24, 21)

// XSGRP adds group ib: quants (16 bytes) at R6, activations (32 bytes)
// at R7, both advanced, the scale at lane i of V<sv> (V30 = codebook).
#define XSGRP(K32W, sv, i) \
	VLD1.P 16(R6), [V2.B16];           \
	VLD1.P 32(R7), [V4.B16, V5.B16];   \
	VAND   V31.B16, V2.B16, V8.B16;    \
	VUSHR  $4, V2.B16, V9.B16;         \
	VTBL   V8.B16, [V30.B16], V8.B16;  \
	VTBL   V9.B16, [V30.B16], V9.B16;  \
	K32W(12, 8, 9, 4, 5);              \
	MLAE(19, 12, sv, i)

// XSBODY is the IQ4_XS kernel's loop over R2 super-blocks: sumf in F0.
#define XSBODY(K32W, loop) \
	IQ4NLSETUP;                   \
	VMOVI $32, V29.B16;           \
	VEOR  V0.B16, V0.B16, V0.B16; \
loop:                             \
	XSSCALES;                     \
	ZERO(19);                     \
	ADD   $8, R0, R6;             \
	ADD   $4, R1, R7;             \
	XSGRP(K32W, 23, 0);           \
	XSGRP(K32W, 23, 1);           \
	XSGRP(K32W, 23, 2);           \
	XSGRP(K32W, 23, 3);           \
	XSGRP(K32W, 24, 0);           \
	XSGRP(K32W, 24, 1);           \
	XSGRP(K32W, 24, 2);           \
	XSGRP(K32W, 24, 3);           \
	DFLOATAT(0);                  \
	ADD   $136, R0;               \
	ADD   $292, R1;               \
	SUB   $1, R2;                 \
	CBNZ  R2, loop

// func dotIQ4_XSNEON(w, x *byte, nb int) float32
TEXT ·dotIQ4_XSNEON(SB), NOSPLIT, $0-28
	ONEROWARGS
	XSBODY(K32WNEON, xsn_loop)
	FMOVS F0, ret+24(FP)
	RET

// func dotIQ4_XSDOT(w, x *byte, nb int) float32
TEXT ·dotIQ4_XSDOT(SB), NOSPLIT, $0-28
	ONEROWARGS
	XSBODY(K32WDOT, xsd_loop)
	FMOVS F0, ret+24(FP)
	RET

// ---- float types ----------------------------------------------------
// 32 elements per iteration into eight accumulators (V0-V7), summed as a
// tree at the end. Products of two halves (or two bfloat16s) are exact
// in float32, so FMLA rounds only the sums; F32 products are fused.

// FSUM8 leaves the sum of V0-V7's lanes in F0.
#define FSUM8 \
	FADD(0, 0, 1); \
	FADD(2, 2, 3); \
	FADD(4, 4, 5); \
	FADD(6, 6, 7); \
	FADD(0, 0, 2); \
	FADD(4, 4, 6); \
	FADD(0, 0, 4); \
	HSUM(0)

#define ZERO8 \
	VEOR V0.B16, V0.B16, V0.B16; \
	VEOR V1.B16, V1.B16, V1.B16; \
	VEOR V2.B16, V2.B16, V2.B16; \
	VEOR V3.B16, V3.B16, V3.B16; \
	VEOR V4.B16, V4.B16, V4.B16; \
	VEOR V5.B16, V5.B16, V5.B16; \
	VEOR V6.B16, V6.B16, V6.B16; \
	VEOR V7.B16, V7.B16, V7.B16

// F16PAIR widens the eight halves of V<w> and V<x> and adds their
// products to V<lo> (elements 0-3) and V<hi> (4-7).
#define F16PAIR(w, x, lo, hi) \
	FCVTL(24, w);                  \
	FCVTL(25, x);                  \
	VFMLA V25.S4, V24.S4, lo;      \
	FCVTL2(26, w);                 \
	FCVTL2(27, x);                 \
	VFMLA V27.S4, V26.S4, hi

// func dotF16NEON(w, x *byte, n int) float32
TEXT ·dotF16NEON(SB), NOSPLIT, $0-28
	MOVD w+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n+16(FP), R2
	ZERO8

f16n_loop:
	VLD1.P 64(R0), [V16.H8, V17.H8, V18.H8, V19.H8]
	VLD1.P 64(R1), [V20.H8, V21.H8, V22.H8, V23.H8]
	F16PAIR(16, 20, V0.S4, V1.S4)
	F16PAIR(17, 21, V2.S4, V3.S4)
	F16PAIR(18, 22, V4.S4, V5.S4)
	F16PAIR(19, 23, V6.S4, V7.S4)
	SUBS $32, R2
	BNE  f16n_loop

	FSUM8
	FMOVS F0, ret+24(FP)
	RET

// BF16PAIR widens the eight bfloat16s of w and x (V31 = 0: each value
// becomes the top half of a float32) and adds their products to lo, hi.
#define BF16PAIR(w, x, lo, hi) \
	VZIP1 w, V31.H8, V24.H8;  \
	VZIP1 x, V31.H8, V25.H8;  \
	VFMLA V25.S4, V24.S4, lo; \
	VZIP2 w, V31.H8, V26.H8;  \
	VZIP2 x, V31.H8, V27.H8;  \
	VFMLA V27.S4, V26.S4, hi

// func dotBF16NEON(w, x *byte, n int) float32
TEXT ·dotBF16NEON(SB), NOSPLIT, $0-28
	MOVD w+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n+16(FP), R2
	ZERO8
	VEOR V31.B16, V31.B16, V31.B16

bf16n_loop:
	VLD1.P 64(R0), [V16.H8, V17.H8, V18.H8, V19.H8]
	VLD1.P 64(R1), [V20.H8, V21.H8, V22.H8, V23.H8]
	BF16PAIR(V16.H8, V20.H8, V0.S4, V1.S4)
	BF16PAIR(V17.H8, V21.H8, V2.S4, V3.S4)
	BF16PAIR(V18.H8, V22.H8, V4.S4, V5.S4)
	BF16PAIR(V19.H8, V23.H8, V6.S4, V7.S4)
	SUBS $32, R2
	BNE  bf16n_loop

	FSUM8
	FMOVS F0, ret+24(FP)
	RET

// func dotF32NEON(w, x *byte, n int) float32
TEXT ·dotF32NEON(SB), NOSPLIT, $0-28
	MOVD w+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n+16(FP), R2
	ZERO8

f32n_loop:
	VLD1.P 64(R0), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1.P 64(R0), [V20.S4, V21.S4, V22.S4, V23.S4]
	VLD1.P 64(R1), [V24.S4, V25.S4, V26.S4, V27.S4]
	VLD1.P 64(R1), [V28.S4, V29.S4, V30.S4, V31.S4]
	VFMLA V24.S4, V16.S4, V0.S4
	VFMLA V25.S4, V17.S4, V1.S4
	VFMLA V26.S4, V18.S4, V2.S4
	VFMLA V27.S4, V19.S4, V3.S4
	VFMLA V28.S4, V20.S4, V4.S4
	VFMLA V29.S4, V21.S4, V5.S4
	VFMLA V30.S4, V22.S4, V6.S4
	VFMLA V31.S4, V23.S4, V7.S4
	SUBS $32, R2
	BNE  f32n_loop

	FSUM8
	FMOVS F0, ret+24(FP)
	RET
