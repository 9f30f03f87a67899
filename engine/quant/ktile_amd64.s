//go:build amd64 && !noasm

#include "textflag.h"

// K-quant matrix tiles for AVX-512 VNNI without AMX (Go side in
// ktile_amd64.go). The weights of 16 rows are first widened, one
// super-block at a time, into a scratch layout where every 64 bytes are
// four consecutive quants of each of the 16 rows (dword lane r = row r,
// gathered with VPGATHERDD), followed by the rows' unpacked scales, mins
// and d as dword lanes. A tile kernel then runs those 16 rows against
// eight Q8_K activation rows as they lie: each VPDPBUSD multiplies one
// 64-byte group by four activation quants broadcast from memory
// ({1to16}), so every lane sums one row's products with one activation
// row. Each 32- (Q4_K) or 16-quant (Q6_K) sub-block's exact int32 sum is
// scaled by the rows' sub-block scales (VPMULLD) into the super-block's
// integer sum; the mins (Q4_K) and the −32 offset (Q6_K) come from the
// activations' bsums through VPDPWSSD. Each super-block then adds its
// float term to the lanes with the generic code's operations in the
// generic code's order, so every result is bit-identical to VecDot's.
//
// Scratch per super-block, Q4_K (KQ4SB = 5248 bytes): quants [64][16][4]
// at 0, scales [8][16] int32 at 4096, mins [8][16] as int16 pairs (m, m)
// at 4608 (a bsums dword holds two sums of one 32-quant sub-block), d
// [16] float at 5120, dmin at 5184. Q6_K (KQ6SB = 5696): quants (the
// unsigned six bits) at 0, scales [16][16] int32 at 4096, scale pairs
// [8][16] (int16 sc[2i], sc[2i+1]) at 5120, d at 5632.

#define KQ4SB 5248
#define KQ6SB 5696

// KGATHER loads dword off of each of the 16 rows (SI + Z31 lanes; rows
// outside the mask K1 read as zero) into z (K2 clobbered).
#define KGATHER(off, z) \
	KMOVW K1, K2; \
	VPXORD z, z, z; \
	VPGATHERDD off(SI)(Z31*1), K2, z

// KW4QS widens qs dword k of 32-byte run j (low nibbles: sub-block 2j,
// high: 2j+1) into groups 16j+k and 16j+8+k.
#define KW4QS(j, k) \
	KGATHER(16+32*j+4*k, Z0); \
	VPANDD Z30, Z0, Z1; \
	VMOVDQU32 Z1, ((16*j+k)*64)(DI); \
	VPSRLD $4, Z0, Z2; \
	VPANDD Z30, Z2, Z2; \
	VMOVDQU32 Z2, ((16*j+8+k)*64)(DI)

// KW4LO stores scale and min j < 4: bytes j of the dwords at 4 (Z3) and
// 8 (Z4), six bits each.
#define KW4LO(j) \
	VPSRLD $(8*j), Z3, Z7; \
	VPANDD Z29, Z7, Z7; \
	VMOVDQU32 Z7, (4096+64*j)(DI); \
	VPSRLD $(8*j), Z4, Z7; \
	VPANDD Z29, Z7, Z7; \
	VPSLLD $16, Z7, Z8; \
	VPORD Z8, Z7, Z7; \
	VMOVDQU32 Z7, (4608+64*j)(DI)

// KW4HI stores scale and min 4+i: the nibbles of byte i of the dword at
// 12 (Z5) and the top two bits of bytes i at 4 and 8, as ggml's
// get_scale_min_k4.
#define KW4HI(i) \
	VPSRLD $(8*i), Z5, Z7; \
	VPANDD Z27, Z7, Z7; \
	VPSRLD $(8*i+2), Z3, Z8; \
	VPANDD Z28, Z8, Z8; \
	VPORD Z8, Z7, Z7; \
	VMOVDQU32 Z7, (4096+64*(4+i))(DI); \
	VPSRLD $(8*i+4), Z5, Z7; \
	VPANDD Z27, Z7, Z7; \
	VPSRLD $(8*i+2), Z4, Z8; \
	VPANDD Z28, Z8, Z8; \
	VPORD Z8, Z7, Z7; \
	VPSLLD $16, Z7, Z8; \
	VPORD Z8, Z7, Z7; \
	VMOVDQU32 Z7, (4608+64*(4+i))(DI)

// KWSETUP: Z31 = the rows' byte offsets, K1 = their mask, Z27-Z30 = the
// dword masks 0x0f, 0x30, 0x3f, 0x0f0f0f0f (AX clobbered).
#define KWSETUP \
	MOVQ rows+0(FP), SI; \
	MOVQ idx+8(FP), AX; \
	VMOVDQU32 (AX), Z31; \
	MOVQ mask+16(FP), AX; \
	KMOVW AX, K1; \
	MOVQ nsb+24(FP), CX; \
	MOVQ dst+32(FP), DI; \
	MOVL $0x0f, AX; \
	VPBROADCASTD AX, Z27; \
	MOVL $0x30, AX; \
	VPBROADCASTD AX, Z28; \
	MOVL $0x3f, AX; \
	VPBROADCASTD AX, Z29; \
	MOVL $0x0f0f0f0f, AX; \
	VPBROADCASTD AX, Z30

// KWHALF stores the fp16 in the low (sh = 0) or high (sh = 16) half of
// each dword of z as a float at off(DI).
#define KWHALF(z, sh, off) \
	VPSRLD $sh, z, Z8; \
	VPMOVDW Z8, Y8; \
	VCVTPH2PS Y8, Z8; \
	VMOVUPS Z8, off(DI)

// func kWidenQ4_K(rows *byte, idx *int32, mask, nsb int, dst *byte)
TEXT ·kWidenQ4_K(SB), NOSPLIT, $0-40
	KWSETUP
kw4_loop:
	KW4QS(0, 0)
	KW4QS(0, 1)
	KW4QS(0, 2)
	KW4QS(0, 3)
	KW4QS(0, 4)
	KW4QS(0, 5)
	KW4QS(0, 6)
	KW4QS(0, 7)
	KW4QS(1, 0)
	KW4QS(1, 1)
	KW4QS(1, 2)
	KW4QS(1, 3)
	KW4QS(1, 4)
	KW4QS(1, 5)
	KW4QS(1, 6)
	KW4QS(1, 7)
	KW4QS(2, 0)
	KW4QS(2, 1)
	KW4QS(2, 2)
	KW4QS(2, 3)
	KW4QS(2, 4)
	KW4QS(2, 5)
	KW4QS(2, 6)
	KW4QS(2, 7)
	KW4QS(3, 0)
	KW4QS(3, 1)
	KW4QS(3, 2)
	KW4QS(3, 3)
	KW4QS(3, 4)
	KW4QS(3, 5)
	KW4QS(3, 6)
	KW4QS(3, 7)
	KGATHER(4, Z3)
	KGATHER(8, Z4)
	KGATHER(12, Z5)
	KGATHER(0, Z6)
	KW4LO(0)
	KW4LO(1)
	KW4LO(2)
	KW4LO(3)
	KW4HI(0)
	KW4HI(1)
	KW4HI(2)
	KW4HI(3)
	KWHALF(Z6, 0, 5120)
	KWHALF(Z6, 16, 5184)
	ADDQ $144, SI
	ADDQ $KQ4SB, DI
	DECQ CX
	JNZ  kw4_loop
	VZEROUPPER
	RET

// KW6Q widens dword k of each 32-byte run of half h: the low bits at
// ql[64h+4k] (Z0) and ql[64h+32+4k] (Z1), two high bits each at
// qh[32h+4k] (Z2), into groups 32h+k, +8, +16, +24.
#define KW6Q(h, k) \
	KGATHER(64*h+4*k, Z0); \
	KGATHER(64*h+32+4*k, Z1); \
	KGATHER(128+32*h+4*k, Z2); \
	VPANDD Z30, Z0, Z3; \
	VPSLLD $4, Z2, Z4; \
	VPANDD Z26, Z4, Z4; \
	VPORD Z4, Z3, Z3; \
	VMOVDQU32 Z3, ((32*h+k)*64)(DI); \
	VPANDD Z30, Z1, Z3; \
	VPSLLD $2, Z2, Z4; \
	VPANDD Z26, Z4, Z4; \
	VPORD Z4, Z3, Z3; \
	VMOVDQU32 Z3, ((32*h+8+k)*64)(DI); \
	VPSRLD $4, Z0, Z3; \
	VPANDD Z30, Z3, Z3; \
	VPANDD Z26, Z2, Z4; \
	VPORD Z4, Z3, Z3; \
	VMOVDQU32 Z3, ((32*h+16+k)*64)(DI); \
	VPSRLD $4, Z1, Z3; \
	VPANDD Z30, Z3, Z3; \
	VPSRLD $2, Z2, Z4; \
	VPANDD Z26, Z4, Z4; \
	VPORD Z4, Z3, Z3; \
	VMOVDQU32 Z3, ((32*h+24+k)*64)(DI)

// KW6SC stores scales 4g..4g+3 (the int8s of the dword at 192+4g),
// sign-extended, and the pairs 2g, 2g+1 as int16s.
#define KW6SC(g) \
	KGATHER(192+4*g, Z0); \
	VPSLLD $24, Z0, Z1; \
	VPSRAD $24, Z1, Z1; \
	VMOVDQU32 Z1, (4096+64*(4*g))(DI); \
	VPSLLD $16, Z0, Z2; \
	VPSRAD $24, Z2, Z2; \
	VMOVDQU32 Z2, (4096+64*(4*g+1))(DI); \
	VPANDD Z25, Z1, Z1; \
	VPSLLD $16, Z2, Z2; \
	VPORD Z2, Z1, Z1; \
	VMOVDQU32 Z1, (5120+64*(2*g))(DI); \
	VPSLLD $8, Z0, Z1; \
	VPSRAD $24, Z1, Z1; \
	VMOVDQU32 Z1, (4096+64*(4*g+2))(DI); \
	VPSRAD $24, Z0, Z2; \
	VMOVDQU32 Z2, (4096+64*(4*g+3))(DI); \
	VPANDD Z25, Z1, Z1; \
	VPSLLD $16, Z2, Z2; \
	VPORD Z2, Z1, Z1; \
	VMOVDQU32 Z1, (5120+64*(2*g+1))(DI)

// func kWidenQ6_K(rows *byte, idx *int32, mask, nsb int, dst *byte)
TEXT ·kWidenQ6_K(SB), NOSPLIT, $0-40
	KWSETUP
	MOVL $0xffff, AX
	VPBROADCASTD AX, Z25
	MOVL $0x30303030, AX
	VPBROADCASTD AX, Z26
kw6_loop:
	KW6Q(0, 0)
	KW6Q(0, 1)
	KW6Q(0, 2)
	KW6Q(0, 3)
	KW6Q(0, 4)
	KW6Q(0, 5)
	KW6Q(0, 6)
	KW6Q(0, 7)
	KW6Q(1, 0)
	KW6Q(1, 1)
	KW6Q(1, 2)
	KW6Q(1, 3)
	KW6Q(1, 4)
	KW6Q(1, 5)
	KW6Q(1, 6)
	KW6Q(1, 7)
	KW6SC(0)
	KW6SC(1)
	KW6SC(2)
	KW6SC(3)
	KGATHER(206, Z6) // d is the high half of the dword at 206
	KWHALF(Z6, 16, 5632)
	ADDQ $210, SI
	ADDQ $KQ6SB, DI
	DECQ CX
	JNZ  kw6_loop
	VZEROUPPER
	RET

// The tile kernels keep eight activation rows' pointers in R8-R13, BX,
// DX; per row a, Z(a) holds the super-block's integer sum, Z(8+a) a
// sub-block's (then the min or offset sums), Z(16+a) the float sums.

// KG runs group g (at off(SI)) against the quants at xo of every row.
#define KG(off, xo) \
	VMOVDQU64 off(SI), Z24; \
	VPDPBUSD.BCST xo(R8), Z24, Z8; \
	VPDPBUSD.BCST xo(R9), Z24, Z9; \
	VPDPBUSD.BCST xo(R10), Z24, Z10; \
	VPDPBUSD.BCST xo(R11), Z24, Z11; \
	VPDPBUSD.BCST xo(R12), Z24, Z12; \
	VPDPBUSD.BCST xo(R13), Z24, Z13; \
	VPDPBUSD.BCST xo(BX), Z24, Z14; \
	VPDPBUSD.BCST xo(DX), Z24, Z15

#define KZERO8 \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11; \
	VPXORD Z12, Z12, Z12; \
	VPXORD Z13, Z13, Z13; \
	VPXORD Z14, Z14, Z14; \
	VPXORD Z15, Z15, Z15

// KSCALE adds the sub-block sums times the scales at off(SI) to the
// super-block sums.
#define KSCALE(off) \
	VMOVDQU32 off(SI), Z24; \
	VPMULLD Z24, Z8, Z8; \
	VPMULLD Z24, Z9, Z9; \
	VPMULLD Z24, Z10, Z10; \
	VPMULLD Z24, Z11, Z11; \
	VPMULLD Z24, Z12, Z12; \
	VPMULLD Z24, Z13, Z13; \
	VPMULLD Z24, Z14, Z14; \
	VPMULLD Z24, Z15, Z15; \
	VPADDD Z8, Z0, Z0; \
	VPADDD Z9, Z1, Z1; \
	VPADDD Z10, Z2, Z2; \
	VPADDD Z11, Z3, Z3; \
	VPADDD Z12, Z4, Z4; \
	VPADDD Z13, Z5, Z5; \
	VPADDD Z14, Z6, Z6; \
	VPADDD Z15, Z7, Z7

// K4SUB: Q4_K sub-block s, eight groups.
#define K4SUB(s) \
	KZERO8; \
	KG((512*s+64*0), (4+32*s+4*0)); \
	KG((512*s+64*1), (4+32*s+4*1)); \
	KG((512*s+64*2), (4+32*s+4*2)); \
	KG((512*s+64*3), (4+32*s+4*3)); \
	KG((512*s+64*4), (4+32*s+4*4)); \
	KG((512*s+64*5), (4+32*s+4*5)); \
	KG((512*s+64*6), (4+32*s+4*6)); \
	KG((512*s+64*7), (4+32*s+4*7)); \
	KSCALE((4096+64*s))

// K6SUB: Q6_K sub-block t, four groups.
#define K6SUB(t) \
	KZERO8; \
	KG((256*t+64*0), (4+16*t+4*0)); \
	KG((256*t+64*1), (4+16*t+4*1)); \
	KG((256*t+64*2), (4+16*t+4*2)); \
	KG((256*t+64*3), (4+16*t+4*3)); \
	KSCALE((4096+64*t))

// KPAIRS sums the int16 pairs at off(SI)+64i times the bsums dwords i
// of each row into Z8-Z15.
#define KPAIRS(off) \
	KZERO8; \
	VMOVDQU32 (off+64*0)(SI), Z24; \
	VPDPWSSD.BCST (260+4*0)(R8), Z24, Z8; \
	VPDPWSSD.BCST (260+4*0)(R9), Z24, Z9; \
	VPDPWSSD.BCST (260+4*0)(R10), Z24, Z10; \
	VPDPWSSD.BCST (260+4*0)(R11), Z24, Z11; \
	VPDPWSSD.BCST (260+4*0)(R12), Z24, Z12; \
	VPDPWSSD.BCST (260+4*0)(R13), Z24, Z13; \
	VPDPWSSD.BCST (260+4*0)(BX), Z24, Z14; \
	VPDPWSSD.BCST (260+4*0)(DX), Z24, Z15; \
	VMOVDQU32 (off+64*1)(SI), Z24; \
	VPDPWSSD.BCST (260+4*1)(R8), Z24, Z8; \
	VPDPWSSD.BCST (260+4*1)(R9), Z24, Z9; \
	VPDPWSSD.BCST (260+4*1)(R10), Z24, Z10; \
	VPDPWSSD.BCST (260+4*1)(R11), Z24, Z11; \
	VPDPWSSD.BCST (260+4*1)(R12), Z24, Z12; \
	VPDPWSSD.BCST (260+4*1)(R13), Z24, Z13; \
	VPDPWSSD.BCST (260+4*1)(BX), Z24, Z14; \
	VPDPWSSD.BCST (260+4*1)(DX), Z24, Z15; \
	VMOVDQU32 (off+64*2)(SI), Z24; \
	VPDPWSSD.BCST (260+4*2)(R8), Z24, Z8; \
	VPDPWSSD.BCST (260+4*2)(R9), Z24, Z9; \
	VPDPWSSD.BCST (260+4*2)(R10), Z24, Z10; \
	VPDPWSSD.BCST (260+4*2)(R11), Z24, Z11; \
	VPDPWSSD.BCST (260+4*2)(R12), Z24, Z12; \
	VPDPWSSD.BCST (260+4*2)(R13), Z24, Z13; \
	VPDPWSSD.BCST (260+4*2)(BX), Z24, Z14; \
	VPDPWSSD.BCST (260+4*2)(DX), Z24, Z15; \
	VMOVDQU32 (off+64*3)(SI), Z24; \
	VPDPWSSD.BCST (260+4*3)(R8), Z24, Z8; \
	VPDPWSSD.BCST (260+4*3)(R9), Z24, Z9; \
	VPDPWSSD.BCST (260+4*3)(R10), Z24, Z10; \
	VPDPWSSD.BCST (260+4*3)(R11), Z24, Z11; \
	VPDPWSSD.BCST (260+4*3)(R12), Z24, Z12; \
	VPDPWSSD.BCST (260+4*3)(R13), Z24, Z13; \
	VPDPWSSD.BCST (260+4*3)(BX), Z24, Z14; \
	VPDPWSSD.BCST (260+4*3)(DX), Z24, Z15; \
	VMOVDQU32 (off+64*4)(SI), Z24; \
	VPDPWSSD.BCST (260+4*4)(R8), Z24, Z8; \
	VPDPWSSD.BCST (260+4*4)(R9), Z24, Z9; \
	VPDPWSSD.BCST (260+4*4)(R10), Z24, Z10; \
	VPDPWSSD.BCST (260+4*4)(R11), Z24, Z11; \
	VPDPWSSD.BCST (260+4*4)(R12), Z24, Z12; \
	VPDPWSSD.BCST (260+4*4)(R13), Z24, Z13; \
	VPDPWSSD.BCST (260+4*4)(BX), Z24, Z14; \
	VPDPWSSD.BCST (260+4*4)(DX), Z24, Z15; \
	VMOVDQU32 (off+64*5)(SI), Z24; \
	VPDPWSSD.BCST (260+4*5)(R8), Z24, Z8; \
	VPDPWSSD.BCST (260+4*5)(R9), Z24, Z9; \
	VPDPWSSD.BCST (260+4*5)(R10), Z24, Z10; \
	VPDPWSSD.BCST (260+4*5)(R11), Z24, Z11; \
	VPDPWSSD.BCST (260+4*5)(R12), Z24, Z12; \
	VPDPWSSD.BCST (260+4*5)(R13), Z24, Z13; \
	VPDPWSSD.BCST (260+4*5)(BX), Z24, Z14; \
	VPDPWSSD.BCST (260+4*5)(DX), Z24, Z15; \
	VMOVDQU32 (off+64*6)(SI), Z24; \
	VPDPWSSD.BCST (260+4*6)(R8), Z24, Z8; \
	VPDPWSSD.BCST (260+4*6)(R9), Z24, Z9; \
	VPDPWSSD.BCST (260+4*6)(R10), Z24, Z10; \
	VPDPWSSD.BCST (260+4*6)(R11), Z24, Z11; \
	VPDPWSSD.BCST (260+4*6)(R12), Z24, Z12; \
	VPDPWSSD.BCST (260+4*6)(R13), Z24, Z13; \
	VPDPWSSD.BCST (260+4*6)(BX), Z24, Z14; \
	VPDPWSSD.BCST (260+4*6)(DX), Z24, Z15; \
	VMOVDQU32 (off+64*7)(SI), Z24; \
	VPDPWSSD.BCST (260+4*7)(R8), Z24, Z8; \
	VPDPWSSD.BCST (260+4*7)(R9), Z24, Z9; \
	VPDPWSSD.BCST (260+4*7)(R10), Z24, Z10; \
	VPDPWSSD.BCST (260+4*7)(R11), Z24, Z11; \
	VPDPWSSD.BCST (260+4*7)(R12), Z24, Z12; \
	VPDPWSSD.BCST (260+4*7)(R13), Z24, Z13; \
	VPDPWSSD.BCST (260+4*7)(BX), Z24, Z14; \
	VPDPWSSD.BCST (260+4*7)(DX), Z24, Z15

// K4F: Q4_K's float term for row x: acc += float32(d·dy·isum) −
// float32(dmin·dy·summs), d and dmin in Z25, Z26.
#define K4F(x, isum, mins, acc) \
	VMULPS.BCST (x), Z25, Z27; \
	VCVTDQ2PS isum, Z28; \
	VMULPS Z28, Z27, Z27; \
	VMULPS.BCST (x), Z26, Z29; \
	VCVTDQ2PS mins, Z30; \
	VMULPS Z30, Z29, Z29; \
	VSUBPS Z29, Z27, Z27; \
	VADDPS Z27, acc, acc

// K6F: Q6_K's: isum −= 32·Σ sc·bsum, acc += float32(d·dy·isum), d in Z25.
#define K6F(x, isum, offs, acc) \
	VPSLLD $5, offs, offs; \
	VPSUBD offs, isum, isum; \
	VMULPS.BCST (x), Z25, Z27; \
	VCVTDQ2PS isum, Z28; \
	VMULPS Z28, Z27, Z27; \
	VADDPS Z27, acc, acc

#define KTSETUP \
	MOVQ 0(DI), R8; \
	MOVQ 8(DI), R9; \
	MOVQ 16(DI), R10; \
	MOVQ 24(DI), R11; \
	MOVQ 32(DI), R12; \
	MOVQ 40(DI), R13; \
	MOVQ 48(DI), BX; \
	MOVQ 56(DI), DX; \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	VPXORD Z22, Z22, Z22; \
	VPXORD Z23, Z23, Z23

#define KTNEXT(sb) \
	ADDQ $sb, SI; \
	ADDQ $292, R8; \
	ADDQ $292, R9; \
	ADDQ $292, R10; \
	ADDQ $292, R11; \
	ADDQ $292, R12; \
	ADDQ $292, R13; \
	ADDQ $292, BX; \
	ADDQ $292, DX

#define KTSTORE \
	KMOVW AX, K1; \
	MOVQ 64(DI), AX; \
	VMOVUPS Z16, K1, (AX); \
	MOVQ 72(DI), AX; \
	VMOVUPS Z17, K1, (AX); \
	MOVQ 80(DI), AX; \
	VMOVUPS Z18, K1, (AX); \
	MOVQ 88(DI), AX; \
	VMOVUPS Z19, K1, (AX); \
	MOVQ 96(DI), AX; \
	VMOVUPS Z20, K1, (AX); \
	MOVQ 104(DI), AX; \
	VMOVUPS Z21, K1, (AX); \
	MOVQ 112(DI), AX; \
	VMOVUPS Z22, K1, (AX); \
	MOVQ 120(DI), AX; \
	VMOVUPS Z23, K1, (AX)

#define KISUMZERO \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7

// func kTileQ4_K(w *byte, nsb, mask int, k *kTileRows)
TEXT ·kTileQ4_K(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ nsb+8(FP), CX
	MOVQ k+24(FP), DI
	KTSETUP
kt4_loop:
	KISUMZERO
	K4SUB(0)
	K4SUB(1)
	K4SUB(2)
	K4SUB(3)
	K4SUB(4)
	K4SUB(5)
	K4SUB(6)
	K4SUB(7)
	KPAIRS(4608)
	VMOVUPS 5120(SI), Z25
	VMOVUPS 5184(SI), Z26
	K4F(R8, Z0, Z8, Z16)
	K4F(R9, Z1, Z9, Z17)
	K4F(R10, Z2, Z10, Z18)
	K4F(R11, Z3, Z11, Z19)
	K4F(R12, Z4, Z12, Z20)
	K4F(R13, Z5, Z13, Z21)
	K4F(BX, Z6, Z14, Z22)
	K4F(DX, Z7, Z15, Z23)
	KTNEXT(KQ4SB)
	DECQ CX
	JNZ  kt4_loop
	MOVQ mask+16(FP), AX
	KTSTORE
	VZEROUPPER
	RET

// func kTileQ6_K(w *byte, nsb, mask int, k *kTileRows)
TEXT ·kTileQ6_K(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ nsb+8(FP), CX
	MOVQ k+24(FP), DI
	KTSETUP
kt6_loop:
	KISUMZERO
	K6SUB(0)
	K6SUB(1)
	K6SUB(2)
	K6SUB(3)
	K6SUB(4)
	K6SUB(5)
	K6SUB(6)
	K6SUB(7)
	K6SUB(8)
	K6SUB(9)
	K6SUB(10)
	K6SUB(11)
	K6SUB(12)
	K6SUB(13)
	K6SUB(14)
	K6SUB(15)
	KPAIRS(5120)
	VMOVUPS 5632(SI), Z25
	K6F(R8, Z0, Z8, Z16)
	K6F(R9, Z1, Z9, Z17)
	K6F(R10, Z2, Z10, Z18)
	K6F(R11, Z3, Z11, Z19)
	K6F(R12, Z4, Z12, Z20)
	K6F(R13, Z5, Z13, Z21)
	K6F(BX, Z6, Z14, Z22)
	K6F(DX, Z7, Z15, Z23)
	KTNEXT(KQ6SB)
	DECQ CX
	JNZ  kt6_loop
	MOVQ mask+16(FP), AX
	KTSTORE
	VZEROUPPER
	RET
