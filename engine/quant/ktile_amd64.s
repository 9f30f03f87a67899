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
	KWPFSETUP; \
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

// KWPF prefetches lines KWPFDIST ahead in each of the 16 rows (rows 0-7
// at SI, 8-15 at BX; R8 = stride, R9, R10, R11 = 3, 5, 7 strides): the
// gathers meet the rows in memory, 16 streams at a time, and wait on
// each miss (a small batch widened at 0.3 GB/s without).
#define KWPF3 \
	PREFETCHT0 KWPFDIST+0(SI); \
	PREFETCHT0 KWPFDIST+64(SI); \
	PREFETCHT0 KWPFDIST+128(SI); \
	PREFETCHT0 KWPFDIST+0(SI)(R8*1); \
	PREFETCHT0 KWPFDIST+64(SI)(R8*1); \
	PREFETCHT0 KWPFDIST+128(SI)(R8*1); \
	PREFETCHT0 KWPFDIST+0(SI)(R8*2); \
	PREFETCHT0 KWPFDIST+64(SI)(R8*2); \
	PREFETCHT0 KWPFDIST+128(SI)(R8*2); \
	PREFETCHT0 KWPFDIST+0(SI)(R9*1); \
	PREFETCHT0 KWPFDIST+64(SI)(R9*1); \
	PREFETCHT0 KWPFDIST+128(SI)(R9*1); \
	PREFETCHT0 KWPFDIST+0(SI)(R8*4); \
	PREFETCHT0 KWPFDIST+64(SI)(R8*4); \
	PREFETCHT0 KWPFDIST+128(SI)(R8*4); \
	PREFETCHT0 KWPFDIST+0(SI)(R10*1); \
	PREFETCHT0 KWPFDIST+64(SI)(R10*1); \
	PREFETCHT0 KWPFDIST+128(SI)(R10*1); \
	PREFETCHT0 KWPFDIST+0(SI)(R9*2); \
	PREFETCHT0 KWPFDIST+64(SI)(R9*2); \
	PREFETCHT0 KWPFDIST+128(SI)(R9*2); \
	PREFETCHT0 KWPFDIST+0(SI)(R11*1); \
	PREFETCHT0 KWPFDIST+64(SI)(R11*1); \
	PREFETCHT0 KWPFDIST+128(SI)(R11*1); \
	PREFETCHT0 KWPFDIST+0(BX); \
	PREFETCHT0 KWPFDIST+64(BX); \
	PREFETCHT0 KWPFDIST+128(BX); \
	PREFETCHT0 KWPFDIST+0(BX)(R8*1); \
	PREFETCHT0 KWPFDIST+64(BX)(R8*1); \
	PREFETCHT0 KWPFDIST+128(BX)(R8*1); \
	PREFETCHT0 KWPFDIST+0(BX)(R8*2); \
	PREFETCHT0 KWPFDIST+64(BX)(R8*2); \
	PREFETCHT0 KWPFDIST+128(BX)(R8*2); \
	PREFETCHT0 KWPFDIST+0(BX)(R9*1); \
	PREFETCHT0 KWPFDIST+64(BX)(R9*1); \
	PREFETCHT0 KWPFDIST+128(BX)(R9*1); \
	PREFETCHT0 KWPFDIST+0(BX)(R8*4); \
	PREFETCHT0 KWPFDIST+64(BX)(R8*4); \
	PREFETCHT0 KWPFDIST+128(BX)(R8*4); \
	PREFETCHT0 KWPFDIST+0(BX)(R10*1); \
	PREFETCHT0 KWPFDIST+64(BX)(R10*1); \
	PREFETCHT0 KWPFDIST+128(BX)(R10*1); \
	PREFETCHT0 KWPFDIST+0(BX)(R9*2); \
	PREFETCHT0 KWPFDIST+64(BX)(R9*2); \
	PREFETCHT0 KWPFDIST+128(BX)(R9*2); \
	PREFETCHT0 KWPFDIST+0(BX)(R11*1); \
	PREFETCHT0 KWPFDIST+64(BX)(R11*1); \
	PREFETCHT0 KWPFDIST+128(BX)(R11*1)

#define KWPF4 \
	PREFETCHT0 KWPFDIST+0(SI); \
	PREFETCHT0 KWPFDIST+64(SI); \
	PREFETCHT0 KWPFDIST+128(SI); \
	PREFETCHT0 KWPFDIST+192(SI); \
	PREFETCHT0 KWPFDIST+0(SI)(R8*1); \
	PREFETCHT0 KWPFDIST+64(SI)(R8*1); \
	PREFETCHT0 KWPFDIST+128(SI)(R8*1); \
	PREFETCHT0 KWPFDIST+192(SI)(R8*1); \
	PREFETCHT0 KWPFDIST+0(SI)(R8*2); \
	PREFETCHT0 KWPFDIST+64(SI)(R8*2); \
	PREFETCHT0 KWPFDIST+128(SI)(R8*2); \
	PREFETCHT0 KWPFDIST+192(SI)(R8*2); \
	PREFETCHT0 KWPFDIST+0(SI)(R9*1); \
	PREFETCHT0 KWPFDIST+64(SI)(R9*1); \
	PREFETCHT0 KWPFDIST+128(SI)(R9*1); \
	PREFETCHT0 KWPFDIST+192(SI)(R9*1); \
	PREFETCHT0 KWPFDIST+0(SI)(R8*4); \
	PREFETCHT0 KWPFDIST+64(SI)(R8*4); \
	PREFETCHT0 KWPFDIST+128(SI)(R8*4); \
	PREFETCHT0 KWPFDIST+192(SI)(R8*4); \
	PREFETCHT0 KWPFDIST+0(SI)(R10*1); \
	PREFETCHT0 KWPFDIST+64(SI)(R10*1); \
	PREFETCHT0 KWPFDIST+128(SI)(R10*1); \
	PREFETCHT0 KWPFDIST+192(SI)(R10*1); \
	PREFETCHT0 KWPFDIST+0(SI)(R9*2); \
	PREFETCHT0 KWPFDIST+64(SI)(R9*2); \
	PREFETCHT0 KWPFDIST+128(SI)(R9*2); \
	PREFETCHT0 KWPFDIST+192(SI)(R9*2); \
	PREFETCHT0 KWPFDIST+0(SI)(R11*1); \
	PREFETCHT0 KWPFDIST+64(SI)(R11*1); \
	PREFETCHT0 KWPFDIST+128(SI)(R11*1); \
	PREFETCHT0 KWPFDIST+192(SI)(R11*1); \
	PREFETCHT0 KWPFDIST+0(BX); \
	PREFETCHT0 KWPFDIST+64(BX); \
	PREFETCHT0 KWPFDIST+128(BX); \
	PREFETCHT0 KWPFDIST+192(BX); \
	PREFETCHT0 KWPFDIST+0(BX)(R8*1); \
	PREFETCHT0 KWPFDIST+64(BX)(R8*1); \
	PREFETCHT0 KWPFDIST+128(BX)(R8*1); \
	PREFETCHT0 KWPFDIST+192(BX)(R8*1); \
	PREFETCHT0 KWPFDIST+0(BX)(R8*2); \
	PREFETCHT0 KWPFDIST+64(BX)(R8*2); \
	PREFETCHT0 KWPFDIST+128(BX)(R8*2); \
	PREFETCHT0 KWPFDIST+192(BX)(R8*2); \
	PREFETCHT0 KWPFDIST+0(BX)(R9*1); \
	PREFETCHT0 KWPFDIST+64(BX)(R9*1); \
	PREFETCHT0 KWPFDIST+128(BX)(R9*1); \
	PREFETCHT0 KWPFDIST+192(BX)(R9*1); \
	PREFETCHT0 KWPFDIST+0(BX)(R8*4); \
	PREFETCHT0 KWPFDIST+64(BX)(R8*4); \
	PREFETCHT0 KWPFDIST+128(BX)(R8*4); \
	PREFETCHT0 KWPFDIST+192(BX)(R8*4); \
	PREFETCHT0 KWPFDIST+0(BX)(R10*1); \
	PREFETCHT0 KWPFDIST+64(BX)(R10*1); \
	PREFETCHT0 KWPFDIST+128(BX)(R10*1); \
	PREFETCHT0 KWPFDIST+192(BX)(R10*1); \
	PREFETCHT0 KWPFDIST+0(BX)(R9*2); \
	PREFETCHT0 KWPFDIST+64(BX)(R9*2); \
	PREFETCHT0 KWPFDIST+128(BX)(R9*2); \
	PREFETCHT0 KWPFDIST+192(BX)(R9*2); \
	PREFETCHT0 KWPFDIST+0(BX)(R11*1); \
	PREFETCHT0 KWPFDIST+64(BX)(R11*1); \
	PREFETCHT0 KWPFDIST+128(BX)(R11*1); \
	PREFETCHT0 KWPFDIST+192(BX)(R11*1)

#define KWPFSETUP \
	MOVLQSX 4(AX), R8; \
	LEAQ (R8)(R8*2), R9; \
	LEAQ (R8)(R8*4), R10; \
	LEAQ (R9)(R8*4), R11; \
	LEAQ (SI)(R8*8), BX

#define KWPFDIST 1024

// func kWidenQ4_K(rows *byte, idx *int32, mask, nsb int, dst *byte)
TEXT ·kWidenQ4_K(SB), NOSPLIT, $0-40
	KWSETUP
kw4_loop:
	KWPF3
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
	ADDQ $144, BX
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
	KWPF4
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
	ADDQ $210, BX
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
// ---- avx2 -------------------------------------------------------------
// The same scratch layout, widened and run eight rows at a time (the low
// or high 32 bytes of every 64: the Go side passes dst or dst+32), with
// 256-bit gathers, and VPMADDUBSW for the products: each 16-bit lane of
// a sub-block's sum holds at most eight Q4_K pairs (8·2·15·128 = 30720)
// or two Q6_K ones (2·2·63·128 = 32256), so nothing saturates or wraps,
// and VPMADDWD applies the scales, which the avx2 widening stores as
// int16 pairs (sc, sc).

// KGATHER2 loads dword off of each of the eight rows (SI + Y15 lanes;
// rows outside the mask Y14 read as zero) into y (Y13 clobbered).
#define KGATHER2(off, y) \
	VMOVDQU Y14, Y13; \
	VPXOR y, y, y; \
	VPGATHERDD Y13, off(SI)(Y15*1), y

// KW2SETUP: Y15 = the rows' offsets, Y14 = the mask of the first nr of
// them (AX clobbered).
// KWPF2 prefetches as KWPF4 for the eight rows at SI.
#define KWPF2 \
	PREFETCHT0 KWPFDIST+0(SI); \
	PREFETCHT0 KWPFDIST+64(SI); \
	PREFETCHT0 KWPFDIST+128(SI); \
	PREFETCHT0 KWPFDIST+192(SI); \
	PREFETCHT0 KWPFDIST+0(SI)(R8*1); \
	PREFETCHT0 KWPFDIST+64(SI)(R8*1); \
	PREFETCHT0 KWPFDIST+128(SI)(R8*1); \
	PREFETCHT0 KWPFDIST+192(SI)(R8*1); \
	PREFETCHT0 KWPFDIST+0(SI)(R8*2); \
	PREFETCHT0 KWPFDIST+64(SI)(R8*2); \
	PREFETCHT0 KWPFDIST+128(SI)(R8*2); \
	PREFETCHT0 KWPFDIST+192(SI)(R8*2); \
	PREFETCHT0 KWPFDIST+0(SI)(R9*1); \
	PREFETCHT0 KWPFDIST+64(SI)(R9*1); \
	PREFETCHT0 KWPFDIST+128(SI)(R9*1); \
	PREFETCHT0 KWPFDIST+192(SI)(R9*1); \
	PREFETCHT0 KWPFDIST+0(SI)(R8*4); \
	PREFETCHT0 KWPFDIST+64(SI)(R8*4); \
	PREFETCHT0 KWPFDIST+128(SI)(R8*4); \
	PREFETCHT0 KWPFDIST+192(SI)(R8*4); \
	PREFETCHT0 KWPFDIST+0(SI)(R10*1); \
	PREFETCHT0 KWPFDIST+64(SI)(R10*1); \
	PREFETCHT0 KWPFDIST+128(SI)(R10*1); \
	PREFETCHT0 KWPFDIST+192(SI)(R10*1); \
	PREFETCHT0 KWPFDIST+0(SI)(R9*2); \
	PREFETCHT0 KWPFDIST+64(SI)(R9*2); \
	PREFETCHT0 KWPFDIST+128(SI)(R9*2); \
	PREFETCHT0 KWPFDIST+192(SI)(R9*2); \
	PREFETCHT0 KWPFDIST+0(SI)(R11*1); \
	PREFETCHT0 KWPFDIST+64(SI)(R11*1); \
	PREFETCHT0 KWPFDIST+128(SI)(R11*1); \
	PREFETCHT0 KWPFDIST+192(SI)(R11*1)

#define KW2SETUP \
	VMOVDQU (AX), Y15; \
	MOVLQSX 4(AX), R8; \
	LEAQ (R8)(R8*2), R9; \
	LEAQ (R8)(R8*4), R10; \
	LEAQ (R9)(R8*4), R11; \
	VMOVD BX, X14; \
	VPBROADCASTD X14, Y14; \
	VMOVDQU kwlanes<>(SB), Y13; \
	VPCMPGTD Y13, Y14, Y14

// KDUP turns int32 lanes y (values in int16) into pairs (y, y); Y12 =
// 0x0000ffff (t clobbered).
#define KDUP(y, t) \
	VPAND Y12, y, y; \
	VPSLLD $16, y, t; \
	VPOR t, y, y

// KWHALF2 stores the fp16 in the low (sh = 0) or high (sh = 16) half of
// each dword of y as a float at off(DI) (Y12 = 0x0000ffff).
#define KWHALF2(y, sh, off) \
	VPSRLD $sh, y, Y8; \
	VPAND Y12, Y8, Y8; \
	VPACKUSDW Y8, Y8, Y8; \
	VPERMQ $0x08, Y8, Y8; \
	VCVTPH2PS X8, Y8; \
	VMOVUPS Y8, off(DI)

// BCAST32 fills every dword of y with imm (AX clobbered).
#define BCAST32(imm, x, y) MOVL $imm, AX; VMOVD AX, x; VPBROADCASTD x, y

DATA kwlanes<>+0(SB)/8, $0x0000000100000000
DATA kwlanes<>+8(SB)/8, $0x0000000300000002
DATA kwlanes<>+16(SB)/8, $0x0000000500000004
DATA kwlanes<>+24(SB)/8, $0x0000000700000006
GLOBL kwlanes<>(SB), RODATA|NOPTR, $32

#define KW4QS2(j, k) \
	KGATHER2(16+32*j+4*k, Y0); \
	VPAND Y11, Y0, Y1; \
	VMOVDQU Y1, ((16*j+k)*64)(DI); \
	VPSRLD $4, Y0, Y2; \
	VPAND Y11, Y2, Y2; \
	VMOVDQU Y2, ((16*j+8+k)*64)(DI)

#define KW4LO2(j) \
	VPSRLD $(8*j), Y3, Y7; \
	VPAND Y10, Y7, Y7; \
	KDUP(Y7, Y8); \
	VMOVDQU Y7, (4096+64*j)(DI); \
	VPSRLD $(8*j), Y4, Y7; \
	VPAND Y10, Y7, Y7; \
	KDUP(Y7, Y8); \
	VMOVDQU Y7, (4608+64*j)(DI)

#define KW4HI2(i) \
	VPSRLD $(8*i), Y5, Y7; \
	VPAND Y9, Y7, Y7; \
	VPSRLD $(8*i+2), Y3, Y8; \
	VPAND Y6, Y8, Y8; \
	VPOR Y8, Y7, Y7; \
	KDUP(Y7, Y8); \
	VMOVDQU Y7, (4096+64*(4+i))(DI); \
	VPSRLD $(8*i+4), Y5, Y7; \
	VPAND Y9, Y7, Y7; \
	VPSRLD $(8*i+2), Y4, Y8; \
	VPAND Y6, Y8, Y8; \
	VPOR Y8, Y7, Y7; \
	KDUP(Y7, Y8); \
	VMOVDQU Y7, (4608+64*(4+i))(DI)

// func kWidenQ4_KAVX2(rows *byte, idx *int32, nr, nsb int, dst *byte)
TEXT ·kWidenQ4_KAVX2(SB), NOSPLIT, $0-40
	MOVQ rows+0(FP), SI
	MOVQ idx+8(FP), AX
	MOVQ nr+16(FP), BX
	MOVQ nsb+24(FP), CX
	MOVQ dst+32(FP), DI
	KW2SETUP
	BCAST32(0x0000ffff, X12, Y12)
	BCAST32(0x0f0f0f0f, X11, Y11)
	BCAST32(0x3f, X10, Y10)
	BCAST32(0x0f, X9, Y9)
kw42_loop:
	KWPF2
	KW4QS2(0, 0)
	KW4QS2(0, 1)
	KW4QS2(0, 2)
	KW4QS2(0, 3)
	KW4QS2(0, 4)
	KW4QS2(0, 5)
	KW4QS2(0, 6)
	KW4QS2(0, 7)
	KW4QS2(1, 0)
	KW4QS2(1, 1)
	KW4QS2(1, 2)
	KW4QS2(1, 3)
	KW4QS2(1, 4)
	KW4QS2(1, 5)
	KW4QS2(1, 6)
	KW4QS2(1, 7)
	KW4QS2(2, 0)
	KW4QS2(2, 1)
	KW4QS2(2, 2)
	KW4QS2(2, 3)
	KW4QS2(2, 4)
	KW4QS2(2, 5)
	KW4QS2(2, 6)
	KW4QS2(2, 7)
	KW4QS2(3, 0)
	KW4QS2(3, 1)
	KW4QS2(3, 2)
	KW4QS2(3, 3)
	KW4QS2(3, 4)
	KW4QS2(3, 5)
	KW4QS2(3, 6)
	KW4QS2(3, 7)
	BCAST32(0x30, X6, Y6)
	KGATHER2(4, Y3)
	KGATHER2(8, Y4)
	KGATHER2(12, Y5)
	KW4LO2(0)
	KW4LO2(1)
	KW4LO2(2)
	KW4LO2(3)
	KW4HI2(0)
	KW4HI2(1)
	KW4HI2(2)
	KW4HI2(3)
	KGATHER2(0, Y6)
	KWHALF2(Y6, 0, 5120)
	KWHALF2(Y6, 16, 5184)
	ADDQ $144, SI
	ADDQ $KQ4SB, DI
	DECQ CX
	JNZ  kw42_loop
	VZEROUPPER
	RET

#define KW6Q2(h, k) \
	KGATHER2(64*h+4*k, Y0); \
	KGATHER2(64*h+32+4*k, Y1); \
	KGATHER2(128+32*h+4*k, Y2); \
	VPAND Y11, Y0, Y3; \
	VPSLLD $4, Y2, Y4; \
	VPAND Y10, Y4, Y4; \
	VPOR Y4, Y3, Y3; \
	VMOVDQU Y3, ((32*h+k)*64)(DI); \
	VPAND Y11, Y1, Y3; \
	VPSLLD $2, Y2, Y4; \
	VPAND Y10, Y4, Y4; \
	VPOR Y4, Y3, Y3; \
	VMOVDQU Y3, ((32*h+8+k)*64)(DI); \
	VPSRLD $4, Y0, Y3; \
	VPAND Y11, Y3, Y3; \
	VPAND Y10, Y2, Y4; \
	VPOR Y4, Y3, Y3; \
	VMOVDQU Y3, ((32*h+16+k)*64)(DI); \
	VPSRLD $4, Y1, Y3; \
	VPAND Y11, Y3, Y3; \
	VPSRLD $2, Y2, Y4; \
	VPAND Y10, Y4, Y4; \
	VPOR Y4, Y3, Y3; \
	VMOVDQU Y3, ((32*h+24+k)*64)(DI)

#define KW6SC2(g) \
	KGATHER2(192+4*g, Y0); \
	VPSLLD $24, Y0, Y1; \
	VPSRAD $24, Y1, Y1; \
	VMOVDQU Y1, Y3; \
	KDUP(Y3, Y4); \
	VMOVDQU Y3, (4096+64*(4*g))(DI); \
	VPSLLD $16, Y0, Y2; \
	VPSRAD $24, Y2, Y2; \
	VMOVDQU Y2, Y3; \
	KDUP(Y3, Y4); \
	VMOVDQU Y3, (4096+64*(4*g+1))(DI); \
	VPAND Y12, Y1, Y1; \
	VPSLLD $16, Y2, Y2; \
	VPOR Y2, Y1, Y1; \
	VMOVDQU Y1, (5120+64*(2*g))(DI); \
	VPSLLD $8, Y0, Y1; \
	VPSRAD $24, Y1, Y1; \
	VMOVDQU Y1, Y3; \
	KDUP(Y3, Y4); \
	VMOVDQU Y3, (4096+64*(4*g+2))(DI); \
	VPSRAD $24, Y0, Y2; \
	VMOVDQU Y2, Y3; \
	KDUP(Y3, Y4); \
	VMOVDQU Y3, (4096+64*(4*g+3))(DI); \
	VPAND Y12, Y1, Y1; \
	VPSLLD $16, Y2, Y2; \
	VPOR Y2, Y1, Y1; \
	VMOVDQU Y1, (5120+64*(2*g+1))(DI)

// func kWidenQ6_KAVX2(rows *byte, idx *int32, nr, nsb int, dst *byte)
TEXT ·kWidenQ6_KAVX2(SB), NOSPLIT, $0-40
	MOVQ rows+0(FP), SI
	MOVQ idx+8(FP), AX
	MOVQ nr+16(FP), BX
	MOVQ nsb+24(FP), CX
	MOVQ dst+32(FP), DI
	KW2SETUP
	BCAST32(0x0000ffff, X12, Y12)
	BCAST32(0x0f0f0f0f, X11, Y11)
	BCAST32(0x30303030, X10, Y10)
kw62_loop:
	KWPF2
	KW6Q2(0, 0)
	KW6Q2(0, 1)
	KW6Q2(0, 2)
	KW6Q2(0, 3)
	KW6Q2(0, 4)
	KW6Q2(0, 5)
	KW6Q2(0, 6)
	KW6Q2(0, 7)
	KW6Q2(1, 0)
	KW6Q2(1, 1)
	KW6Q2(1, 2)
	KW6Q2(1, 3)
	KW6Q2(1, 4)
	KW6Q2(1, 5)
	KW6Q2(1, 6)
	KW6Q2(1, 7)
	KW6SC2(0)
	KW6SC2(1)
	KW6SC2(2)
	KW6SC2(3)
	KGATHER2(206, Y6)
	KWHALF2(Y6, 16, 5632)
	ADDQ $210, SI
	ADDQ $KQ6SB, DI
	DECQ CX
	JNZ  kw62_loop
	VZEROUPPER
	RET

// The avx2 tile kernels: eight rows against four activation rows (R8-
// R11); per row a, Y(a) the super-block's integer sum, Y(4+a) a
// sub-block's int16 sums (then the mins' or offsets' int32 sums), Y(8+a)
// the float sums.

// KG2 runs group off(SI) against the quants at xo of every row, into
// fresh (first) or accumulated int16 sums.
#define KG2FIRST(off, xo) \
	VMOVDQU off(SI), Y12; \
	VPBROADCASTD xo(R8), Y13; \
	VPMADDUBSW Y13, Y12, Y4; \
	VPBROADCASTD xo(R9), Y13; \
	VPMADDUBSW Y13, Y12, Y5; \
	VPBROADCASTD xo(R10), Y13; \
	VPMADDUBSW Y13, Y12, Y6; \
	VPBROADCASTD xo(R11), Y13; \
	VPMADDUBSW Y13, Y12, Y7

#define KG2(off, xo) \
	VMOVDQU off(SI), Y12; \
	VPBROADCASTD xo(R8), Y13; \
	VPMADDUBSW Y13, Y12, Y13; \
	VPADDW Y13, Y4, Y4; \
	VPBROADCASTD xo(R9), Y13; \
	VPMADDUBSW Y13, Y12, Y13; \
	VPADDW Y13, Y5, Y5; \
	VPBROADCASTD xo(R10), Y13; \
	VPMADDUBSW Y13, Y12, Y13; \
	VPADDW Y13, Y6, Y6; \
	VPBROADCASTD xo(R11), Y13; \
	VPMADDUBSW Y13, Y12, Y13; \
	VPADDW Y13, Y7, Y7

#define KSCALE2(off) \
	VMOVDQU off(SI), Y12; \
	VPMADDWD Y12, Y4, Y4; \
	VPADDD Y4, Y0, Y0; \
	VPMADDWD Y12, Y5, Y5; \
	VPADDD Y5, Y1, Y1; \
	VPMADDWD Y12, Y6, Y6; \
	VPADDD Y6, Y2, Y2; \
	VPMADDWD Y12, Y7, Y7; \
	VPADDD Y7, Y3, Y3

#define K4SUB2(s) \
	KG2FIRST((512*s), (4+32*s)); \
	KG2((512*s+64*1), (4+32*s+4*1)); \
	KG2((512*s+64*2), (4+32*s+4*2)); \
	KG2((512*s+64*3), (4+32*s+4*3)); \
	KG2((512*s+64*4), (4+32*s+4*4)); \
	KG2((512*s+64*5), (4+32*s+4*5)); \
	KG2((512*s+64*6), (4+32*s+4*6)); \
	KG2((512*s+64*7), (4+32*s+4*7)); \
	KSCALE2((4096+64*s))

#define K6SUB2(t) \
	KG2FIRST((256*t), (4+16*t)); \
	KG2((256*t+64), (4+16*t+4)); \
	KSCALE2((4096+64*t)); \
	KG2FIRST((256*t+128), (4+16*t+8)); \
	KG2((256*t+192), (4+16*t+12)); \
	KSCALE2((4096+64*t))

#define KPAIRS2(off) \
	VPXOR Y4, Y4, Y4; \
	VPXOR Y5, Y5, Y5; \
	VPXOR Y6, Y6, Y6; \
	VPXOR Y7, Y7, Y7; \
	VMOVDQU (off+64*0)(SI), Y12; \
	VPBROADCASTD (260+4*0)(R8), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y4, Y4; \
	VPBROADCASTD (260+4*0)(R9), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y5, Y5; \
	VPBROADCASTD (260+4*0)(R10), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y6, Y6; \
	VPBROADCASTD (260+4*0)(R11), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y7, Y7; \
	VMOVDQU (off+64*1)(SI), Y12; \
	VPBROADCASTD (260+4*1)(R8), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y4, Y4; \
	VPBROADCASTD (260+4*1)(R9), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y5, Y5; \
	VPBROADCASTD (260+4*1)(R10), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y6, Y6; \
	VPBROADCASTD (260+4*1)(R11), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y7, Y7; \
	VMOVDQU (off+64*2)(SI), Y12; \
	VPBROADCASTD (260+4*2)(R8), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y4, Y4; \
	VPBROADCASTD (260+4*2)(R9), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y5, Y5; \
	VPBROADCASTD (260+4*2)(R10), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y6, Y6; \
	VPBROADCASTD (260+4*2)(R11), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y7, Y7; \
	VMOVDQU (off+64*3)(SI), Y12; \
	VPBROADCASTD (260+4*3)(R8), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y4, Y4; \
	VPBROADCASTD (260+4*3)(R9), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y5, Y5; \
	VPBROADCASTD (260+4*3)(R10), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y6, Y6; \
	VPBROADCASTD (260+4*3)(R11), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y7, Y7; \
	VMOVDQU (off+64*4)(SI), Y12; \
	VPBROADCASTD (260+4*4)(R8), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y4, Y4; \
	VPBROADCASTD (260+4*4)(R9), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y5, Y5; \
	VPBROADCASTD (260+4*4)(R10), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y6, Y6; \
	VPBROADCASTD (260+4*4)(R11), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y7, Y7; \
	VMOVDQU (off+64*5)(SI), Y12; \
	VPBROADCASTD (260+4*5)(R8), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y4, Y4; \
	VPBROADCASTD (260+4*5)(R9), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y5, Y5; \
	VPBROADCASTD (260+4*5)(R10), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y6, Y6; \
	VPBROADCASTD (260+4*5)(R11), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y7, Y7; \
	VMOVDQU (off+64*6)(SI), Y12; \
	VPBROADCASTD (260+4*6)(R8), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y4, Y4; \
	VPBROADCASTD (260+4*6)(R9), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y5, Y5; \
	VPBROADCASTD (260+4*6)(R10), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y6, Y6; \
	VPBROADCASTD (260+4*6)(R11), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y7, Y7; \
	VMOVDQU (off+64*7)(SI), Y12; \
	VPBROADCASTD (260+4*7)(R8), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y4, Y4; \
	VPBROADCASTD (260+4*7)(R9), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y5, Y5; \
	VPBROADCASTD (260+4*7)(R10), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y6, Y6; \
	VPBROADCASTD (260+4*7)(R11), Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, Y7, Y7

// K4FL: Q4_K's float term for row x: acc += float32(d·dy·isum) −
// float32(dmin·dy·summs), d and dmin in Y12, Y13.
#define K4FL(x, isum, mins, acc) \
	VBROADCASTSS (x), Y14; \
	VMULPS Y14, Y12, Y15; \
	VCVTDQ2PS isum, isum; \
	VMULPS isum, Y15, Y15; \
	VMULPS Y14, Y13, Y14; \
	VCVTDQ2PS mins, mins; \
	VMULPS mins, Y14, Y14; \
	VSUBPS Y14, Y15, Y15; \
	VADDPS Y15, acc, acc

// K6FL: Q6_K's: isum −= 32·Σ sc·bsum, acc += float32(d·dy·isum), d in Y12.
#define K6FL(x, isum, offs, acc) \
	VPSLLD $5, offs, offs; \
	VPSUBD offs, isum, isum; \
	VBROADCASTSS (x), Y14; \
	VMULPS Y14, Y12, Y15; \
	VCVTDQ2PS isum, isum; \
	VMULPS isum, Y15, Y15; \
	VADDPS Y15, acc, acc

#define KT2SETUP \
	MOVQ 0(DI), R8; \
	MOVQ 8(DI), R9; \
	MOVQ 16(DI), R10; \
	MOVQ 24(DI), R11; \
	VPXOR Y8, Y8, Y8; \
	VPXOR Y9, Y9, Y9; \
	VPXOR Y10, Y10, Y10; \
	VPXOR Y11, Y11, Y11

#define KT2NEXT(sb) \
	ADDQ $sb, SI; \
	ADDQ $292, R8; \
	ADDQ $292, R9; \
	ADDQ $292, R10; \
	ADDQ $292, R11

#define KT2STORE \
	MOVQ 64(DI), AX; \
	VMOVUPS Y8, (AX); \
	MOVQ 72(DI), AX; \
	VMOVUPS Y9, (AX); \
	MOVQ 80(DI), AX; \
	VMOVUPS Y10, (AX); \
	MOVQ 88(DI), AX; \
	VMOVUPS Y11, (AX)

#define KISUMZERO2 \
	VPXOR Y0, Y0, Y0; \
	VPXOR Y1, Y1, Y1; \
	VPXOR Y2, Y2, Y2; \
	VPXOR Y3, Y3, Y3

// func kTileQ4_KAVX2(w *byte, nsb int, k *kTileRows)
TEXT ·kTileQ4_KAVX2(SB), NOSPLIT, $0-24
	MOVQ w+0(FP), SI
	MOVQ nsb+8(FP), CX
	MOVQ k+16(FP), DI
	KT2SETUP
kt42_loop:
	KISUMZERO2
	K4SUB2(0)
	K4SUB2(1)
	K4SUB2(2)
	K4SUB2(3)
	K4SUB2(4)
	K4SUB2(5)
	K4SUB2(6)
	K4SUB2(7)
	KPAIRS2(4608)
	VMOVUPS 5120(SI), Y12
	VMOVUPS 5184(SI), Y13
	K4FL(R8, Y0, Y4, Y8)
	K4FL(R9, Y1, Y5, Y9)
	K4FL(R10, Y2, Y6, Y10)
	K4FL(R11, Y3, Y7, Y11)
	KT2NEXT(KQ4SB)
	DECQ CX
	JNZ  kt42_loop
	KT2STORE
	VZEROUPPER
	RET

// func kTileQ6_KAVX2(w *byte, nsb int, k *kTileRows)
TEXT ·kTileQ6_KAVX2(SB), NOSPLIT, $0-24
	MOVQ w+0(FP), SI
	MOVQ nsb+8(FP), CX
	MOVQ k+16(FP), DI
	KT2SETUP
kt62_loop:
	KISUMZERO2
	K6SUB2(0)
	K6SUB2(1)
	K6SUB2(2)
	K6SUB2(3)
	K6SUB2(4)
	K6SUB2(5)
	K6SUB2(6)
	K6SUB2(7)
	K6SUB2(8)
	K6SUB2(9)
	K6SUB2(10)
	K6SUB2(11)
	K6SUB2(12)
	K6SUB2(13)
	K6SUB2(14)
	K6SUB2(15)
	KPAIRS2(5120)
	VMOVUPS 5632(SI), Y12
	K6FL(R8, Y0, Y4, Y8)
	K6FL(R9, Y1, Y5, Y9)
	K6FL(R10, Y2, Y6, Y10)
	K6FL(R11, Y3, Y7, Y11)
	KT2NEXT(KQ6SB)
	DECQ CX
	JNZ  kt62_loop
	KT2STORE
	VZEROUPPER
	RET

// ---- Q4_K × Q8_K, four rows at a time, 512-bit ------------------------
// A decode step's matrix-vector product (VecDotRows): each 128-bit lane
// of a Z register holds one of four weight rows. A row's 16-byte runs of
// quants are gathered into the lanes with VINSERTI32X4, the activation's
// matching 16 quants broadcast to every lane (VBROADCASTI32X4), and one
// VPDPBUSD forms four rows' partial sums at once. The scales and mins of
// the four rows are unpacked side by side (get_scale_min_k4 with dword
// shifts in each lane), each sub-block's scale spread over its row's lane
// by VPSHUFB, and the float terms of the four rows computed together in
// one X register with the generic code's operations, so every result is
// bit-identical to VecDot's.

// KPFDIST: prefetch distance, as PFDIST in dot_amd64.s.
#define KPFDIST 2048

DATA k4rsc<>+0(SB)/8, $0x8080800080808000
DATA k4rsc<>+8(SB)/8, $0x8080800080808000
DATA k4rsc<>+16(SB)/8, $0x8080800080808000
DATA k4rsc<>+24(SB)/8, $0x8080800080808000
DATA k4rsc<>+32(SB)/8, $0x8080800080808000
DATA k4rsc<>+40(SB)/8, $0x8080800080808000
DATA k4rsc<>+48(SB)/8, $0x8080800080808000
DATA k4rsc<>+56(SB)/8, $0x8080800080808000
DATA k4rsc<>+64(SB)/8, $0x8080800180808001
DATA k4rsc<>+72(SB)/8, $0x8080800180808001
DATA k4rsc<>+80(SB)/8, $0x8080800180808001
DATA k4rsc<>+88(SB)/8, $0x8080800180808001
DATA k4rsc<>+96(SB)/8, $0x8080800180808001
DATA k4rsc<>+104(SB)/8, $0x8080800180808001
DATA k4rsc<>+112(SB)/8, $0x8080800180808001
DATA k4rsc<>+120(SB)/8, $0x8080800180808001
DATA k4rsc<>+128(SB)/8, $0x8080800280808002
DATA k4rsc<>+136(SB)/8, $0x8080800280808002
DATA k4rsc<>+144(SB)/8, $0x8080800280808002
DATA k4rsc<>+152(SB)/8, $0x8080800280808002
DATA k4rsc<>+160(SB)/8, $0x8080800280808002
DATA k4rsc<>+168(SB)/8, $0x8080800280808002
DATA k4rsc<>+176(SB)/8, $0x8080800280808002
DATA k4rsc<>+184(SB)/8, $0x8080800280808002
DATA k4rsc<>+192(SB)/8, $0x8080800380808003
DATA k4rsc<>+200(SB)/8, $0x8080800380808003
DATA k4rsc<>+208(SB)/8, $0x8080800380808003
DATA k4rsc<>+216(SB)/8, $0x8080800380808003
DATA k4rsc<>+224(SB)/8, $0x8080800380808003
DATA k4rsc<>+232(SB)/8, $0x8080800380808003
DATA k4rsc<>+240(SB)/8, $0x8080800380808003
DATA k4rsc<>+248(SB)/8, $0x8080800380808003
DATA k4rsc<>+256(SB)/8, $0x8080800880808008
DATA k4rsc<>+264(SB)/8, $0x8080800880808008
DATA k4rsc<>+272(SB)/8, $0x8080800880808008
DATA k4rsc<>+280(SB)/8, $0x8080800880808008
DATA k4rsc<>+288(SB)/8, $0x8080800880808008
DATA k4rsc<>+296(SB)/8, $0x8080800880808008
DATA k4rsc<>+304(SB)/8, $0x8080800880808008
DATA k4rsc<>+312(SB)/8, $0x8080800880808008
DATA k4rsc<>+320(SB)/8, $0x8080800980808009
DATA k4rsc<>+328(SB)/8, $0x8080800980808009
DATA k4rsc<>+336(SB)/8, $0x8080800980808009
DATA k4rsc<>+344(SB)/8, $0x8080800980808009
DATA k4rsc<>+352(SB)/8, $0x8080800980808009
DATA k4rsc<>+360(SB)/8, $0x8080800980808009
DATA k4rsc<>+368(SB)/8, $0x8080800980808009
DATA k4rsc<>+376(SB)/8, $0x8080800980808009
DATA k4rsc<>+384(SB)/8, $0x8080800a8080800a
DATA k4rsc<>+392(SB)/8, $0x8080800a8080800a
DATA k4rsc<>+400(SB)/8, $0x8080800a8080800a
DATA k4rsc<>+408(SB)/8, $0x8080800a8080800a
DATA k4rsc<>+416(SB)/8, $0x8080800a8080800a
DATA k4rsc<>+424(SB)/8, $0x8080800a8080800a
DATA k4rsc<>+432(SB)/8, $0x8080800a8080800a
DATA k4rsc<>+440(SB)/8, $0x8080800a8080800a
DATA k4rsc<>+448(SB)/8, $0x8080800b8080800b
DATA k4rsc<>+456(SB)/8, $0x8080800b8080800b
DATA k4rsc<>+464(SB)/8, $0x8080800b8080800b
DATA k4rsc<>+472(SB)/8, $0x8080800b8080800b
DATA k4rsc<>+480(SB)/8, $0x8080800b8080800b
DATA k4rsc<>+488(SB)/8, $0x8080800b8080800b
DATA k4rsc<>+496(SB)/8, $0x8080800b8080800b
DATA k4rsc<>+504(SB)/8, $0x8080800b8080800b
GLOBL k4rsc<>(SB), RODATA|NOPTR, $512

DATA k4rmin<>+0(SB)/8, $0x8007800680058004
DATA k4rmin<>+8(SB)/8, $0x800f800e800d800c
DATA k4rmin<>+16(SB)/8, $0x8007800680058004
DATA k4rmin<>+24(SB)/8, $0x800f800e800d800c
DATA k4rmin<>+32(SB)/8, $0x8007800680058004
DATA k4rmin<>+40(SB)/8, $0x800f800e800d800c
DATA k4rmin<>+48(SB)/8, $0x8007800680058004
DATA k4rmin<>+56(SB)/8, $0x800f800e800d800c
GLOBL k4rmin<>(SB), RODATA|NOPTR, $64

DATA k4rdidx<>+0(SB)/8, $0x0000000400000000
DATA k4rdidx<>+8(SB)/8, $0x0000000c00000008
DATA k4rdidx<>+16(SB)/8, $0x0000000000000000
DATA k4rdidx<>+24(SB)/8, $0x0000000000000000
DATA k4rdidx<>+32(SB)/8, $0x0000000000000000
DATA k4rdidx<>+40(SB)/8, $0x0000000000000000
DATA k4rdidx<>+48(SB)/8, $0x0000000000000000
DATA k4rdidx<>+56(SB)/8, $0x0000000000000000
GLOBL k4rdidx<>(SB), RODATA|NOPTR, $64
DATA k4rwidx<>+0(SB)/8, $0x0018001000080000
DATA k4rwidx<>+8(SB)/8, $0x0019001100090001
DATA k4rwidx<>+16(SB)/8, $0x0000000000000000
DATA k4rwidx<>+24(SB)/8, $0x0000000000000000
DATA k4rwidx<>+32(SB)/8, $0x0000000000000000
DATA k4rwidx<>+40(SB)/8, $0x0000000000000000
DATA k4rwidx<>+48(SB)/8, $0x0000000000000000
DATA k4rwidx<>+56(SB)/8, $0x0000000000000000
GLOBL k4rwidx<>(SB), RODATA|NOPTR, $64
DATA k4rshift<>+0(SB)/8, $0x0000000000000000
DATA k4rshift<>+8(SB)/8, $0x0000000400000000
DATA k4rshift<>+16(SB)/8, $0x0000000000000000
DATA k4rshift<>+24(SB)/8, $0x0000000400000000
DATA k4rshift<>+32(SB)/8, $0x0000000000000000
DATA k4rshift<>+40(SB)/8, $0x0000000400000000
DATA k4rshift<>+48(SB)/8, $0x0000000000000000
DATA k4rshift<>+56(SB)/8, $0x0000000400000000
GLOBL k4rshift<>(SB), RODATA|NOPTR, $64

// K4RLOAD gathers bytes off..off+15 of the four rows (SI, R8 = stride,
// R9 = 3·stride) into the lanes of z.
#define K4RLOAD(off, x, z) \
	VMOVDQU off(SI), x; \
	VINSERTI32X4 $1, off(SI)(R8*1), z, z; \
	VINSERTI32X4 $2, off(SI)(R8*2), z, z; \
	VINSERTI32X4 $3, off(SI)(R9*1), z, z

// K4RRUN adds run c (half h of 32-byte run j) of the four rows: low
// nibbles into Z5 (sub-block 2j), high into Z6 (2j+1).
#define K4RRUN(j, h) \
	K4RLOAD((16+32*j+16*h), X1, Z1); \
	VPSRLW $4, Z1, Z2; \
	VPANDD Z31, Z1, Z1; \
	VPANDD Z31, Z2, Z2; \
	VBROADCASTI32X4 (4+64*j+16*h)(DI), Z3; \
	VBROADCASTI32X4 (4+64*j+32+16*h)(DI), Z4; \
	VPDPBUSD Z3, Z1, Z5; \
	VPDPBUSD Z4, Z2, Z6

// K4RJ adds sub-blocks 2j, 2j+1 times their scales to Z0.
#define K4RJ(j, o0, o1) \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	K4RRUN(j, 0); \
	K4RRUN(j, 1); \
	VPSHUFB k4rsc<>+o0(SB), Z10, Z7; \
	VPMULLD Z7, Z5, Z5; \
	VPADDD Z5, Z0, Z0; \
	VPSHUFB k4rsc<>+o1(SB), Z10, Z7; \
	VPMULLD Z7, Z6, Z6; \
	VPADDD Z6, Z0, Z0

// K4RLANESUM leaves the sum of each lane's four dwords in all four.
#define K4RLANESUM(z) \
	VPSHUFD $0x4e, z, Z13; \
	VPADDD Z13, z, z; \
	VPSHUFD $0xb1, z, Z13; \
	VPADDD Z13, z, z

// func dotQ4_KRows4AVX512(w *byte, stride, ngroups int, x *byte, nsb int, out *float32)
TEXT ·dotQ4_KRows4AVX512(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), R10
	MOVQ stride+8(FP), R8
	MOVQ ngroups+16(FP), DX
	MOVQ x+24(FP), R11
	MOVQ nsb+32(FP), R12
	MOVQ out+40(FP), BX
	LEAQ (R8)(R8*2), R9
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	MOVL $0x3f3f3f3f, AX
	VPBROADCASTD AX, Z29
	MOVL $0x30303030, AX
	VPBROADCASTD AX, Z28
	MOVL $0x00010001, AX
	VPBROADCASTD AX, Y30
	VMOVDQU64 k4rshift<>(SB), Z27
	VMOVDQU64 k4rdidx<>(SB), Z26
	VMOVDQU64 k4rwidx<>(SB), Z25
	MOVW $0x3333, AX
	KMOVW AX, K3
k4r_group:
	MOVQ R10, SI
	MOVQ R11, DI
	MOVQ R12, CX
	VPXORD X20, X20, X20
k4r_loop:
	PREFETCHT0 KPFDIST(SI)
	PREFETCHT0 KPFDIST+64(SI)
	PREFETCHT0 KPFDIST+128(SI)
	PREFETCHT0 KPFDIST(SI)(R8*1)
	PREFETCHT0 KPFDIST+64(SI)(R8*1)
	PREFETCHT0 KPFDIST+128(SI)(R8*1)
	PREFETCHT0 KPFDIST(SI)(R8*2)
	PREFETCHT0 KPFDIST+64(SI)(R8*2)
	PREFETCHT0 KPFDIST+128(SI)(R8*2)
	PREFETCHT0 KPFDIST(SI)(R9*1)
	PREFETCHT0 KPFDIST+64(SI)(R9*1)
	PREFETCHT0 KPFDIST+128(SI)(R9*1)
	// scales: each lane's bytes 0-15 are d, dmin, A, B, C
	K4RLOAD(0, X8, Z8)
	VPSHUFD $0x99, Z8, Z9 // A, B, A, B
	VPSHUFD $0xff, Z8, Z10 // C, C, C, C
	VPSRLVD Z27, Z10, Z10 // C, C, C, C>>4
	VPANDD Z31, Z10, Z10
	VPSRLD $2, Z9, Z11
	VPANDD Z28, Z11, Z11
	VPORD Z11, Z10, Z10 // dword 2: sc4-7, dword 3: m4-7
	VPANDD Z29, Z9, Z9 // dword 0: sc0-3, dword 1: m0-3
	VMOVDQA32 Z9, K3, Z10
	VPXORD Z0, Z0, Z0
	K4RJ(0, 0, 64)
	K4RJ(1, 128, 192)
	K4RJ(2, 256, 320)
	K4RJ(3, 384, 448)
	// summs = Σ m·(bsum pair) for each row
	VPSHUFB k4rmin<>(SB), Z10, Z11
	VPMADDWD 260(DI), Y30, Y12
	VPMOVDW Y12, X12
	VSHUFI32X4 $0, Z12, Z12, Z12
	VPMADDWD Z12, Z11, Z11
	K4RLANESUM(Z0)
	K4RLANESUM(Z11)
	VPERMD Z0, Z26, Z14
	VPERMD Z11, Z26, Z15
	VCVTDQ2PS X14, X14
	VCVTDQ2PS X15, X15
	VPERMW Z8, Z25, Z16
	VCVTPH2PS X16, Y16 // d0-3, dmin0-3
	VBROADCASTSS (DI), Y17
	VMULPS Y17, Y16, Y16
	VEXTRACTF32X4 $1, Y16, X18
	VMULPS X14, X16, X14
	VMULPS X15, X18, X15
	VSUBPS X15, X14, X14
	VADDPS X14, X20, X20
	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  k4r_loop
	VMOVUPS X20, (BX)
	ADDQ $16, BX
	LEAQ (R10)(R8*4), R10
	DECQ DX
	JNZ  k4r_group
	VZEROUPPER
	RET
// ---- Q6_K × Q8_K, four rows at a time, 512-bit ------------------------
// As the Q4_K kernel above: one row per 128-bit lane. Each 16-byte run
// of low bits and of high bits gives four 16-quant sub-blocks of the four
// rows; VPMADDUBSW multiplies one by the broadcast activations (pairs of
// at most 2·63·128, which cannot saturate) and VPDPWSSD adds them times
// the sub-block's scale, sign-extended to words and spread over the
// row's lane by VPSHUFB. The offset −32·Σ sc·bsum is taken from the
// activation's bsums as in the one-row kernel.

DATA k6rsc<>+0(SB)/8, $0x0100010001000100
DATA k6rsc<>+8(SB)/8, $0x0100010001000100
DATA k6rsc<>+16(SB)/8, $0x0100010001000100
DATA k6rsc<>+24(SB)/8, $0x0100010001000100
DATA k6rsc<>+32(SB)/8, $0x0100010001000100
DATA k6rsc<>+40(SB)/8, $0x0100010001000100
DATA k6rsc<>+48(SB)/8, $0x0100010001000100
DATA k6rsc<>+56(SB)/8, $0x0100010001000100
DATA k6rsc<>+64(SB)/8, $0x0302030203020302
DATA k6rsc<>+72(SB)/8, $0x0302030203020302
DATA k6rsc<>+80(SB)/8, $0x0302030203020302
DATA k6rsc<>+88(SB)/8, $0x0302030203020302
DATA k6rsc<>+96(SB)/8, $0x0302030203020302
DATA k6rsc<>+104(SB)/8, $0x0302030203020302
DATA k6rsc<>+112(SB)/8, $0x0302030203020302
DATA k6rsc<>+120(SB)/8, $0x0302030203020302
DATA k6rsc<>+128(SB)/8, $0x0504050405040504
DATA k6rsc<>+136(SB)/8, $0x0504050405040504
DATA k6rsc<>+144(SB)/8, $0x0504050405040504
DATA k6rsc<>+152(SB)/8, $0x0504050405040504
DATA k6rsc<>+160(SB)/8, $0x0504050405040504
DATA k6rsc<>+168(SB)/8, $0x0504050405040504
DATA k6rsc<>+176(SB)/8, $0x0504050405040504
DATA k6rsc<>+184(SB)/8, $0x0504050405040504
DATA k6rsc<>+192(SB)/8, $0x0706070607060706
DATA k6rsc<>+200(SB)/8, $0x0706070607060706
DATA k6rsc<>+208(SB)/8, $0x0706070607060706
DATA k6rsc<>+216(SB)/8, $0x0706070607060706
DATA k6rsc<>+224(SB)/8, $0x0706070607060706
DATA k6rsc<>+232(SB)/8, $0x0706070607060706
DATA k6rsc<>+240(SB)/8, $0x0706070607060706
DATA k6rsc<>+248(SB)/8, $0x0706070607060706
DATA k6rsc<>+256(SB)/8, $0x0908090809080908
DATA k6rsc<>+264(SB)/8, $0x0908090809080908
DATA k6rsc<>+272(SB)/8, $0x0908090809080908
DATA k6rsc<>+280(SB)/8, $0x0908090809080908
DATA k6rsc<>+288(SB)/8, $0x0908090809080908
DATA k6rsc<>+296(SB)/8, $0x0908090809080908
DATA k6rsc<>+304(SB)/8, $0x0908090809080908
DATA k6rsc<>+312(SB)/8, $0x0908090809080908
DATA k6rsc<>+320(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k6rsc<>+328(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k6rsc<>+336(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k6rsc<>+344(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k6rsc<>+352(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k6rsc<>+360(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k6rsc<>+368(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k6rsc<>+376(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k6rsc<>+384(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k6rsc<>+392(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k6rsc<>+400(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k6rsc<>+408(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k6rsc<>+416(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k6rsc<>+424(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k6rsc<>+432(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k6rsc<>+440(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k6rsc<>+448(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k6rsc<>+456(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k6rsc<>+464(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k6rsc<>+472(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k6rsc<>+480(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k6rsc<>+488(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k6rsc<>+496(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k6rsc<>+504(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL k6rsc<>(SB), RODATA|NOPTR, $512
DATA k6rwidx<>+0(SB)/8, $0x001f0017000f0007
DATA k6rwidx<>+8(SB)/8, $0x0000000000000000
DATA k6rwidx<>+16(SB)/8, $0x0000000000000000
DATA k6rwidx<>+24(SB)/8, $0x0000000000000000
DATA k6rwidx<>+32(SB)/8, $0x0000000000000000
DATA k6rwidx<>+40(SB)/8, $0x0000000000000000
DATA k6rwidx<>+48(SB)/8, $0x0000000000000000
DATA k6rwidx<>+56(SB)/8, $0x0000000000000000
GLOBL k6rwidx<>(SB), RODATA|NOPTR, $64

// K6RSUB adds sub-block t of the four rows (quants in q) times its
// scales (words in sc, at offset so of k6rsc) to Z0.
#define K6RSUB(q, ao, sc, so) \
	VBROADCASTI32X4 ao(DI), Z6; \
	VPMADDUBSW Z6, q, Z6; \
	VPSHUFB k6rsc<>+so(SB), sc, Z7; \
	VPDPWSSD Z7, Z6, Z0

// K6RRUN adds run h of half n: sub-blocks 8n+h, +2, +4, +6.
#define K6RRUN(n, h, a1, a2, a3, a4, sc, s1, s2, s3, s4) \
	K4RLOAD((64*n+16*h), X1, Z1); \
	K4RLOAD((64*n+32+16*h), X2, Z2); \
	K4RLOAD((128+32*n+16*h), X3, Z3); \
	VPANDD Z31, Z1, Z4; \
	VPSLLD $4, Z3, Z5; \
	VPANDD Z28, Z5, Z5; \
	VPORD Z5, Z4, Z4; \
	K6RSUB(Z4, a1, sc, s1); \
	VPANDD Z31, Z2, Z4; \
	VPSLLD $2, Z3, Z5; \
	VPANDD Z28, Z5, Z5; \
	VPORD Z5, Z4, Z4; \
	K6RSUB(Z4, a2, sc, s2); \
	VPSRLD $4, Z1, Z4; \
	VPANDD Z31, Z4, Z4; \
	VPANDD Z28, Z3, Z5; \
	VPORD Z5, Z4, Z4; \
	K6RSUB(Z4, a3, sc, s3); \
	VPSRLD $4, Z2, Z4; \
	VPANDD Z31, Z4, Z4; \
	VPSRLD $2, Z3, Z5; \
	VPANDD Z28, Z5, Z5; \
	VPORD Z5, Z4, Z4; \
	K6RSUB(Z4, a4, sc, s4)

// func dotQ6_KRows4AVX512(w *byte, stride, ngroups int, x *byte, nsb int, out *float32)
TEXT ·dotQ6_KRows4AVX512(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), R10
	MOVQ stride+8(FP), R8
	MOVQ ngroups+16(FP), DX
	MOVQ x+24(FP), R11
	MOVQ nsb+32(FP), R12
	MOVQ out+40(FP), BX
	LEAQ (R8)(R8*2), R9
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	MOVL $0x30303030, AX
	VPBROADCASTD AX, Z28
	VMOVDQU64 k4rdidx<>(SB), Z26
	VMOVDQU64 k6rwidx<>(SB), Z25
k6r_group:
	MOVQ R10, SI
	MOVQ R11, DI
	MOVQ R12, CX
	VPXORD X20, X20, X20
k6r_loop:
	PREFETCHT0 KPFDIST(SI)
	PREFETCHT0 KPFDIST+64(SI)
	PREFETCHT0 KPFDIST+128(SI)
	PREFETCHT0 KPFDIST+192(SI)
	PREFETCHT0 KPFDIST(SI)(R8*1)
	PREFETCHT0 KPFDIST+64(SI)(R8*1)
	PREFETCHT0 KPFDIST+128(SI)(R8*1)
	PREFETCHT0 KPFDIST+192(SI)(R8*1)
	PREFETCHT0 KPFDIST(SI)(R8*2)
	PREFETCHT0 KPFDIST+64(SI)(R8*2)
	PREFETCHT0 KPFDIST+128(SI)(R8*2)
	PREFETCHT0 KPFDIST+192(SI)(R8*2)
	PREFETCHT0 KPFDIST(SI)(R9*1)
	PREFETCHT0 KPFDIST+64(SI)(R9*1)
	PREFETCHT0 KPFDIST+128(SI)(R9*1)
	PREFETCHT0 KPFDIST+192(SI)(R9*1)
	K4RLOAD(192, X8, Z8) // the scales
	VPUNPCKLBW Z8, Z8, Z9
	VPSRAW $8, Z9, Z9 // sc0-7 as words
	VPUNPCKHBW Z8, Z8, Z10
	VPSRAW $8, Z10, Z10 // sc8-15
	VPXORD Z0, Z0, Z0
	K6RRUN(0, 0, 4, 36, 68, 100, Z9, 0, 128, 256, 384)
	K6RRUN(0, 1, 20, 52, 84, 116, Z9, 64, 192, 320, 448)
	K6RRUN(1, 0, 132, 164, 196, 228, Z10, 0, 128, 256, 384)
	K6RRUN(1, 1, 148, 180, 212, 244, Z10, 64, 192, 320, 448)
	// isum −= 32·Σ sc·bsum
	VBROADCASTI32X4 260(DI), Z11
	VPMADDWD Z11, Z9, Z11
	VBROADCASTI32X4 276(DI), Z12
	VPMADDWD Z12, Z10, Z12
	VPADDD Z12, Z11, Z11
	VPSLLD $5, Z11, Z11
	VPSUBD Z11, Z0, Z0
	K4RLANESUM(Z0)
	VPERMD Z0, Z26, Z14
	VCVTDQ2PS X14, X14
	K4RLOAD(194, X8, Z8) // d is word 7 of each lane
	VPERMW Z8, Z25, Z16
	VCVTPH2PS X16, X16
	VBROADCASTSS (DI), X17
	VMULPS X17, X16, X16
	VMULPS X14, X16, X16
	VADDPS X16, X20, X20
	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  k6r_loop
	VMOVUPS X20, (BX)
	ADDQ $16, BX
	LEAQ (R10)(R8*4), R10
	DECQ DX
	JNZ  k6r_group
	VZEROUPPER
	RET
// ---- Q4_K and Q6_K × Q8_K, two rows at a time, avx2 ---------------------
// The four-row kernels' scheme with one row per 128-bit lane of a Y
// register: VPMADDUBSW forms the products in int16 lanes (at most four
// Q4_K or two Q6_K products each, which cannot saturate), and VPMADDWD
// multiplies them by the sub-block's scale spread over the row's lane as
// word pairs.

DATA k4r2sc<>+0(SB)/8, $0x8000800080008000
DATA k4r2sc<>+8(SB)/8, $0x8000800080008000
DATA k4r2sc<>+16(SB)/8, $0x8000800080008000
DATA k4r2sc<>+24(SB)/8, $0x8000800080008000
DATA k4r2sc<>+32(SB)/8, $0x8001800180018001
DATA k4r2sc<>+40(SB)/8, $0x8001800180018001
DATA k4r2sc<>+48(SB)/8, $0x8001800180018001
DATA k4r2sc<>+56(SB)/8, $0x8001800180018001
DATA k4r2sc<>+64(SB)/8, $0x8002800280028002
DATA k4r2sc<>+72(SB)/8, $0x8002800280028002
DATA k4r2sc<>+80(SB)/8, $0x8002800280028002
DATA k4r2sc<>+88(SB)/8, $0x8002800280028002
DATA k4r2sc<>+96(SB)/8, $0x8003800380038003
DATA k4r2sc<>+104(SB)/8, $0x8003800380038003
DATA k4r2sc<>+112(SB)/8, $0x8003800380038003
DATA k4r2sc<>+120(SB)/8, $0x8003800380038003
DATA k4r2sc<>+128(SB)/8, $0x8008800880088008
DATA k4r2sc<>+136(SB)/8, $0x8008800880088008
DATA k4r2sc<>+144(SB)/8, $0x8008800880088008
DATA k4r2sc<>+152(SB)/8, $0x8008800880088008
DATA k4r2sc<>+160(SB)/8, $0x8009800980098009
DATA k4r2sc<>+168(SB)/8, $0x8009800980098009
DATA k4r2sc<>+176(SB)/8, $0x8009800980098009
DATA k4r2sc<>+184(SB)/8, $0x8009800980098009
DATA k4r2sc<>+192(SB)/8, $0x800a800a800a800a
DATA k4r2sc<>+200(SB)/8, $0x800a800a800a800a
DATA k4r2sc<>+208(SB)/8, $0x800a800a800a800a
DATA k4r2sc<>+216(SB)/8, $0x800a800a800a800a
DATA k4r2sc<>+224(SB)/8, $0x800b800b800b800b
DATA k4r2sc<>+232(SB)/8, $0x800b800b800b800b
DATA k4r2sc<>+240(SB)/8, $0x800b800b800b800b
DATA k4r2sc<>+248(SB)/8, $0x800b800b800b800b
GLOBL k4r2sc<>(SB), RODATA|NOPTR, $256
DATA k4r2min<>+0(SB)/8, $0x8007800680058004
DATA k4r2min<>+8(SB)/8, $0x800f800e800d800c
DATA k4r2min<>+16(SB)/8, $0x8007800680058004
DATA k4r2min<>+24(SB)/8, $0x800f800e800d800c
GLOBL k4r2min<>(SB), RODATA|NOPTR, $32
DATA k4r2shift<>+0(SB)/8, $0x0000000000000000
DATA k4r2shift<>+8(SB)/8, $0x0000000400000000
DATA k4r2shift<>+16(SB)/8, $0x0000000000000000
DATA k4r2shift<>+24(SB)/8, $0x0000000400000000
GLOBL k4r2shift<>(SB), RODATA|NOPTR, $32
DATA k4r2c3f<>+0(SB)/8, $0x3f3f3f3f3f3f3f3f
DATA k4r2c3f<>+8(SB)/8, $0x3f3f3f3f3f3f3f3f
DATA k4r2c3f<>+16(SB)/8, $0x3f3f3f3f3f3f3f3f
DATA k4r2c3f<>+24(SB)/8, $0x3f3f3f3f3f3f3f3f
GLOBL k4r2c3f<>(SB), RODATA|NOPTR, $32
DATA k4r2c30<>+0(SB)/8, $0x3030303030303030
DATA k4r2c30<>+8(SB)/8, $0x3030303030303030
DATA k4r2c30<>+16(SB)/8, $0x3030303030303030
DATA k4r2c30<>+24(SB)/8, $0x3030303030303030
GLOBL k4r2c30<>(SB), RODATA|NOPTR, $32
DATA k6r2sc<>+0(SB)/8, $0x0100010001000100
DATA k6r2sc<>+8(SB)/8, $0x0100010001000100
DATA k6r2sc<>+16(SB)/8, $0x0100010001000100
DATA k6r2sc<>+24(SB)/8, $0x0100010001000100
DATA k6r2sc<>+32(SB)/8, $0x0302030203020302
DATA k6r2sc<>+40(SB)/8, $0x0302030203020302
DATA k6r2sc<>+48(SB)/8, $0x0302030203020302
DATA k6r2sc<>+56(SB)/8, $0x0302030203020302
DATA k6r2sc<>+64(SB)/8, $0x0504050405040504
DATA k6r2sc<>+72(SB)/8, $0x0504050405040504
DATA k6r2sc<>+80(SB)/8, $0x0504050405040504
DATA k6r2sc<>+88(SB)/8, $0x0504050405040504
DATA k6r2sc<>+96(SB)/8, $0x0706070607060706
DATA k6r2sc<>+104(SB)/8, $0x0706070607060706
DATA k6r2sc<>+112(SB)/8, $0x0706070607060706
DATA k6r2sc<>+120(SB)/8, $0x0706070607060706
DATA k6r2sc<>+128(SB)/8, $0x0908090809080908
DATA k6r2sc<>+136(SB)/8, $0x0908090809080908
DATA k6r2sc<>+144(SB)/8, $0x0908090809080908
DATA k6r2sc<>+152(SB)/8, $0x0908090809080908
DATA k6r2sc<>+160(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k6r2sc<>+168(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k6r2sc<>+176(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k6r2sc<>+184(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k6r2sc<>+192(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k6r2sc<>+200(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k6r2sc<>+208(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k6r2sc<>+216(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k6r2sc<>+224(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k6r2sc<>+232(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k6r2sc<>+240(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k6r2sc<>+248(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL k6r2sc<>(SB), RODATA|NOPTR, $256

#define K2LOAD(off, x, y) \
	VMOVDQU off(SI), x; \
	VINSERTI128 $1, off(SI)(R8*1), y, y

#define K42RUN(j, h) \
	K2LOAD((16+32*j+16*h), X1, Y1); \
	VPSRLW $4, Y1, Y2; \
	VPAND Y14, Y1, Y1; \
	VPAND Y14, Y2, Y2; \
	VBROADCASTI128 (4+64*j+16*h)(DI), Y3; \
	VPMADDUBSW Y3, Y1, Y1; \
	VBROADCASTI128 (4+64*j+32+16*h)(DI), Y3; \
	VPMADDUBSW Y3, Y2, Y2

#define K42J(j, o0, o1) \
	K42RUN(j, 0); \
	VMOVDQA Y1, Y4; \
	VMOVDQA Y2, Y5; \
	K42RUN(j, 1); \
	VPADDW Y1, Y4, Y4; \
	VPADDW Y2, Y5, Y5; \
	VPSHUFB k4r2sc<>+o0(SB), Y10, Y6; \
	VPMADDWD Y6, Y4, Y4; \
	VPADDD Y4, Y0, Y0; \
	VPSHUFB k4r2sc<>+o1(SB), Y10, Y6; \
	VPMADDWD Y6, Y5, Y5; \
	VPADDD Y5, Y0, Y0

#define K2LANESUM(y) \
	VPSHUFD $0x4e, y, Y7; \
	VPADDD Y7, y, y; \
	VPSHUFD $0xb1, y, Y7; \
	VPADDD Y7, y, y

// K2PAIR leaves the two rows' lane sums (dword 0 of each lane of y) in x's
// dwords 0 and 1.
#define K2PAIR(y, x) \
	VEXTRACTI128 $1, y, X7; \
	VPUNPCKLDQ X7, x, x

// func dotQ4_KRows2AVX2(w *byte, stride, npairs int, x *byte, nsb int, out *float32)
TEXT ·dotQ4_KRows2AVX2(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), R10
	MOVQ stride+8(FP), R8
	MOVQ npairs+16(FP), DX
	MOVQ x+24(FP), R11
	MOVQ nsb+32(FP), R12
	MOVQ out+40(FP), BX
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	VMOVDQU k4r2shift<>(SB), Y15
	MOVL $0x00010001, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13
k42_pair:
	MOVQ R10, SI
	MOVQ R11, DI
	MOVQ R12, CX
	VPXOR X12, X12, X12
k42_loop:
	PREFETCHT0 KPFDIST(SI)
	PREFETCHT0 KPFDIST+64(SI)
	PREFETCHT0 KPFDIST+128(SI)
	PREFETCHT0 KPFDIST(SI)(R8*1)
	PREFETCHT0 KPFDIST+64(SI)(R8*1)
	PREFETCHT0 KPFDIST+128(SI)(R8*1)
	K2LOAD(0, X8, Y8)
	VPSHUFD $0x99, Y8, Y9
	VPSHUFD $0xff, Y8, Y10
	VPSRLVD Y15, Y10, Y10
	VPAND Y14, Y10, Y10
	VPSRLD $2, Y9, Y11
	VPAND k4r2c30<>(SB), Y11, Y11
	VPOR Y11, Y10, Y10
	VPAND k4r2c3f<>(SB), Y9, Y9
	VPBLENDD $0x33, Y9, Y10, Y10
	VPXOR Y0, Y0, Y0
	K42J(0, 0, 32)
	K42J(1, 64, 96)
	K42J(2, 128, 160)
	K42J(3, 192, 224)
	VPSHUFB k4r2min<>(SB), Y10, Y11
	VPMADDWD 260(DI), Y13, Y6
	VPACKSSDW Y6, Y6, Y6
	VPERMQ $0x88, Y6, Y6
	VPMADDWD Y6, Y11, Y11
	K2LANESUM(Y0)
	K2LANESUM(Y11)
	K2PAIR(Y0, X0)
	K2PAIR(Y11, X11)
	VCVTDQ2PS X0, X0
	VCVTDQ2PS X11, X11
	VEXTRACTI128 $1, Y8, X9
	VPUNPCKLDQ X9, X8, X9
	VCVTPH2PS X9, X9 // d0, dmin0, d1, dmin1
	VBROADCASTSS (DI), X6
	VMULPS X6, X9, X9
	VPSHUFD $0x08, X9, X1 // d·dy
	VPSHUFD $0x0d, X9, X2 // dmin·dy
	VMULPS X0, X1, X1
	VMULPS X11, X2, X2
	VSUBPS X2, X1, X1
	VADDPS X1, X12, X12
	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  k42_loop
	VMOVQ X12, (BX)
	ADDQ $8, BX
	LEAQ (R10)(R8*2), R10
	DECQ DX
	JNZ  k42_pair
	VZEROUPPER
	RET

#define K62SUB(q, ao, sc, so) \
	VBROADCASTI128 ao(DI), Y6; \
	VPMADDUBSW Y6, q, Y6; \
	VPSHUFB k6r2sc<>+so(SB), sc, Y7; \
	VPMADDWD Y7, Y6, Y6; \
	VPADDD Y6, Y0, Y0

#define K62RUN(n, h, a1, a2, a3, a4, sc, s1, s2, s3, s4) \
	K2LOAD((64*n+16*h), X1, Y1); \
	K2LOAD((64*n+32+16*h), X2, Y2); \
	K2LOAD((128+32*n+16*h), X3, Y3); \
	VPAND Y14, Y1, Y4; \
	VPSLLD $4, Y3, Y5; \
	VPAND Y13, Y5, Y5; \
	VPOR Y5, Y4, Y4; \
	K62SUB(Y4, a1, sc, s1); \
	VPAND Y14, Y2, Y4; \
	VPSLLD $2, Y3, Y5; \
	VPAND Y13, Y5, Y5; \
	VPOR Y5, Y4, Y4; \
	K62SUB(Y4, a2, sc, s2); \
	VPSRLD $4, Y1, Y4; \
	VPAND Y14, Y4, Y4; \
	VPAND Y13, Y3, Y5; \
	VPOR Y5, Y4, Y4; \
	K62SUB(Y4, a3, sc, s3); \
	VPSRLD $4, Y2, Y4; \
	VPAND Y14, Y4, Y4; \
	VPSRLD $2, Y3, Y5; \
	VPAND Y13, Y5, Y5; \
	VPOR Y5, Y4, Y4; \
	K62SUB(Y4, a4, sc, s4)

// func dotQ6_KRows2AVX2(w *byte, stride, npairs int, x *byte, nsb int, out *float32)
TEXT ·dotQ6_KRows2AVX2(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), R10
	MOVQ stride+8(FP), R8
	MOVQ npairs+16(FP), DX
	MOVQ x+24(FP), R11
	MOVQ nsb+32(FP), R12
	MOVQ out+40(FP), BX
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x30303030, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13
k62_pair:
	MOVQ R10, SI
	MOVQ R11, DI
	MOVQ R12, CX
	VPXOR X12, X12, X12
k62_loop:
	PREFETCHT0 KPFDIST(SI)
	PREFETCHT0 KPFDIST+64(SI)
	PREFETCHT0 KPFDIST+128(SI)
	PREFETCHT0 KPFDIST+192(SI)
	PREFETCHT0 KPFDIST(SI)(R8*1)
	PREFETCHT0 KPFDIST+64(SI)(R8*1)
	PREFETCHT0 KPFDIST+128(SI)(R8*1)
	PREFETCHT0 KPFDIST+192(SI)(R8*1)
	K2LOAD(192, X8, Y8)
	VPUNPCKLBW Y8, Y8, Y9
	VPSRAW $8, Y9, Y9
	VPUNPCKHBW Y8, Y8, Y10
	VPSRAW $8, Y10, Y10
	VPXOR Y0, Y0, Y0
	K62RUN(0, 0, 4, 36, 68, 100, Y9, 0, 64, 128, 192)
	K62RUN(0, 1, 20, 52, 84, 116, Y9, 32, 96, 160, 224)
	K62RUN(1, 0, 132, 164, 196, 228, Y10, 0, 64, 128, 192)
	K62RUN(1, 1, 148, 180, 212, 244, Y10, 32, 96, 160, 224)
	VBROADCASTI128 260(DI), Y11
	VPMADDWD Y11, Y9, Y11
	VBROADCASTI128 276(DI), Y6
	VPMADDWD Y6, Y10, Y6
	VPADDD Y6, Y11, Y11
	VPSLLD $5, Y11, Y11
	VPSUBD Y11, Y0, Y0
	K2LANESUM(Y0)
	K2PAIR(Y0, X0)
	VCVTDQ2PS X0, X0
	MOVWLZX 208(SI), AX
	VMOVD AX, X9
	MOVWLZX 208(SI)(R8*1), AX
	VPINSRW $1, AX, X9, X9
	VCVTPH2PS X9, X9
	VBROADCASTSS (DI), X6
	VMULPS X6, X9, X9
	VMULPS X0, X9, X9
	VADDPS X9, X12, X12
	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  k62_loop
	VMOVQ X12, (BX)
	ADDQ $8, BX
	LEAQ (R10)(R8*2), R10
	DECQ DX
	JNZ  k62_pair
	VZEROUPPER
	RET
