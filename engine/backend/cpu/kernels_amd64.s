//go:build amd64 && !noasm

#include "textflag.h"

// AVX2 + FMA + F16C kernels; Go twins in kernels.go.

// func cvtF16Asm(dst *float32, src *uint16, n int)
TEXT ·cvtF16Asm(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

cvt32:
	CMPQ CX, $32
	JL   cvt8
	VCVTPH2PS (SI), Y0
	VCVTPH2PS 16(SI), Y1
	VCVTPH2PS 32(SI), Y2
	VCVTPH2PS 48(SI), Y3
	VMOVUPS   Y0, (DI)
	VMOVUPS   Y1, 32(DI)
	VMOVUPS   Y2, 64(DI)
	VMOVUPS   Y3, 96(DI)
	ADDQ      $64, SI
	ADDQ      $128, DI
	SUBQ      $32, CX
	JMP       cvt32

cvt8:
	CMPQ      CX, $8
	JL        cvt1
	VCVTPH2PS (SI), Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       cvt8

cvt1:
	TESTQ     CX, CX
	JE        cvtdone
	MOVWLZX   (SI), AX
	VMOVQ     AX, X0
	VCVTPH2PS X0, X0
	VMOVSS    X0, (DI)
	ADDQ      $2, SI
	ADDQ      $4, DI
	DECQ      CX
	JMP       cvt1

cvtdone:
	VZEROUPPER
	RET

// func dotsAsm(dst, q, k *float32, d, nk, stride int, scale float32)
// dst[t] = scale·Σ_j q[j]·k[t·stride+j]; d a positive multiple of 8,
// nk ≥ 1. Keys go eight at a time, their sums reduced together by a
// transposing add, then one at a time.
TEXT ·dotsAsm(SB), NOSPLIT, $0-52
	MOVQ         dst+0(FP), DI
	MOVQ         q+8(FP), SI
	MOVQ         k+16(FP), DX
	MOVQ         d+24(FP), R8
	MOVQ         nk+32(FP), R9
	MOVQ         stride+40(FP), R10
	VBROADCASTSS scale+48(FP), Y15
	SHLQ         $2, R10
	LEAQ         (R10)(R10*2), R13     // 3·stride

dots8:
	CMPQ   R9, $8
	JL     dotsrow
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ   SI, R11                     // q
	MOVQ   DX, R12                     // key rows 0-3
	LEAQ   (DX)(R10*4), R14            // key rows 4-7
	MOVQ   R8, CX

dots8d:
	VMOVUPS     (R11), Y9
	VFMADD231PS (R12), Y9, Y0
	VFMADD231PS (R12)(R10*1), Y9, Y1
	VFMADD231PS (R12)(R10*2), Y9, Y2
	VFMADD231PS (R12)(R13*1), Y9, Y3
	VFMADD231PS (R14), Y9, Y4
	VFMADD231PS (R14)(R10*1), Y9, Y5
	VFMADD231PS (R14)(R10*2), Y9, Y6
	VFMADD231PS (R14)(R13*1), Y9, Y7
	ADDQ        $32, R11
	ADDQ        $32, R12
	ADDQ        $32, R14
	SUBQ        $8, CX
	JNE         dots8d

	VHADDPS    Y1, Y0, Y0
	VHADDPS    Y3, Y2, Y2
	VHADDPS    Y2, Y0, Y0
	VHADDPS    Y5, Y4, Y4
	VHADDPS    Y7, Y6, Y6
	VHADDPS    Y6, Y4, Y4
	VPERM2F128 $0x20, Y4, Y0, Y1
	VPERM2F128 $0x31, Y4, Y0, Y2
	VADDPS     Y2, Y1, Y1
	VMULPS     Y15, Y1, Y1
	VMOVUPS    Y1, (DI)
	ADDQ       $32, DI
	LEAQ       (DX)(R10*8), DX
	SUBQ       $8, R9
	JMP        dots8

dotsrow:
	TESTQ  R9, R9
	JE     dotsdone
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	MOVQ   SI, R11
	MOVQ   DX, R12
	MOVQ   R8, CX

dots16:
	CMPQ        CX, $16
	JL          dots8t
	VMOVUPS     (R11), Y2
	VMOVUPS     32(R11), Y3
	VFMADD231PS (R12), Y2, Y0
	VFMADD231PS 32(R12), Y3, Y1
	ADDQ        $64, R11
	ADDQ        $64, R12
	SUBQ        $16, CX
	JMP         dots16

dots8t:
	TESTQ       CX, CX
	JE          dotsred
	VMOVUPS     (R11), Y2
	VFMADD231PS (R12), Y2, Y0

dotsred:
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VMULSS       X15, X0, X0
	VMOVSS       X0, (DI)
	ADDQ         $4, DI
	ADDQ         R10, DX
	DECQ         R9
	JMP          dotsrow

dotsdone:
	VZEROUPPER
	RET

// func accumAsm(acc, p, v *float32, d, nk, stride int)
// acc[j] += Σ_t p[t]·v[t·stride+j]; d a positive multiple of 8, nk ≥ 1.
// Columns go 64 at a time so eight accumulators hide the FMA latency.
TEXT ·accumAsm(SB), NOSPLIT, $0-48
	MOVQ acc+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ v+16(FP), DX
	MOVQ d+24(FP), R8
	MOVQ nk+32(FP), R9
	MOVQ stride+40(FP), R10
	SHLQ $2, R10

acc64:
	CMPQ    R8, $64
	JL      acc8
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	MOVQ    SI, R11
	MOVQ    DX, R12
	MOVQ    R9, CX

acc64t:
	VBROADCASTSS (R11), Y8
	VFMADD231PS  (R12), Y8, Y0
	VFMADD231PS  32(R12), Y8, Y1
	VFMADD231PS  64(R12), Y8, Y2
	VFMADD231PS  96(R12), Y8, Y3
	VFMADD231PS  128(R12), Y8, Y4
	VFMADD231PS  160(R12), Y8, Y5
	VFMADD231PS  192(R12), Y8, Y6
	VFMADD231PS  224(R12), Y8, Y7
	ADDQ         $4, R11
	ADDQ         R10, R12
	DECQ         CX
	JNE          acc64t
	VMOVUPS      Y0, (DI)
	VMOVUPS      Y1, 32(DI)
	VMOVUPS      Y2, 64(DI)
	VMOVUPS      Y3, 96(DI)
	VMOVUPS      Y4, 128(DI)
	VMOVUPS      Y5, 160(DI)
	VMOVUPS      Y6, 192(DI)
	VMOVUPS      Y7, 224(DI)
	ADDQ         $256, DI
	ADDQ         $256, DX
	SUBQ         $64, R8
	JMP          acc64

acc8:
	TESTQ   R8, R8
	JE      accdone
	VMOVUPS (DI), Y0
	MOVQ    SI, R11
	MOVQ    DX, R12
	MOVQ    R9, CX

acc8t:
	VBROADCASTSS (R11), Y8
	VFMADD231PS  (R12), Y8, Y0
	ADDQ         $4, R11
	ADDQ         R10, R12
	DECQ         CX
	JNE          acc8t
	VMOVUPS      Y0, (DI)
	ADDQ         $32, DI
	ADDQ         $32, DX
	SUBQ         $8, R8
	JMP          acc8

accdone:
	VZEROUPPER
	RET

// func readSumAsm(p *byte, n int) uint64
// Sums n bytes (a multiple of 256) as uint64 lanes: a streaming read whose
// result the caller keeps, so it cannot be optimised away. It reads four
// quarters of the range side by side, which keeps more cache-line fills in
// flight than one stream and measures a core's bandwidth more fully.
TEXT ·readSumAsm(SB), NOSPLIT, $0-24
	MOVQ  p+0(FP), SI
	MOVQ  n+8(FP), CX
	SHRQ  $2, CX
	LEAQ  (SI)(CX*1), DI
	LEAQ  (DI)(CX*1), R8
	LEAQ  (R8)(CX*1), R9
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3

rs:
	CMPQ       CX, $64
	JL         rsdone
	PREFETCHT0 2048(SI)
	PREFETCHT0 2048(DI)
	PREFETCHT0 2048(R8)
	PREFETCHT0 2048(R9)
	VPADDQ     (SI), Y0, Y0
	VPADDQ 32(SI), Y0, Y0
	VPADDQ (DI), Y1, Y1
	VPADDQ 32(DI), Y1, Y1
	VPADDQ (R8), Y2, Y2
	VPADDQ 32(R8), Y2, Y2
	VPADDQ (R9), Y3, Y3
	VPADDQ 32(R9), Y3, Y3
	ADDQ   $64, SI
	ADDQ   $64, DI
	ADDQ   $64, R8
	ADDQ   $64, R9
	SUBQ   $64, CX
	JMP    rs

rsdone:
	VPADDQ       Y1, Y0, Y0
	VPADDQ       Y3, Y2, Y2
	VPADDQ       Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDQ       X1, X0, X0
	VPEXTRQ      $1, X0, AX
	VMOVQ        X0, BX
	ADDQ         BX, AX
	VZEROUPPER
	MOVQ         AX, ret+16(FP)
	RET

// func roundF16Asm(x *float32, n int)
// Rounds n (a multiple of 8) values to F16 precision in place.
TEXT ·roundF16Asm(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX

r16:
	CMPQ      CX, $8
	JL        r16done
	VMOVUPS   (DI), Y0
	VCVTPS2PH $0, Y0, X1
	VCVTPH2PS X1, Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       r16

r16done:
	VZEROUPPER
	RET

// Constants of the vector exponential (see expf in exp.go for the method):
// log2e, ln2 split in two, clamps, 1, int 127, Taylor coefficients 1/7! … 1/2!.
DATA expc<>+0(SB)/4, $0x3fb8aa3b
DATA expc<>+4(SB)/4, $0x3f317200
DATA expc<>+8(SB)/4, $0x35bfbe8e
DATA expc<>+12(SB)/4, $0x42b00000
DATA expc<>+16(SB)/4, $0xc2ae0000
DATA expc<>+20(SB)/4, $0x3f800000
DATA expc<>+24(SB)/4, $127
DATA expc<>+28(SB)/4, $0x39500d01
DATA expc<>+32(SB)/4, $0x3ab60b61
DATA expc<>+36(SB)/4, $0x3c088889
DATA expc<>+40(SB)/4, $0x3d2aaaab
DATA expc<>+44(SB)/4, $0x3e2aaaab
DATA expc<>+48(SB)/4, $0x3f000000
GLOBL expc<>(SB), RODATA|NOPTR, $52

#define EXPCONSTS \
	VBROADCASTSS expc<>+0(SB), Y8  \
	VBROADCASTSS expc<>+4(SB), Y9  \
	VBROADCASTSS expc<>+8(SB), Y10 \
	VBROADCASTSS expc<>+12(SB), Y11 \
	VBROADCASTSS expc<>+16(SB), Y12 \
	VBROADCASTSS expc<>+20(SB), Y13 \
	VPBROADCASTD expc<>+24(SB), Y14

// EXP sets Y0 = e^Y0 (inputs clamped to [-87, 88]), using Y1-Y3 and the
// constants EXPCONSTS loads into Y8-Y14.
#define EXP \
	VMINPS       Y11, Y0, Y0         \
	VMAXPS       Y12, Y0, Y0         \
	VMULPS       Y8, Y0, Y1          \
	VROUNDPS     $0, Y1, Y1          \
	VFNMADD231PS Y9, Y1, Y0          \
	VFNMADD231PS Y10, Y1, Y0         \
	VBROADCASTSS expc<>+28(SB), Y2   \
	VBROADCASTSS expc<>+32(SB), Y3   \
	VFMADD213PS  Y3, Y0, Y2          \
	VBROADCASTSS expc<>+36(SB), Y3   \
	VFMADD213PS  Y3, Y0, Y2          \
	VBROADCASTSS expc<>+40(SB), Y3   \
	VFMADD213PS  Y3, Y0, Y2          \
	VBROADCASTSS expc<>+44(SB), Y3   \
	VFMADD213PS  Y3, Y0, Y2          \
	VBROADCASTSS expc<>+48(SB), Y3   \
	VFMADD213PS  Y3, Y0, Y2          \
	VFMADD213PS  Y13, Y0, Y2         \
	VFMADD213PS  Y13, Y0, Y2         \
	VCVTPS2DQ    Y1, Y1              \
	VPADDD       Y14, Y1, Y1         \
	VPSLLD       $23, Y1, Y1         \
	VMULPS       Y1, Y2, Y0

// func swigluAsm(dst, gate, up *float32, n int)
// dst = gate/(1+e^-gate)·up for n (a multiple of 8) elements.
TEXT ·swigluAsm(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ gate+8(FP), SI
	MOVQ up+16(FP), DX
	MOVQ n+24(FP), CX
	EXPCONSTS

swiloop:
	CMPQ    CX, $8
	JL      swidone
	VMOVUPS (SI), Y5
	VXORPS  Y0, Y0, Y0
	VSUBPS  Y5, Y0, Y0
	EXP
	VADDPS  Y13, Y0, Y0
	VDIVPS  Y0, Y5, Y0
	VMULPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     swiloop

swidone:
	VZEROUPPER
	RET

// func softmaxExpAsm(s *float32, n int, mx float32) float64
// s[j] = e^(s[j]-mx) for n (a multiple of 8) elements; returns their sum,
// accumulated in float64.
TEXT ·softmaxExpAsm(SB), NOSPLIT, $0-32
	MOVQ         s+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS mx+16(FP), Y7
	EXPCONSTS
	VXORPD       Y5, Y5, Y5

smloop:
	CMPQ         CX, $8
	JL           smdone
	VMOVUPS      (DI), Y0
	VSUBPS       Y7, Y0, Y0
	EXP
	VMOVUPS      Y0, (DI)
	VCVTPS2PD    X0, Y4
	VADDPD       Y4, Y5, Y5
	VEXTRACTF128 $1, Y0, X6
	VCVTPS2PD    X6, Y4
	VADDPD       Y4, Y5, Y5
	ADDQ         $32, DI
	SUBQ         $8, CX
	JMP          smloop

smdone:
	VEXTRACTF128 $1, Y5, X6
	VADDPD       X6, X5, X5
	VHADDPD      X5, X5, X5
	VZEROUPPER
	MOVSD        X5, ret+24(FP)
	RET

// func prefetchAsm(p *byte, n int)
// Asks for the n bytes at p (n > 0) to be brought into the cache.
TEXT ·prefetchAsm(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	ADDQ SI, CX

pfloop:
	PREFETCHT0 (SI)
	ADDQ       $64, SI
	CMPQ       SI, CX
	JB         pfloop
	RET

// func maxAsm(x *float32, n int) float32
// The largest of n (a positive multiple of 8) values (NaN-free input).
TEXT ·maxAsm(SB), NOSPLIT, $0-20
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPS (SI), Y0
	ADDQ    $32, SI
	SUBQ    $8, CX

maxloop:
	TESTQ   CX, CX
	JE      maxdone
	VMAXPS  (SI), Y0, Y0
	ADDQ    $32, SI
	SUBQ    $8, CX
	JMP     maxloop

maxdone:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+16(FP)
	RET

// func scaleAsm(x *float32, n int, c float32)
// x[i] *= c for n (a multiple of 8) values.
TEXT ·scaleAsm(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS c+16(FP), Y1

scloop:
	CMPQ    CX, $8
	JL      scdone
	VMULPS  (SI), Y1, Y0
	VMOVUPS Y0, (SI)
	ADDQ    $32, SI
	SUBQ    $8, CX
	JMP     scloop

scdone:
	VZEROUPPER
	RET

// func deltaRowsAsm(s, k, q, v, out *float32, hd int, decay, b, scale float32)
// One token of the delta rule on one head's hd×hd state, row r of s
// (hd floats; hd a positive multiple of 8) at a time, four rows side by
// side:
//
//	row   *= decay
//	sk     = row·k
//	d      = (v[r] − sk)·b
//	row   += d·k
//	out[r] = (row·q)·scale
//
// Each row's operations are those of scaleAsm, dotsAsm (one accumulator
// per row, reduced ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7))) and accumAsm,
// in their order, so the bits are theirs; the scaled row is recomputed in
// the second sweep rather than stored and reloaded.
TEXT ·deltaRowsAsm(SB), NOSPLIT, $0-60
	MOVQ         s+0(FP), DI
	MOVQ         k+8(FP), SI
	MOVQ         q+16(FP), DX
	MOVQ         v+24(FP), R10
	MOVQ         out+32(FP), R11
	MOVQ         hd+40(FP), CX
	VBROADCASTSS decay+48(FP), Y15
	VBROADCASTSS b+52(FP), Y14
	VBROADCASTSS scale+56(FP), Y13
	MOVQ         CX, R8
	SHLQ         $2, R8               // a row's bytes

dr4:
	CMPQ   CX, $4
	JL     drdone
	MOVQ   DI, AX                      // rows 0-3 of the group
	LEAQ   (DI)(R8*1), BX
	LEAQ   (DI)(R8*2), R13
	LEAQ   (BX)(R8*2), R14
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   R12, R12

dr1:
	VMOVUPS     (SI)(R12*1), Y8
	VMULPS      (AX)(R12*1), Y15, Y9
	VFMADD231PS Y9, Y8, Y0
	VMULPS      (BX)(R12*1), Y15, Y10
	VFMADD231PS Y10, Y8, Y1
	VMULPS      (R13)(R12*1), Y15, Y11
	VFMADD231PS Y11, Y8, Y2
	VMULPS      (R14)(R12*1), Y15, Y12
	VFMADD231PS Y12, Y8, Y3
	ADDQ        $32, R12
	CMPQ        R12, R8
	JL          dr1

	VHADDPS      Y1, Y0, Y0
	VHADDPS      Y3, Y2, Y2
	VHADDPS      Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0            // the four rows' row·k
	VMOVUPS      (R10), X1
	VSUBPS       X0, X1, X1
	VMULPS       X14, X1, X1           // their d
	VMOVUPS      X1, (R11)             // out is free until the end: d goes there
	VBROADCASTSS (R11), Y4
	VBROADCASTSS 4(R11), Y5
	VBROADCASTSS 8(R11), Y6
	VBROADCASTSS 12(R11), Y7
	VXORPS       Y0, Y0, Y0
	VXORPS       Y1, Y1, Y1
	VXORPS       Y2, Y2, Y2
	VXORPS       Y3, Y3, Y3
	XORQ         R12, R12

dr2:
	VMOVUPS     (SI)(R12*1), Y8
	VMOVUPS     (DX)(R12*1), Y9
	VMULPS      (AX)(R12*1), Y15, Y10
	VFMADD231PS Y8, Y4, Y10
	VMOVUPS     Y10, (AX)(R12*1)
	VFMADD231PS Y10, Y9, Y0
	VMULPS      (BX)(R12*1), Y15, Y11
	VFMADD231PS Y8, Y5, Y11
	VMOVUPS     Y11, (BX)(R12*1)
	VFMADD231PS Y11, Y9, Y1
	VMULPS      (R13)(R12*1), Y15, Y10
	VFMADD231PS Y8, Y6, Y10
	VMOVUPS     Y10, (R13)(R12*1)
	VFMADD231PS Y10, Y9, Y2
	VMULPS      (R14)(R12*1), Y15, Y11
	VFMADD231PS Y8, Y7, Y11
	VMOVUPS     Y11, (R14)(R12*1)
	VFMADD231PS Y11, Y9, Y3
	ADDQ        $32, R12
	CMPQ        R12, R8
	JL          dr2

	VHADDPS      Y1, Y0, Y0
	VHADDPS      Y3, Y2, Y2
	VHADDPS      Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMULPS       X13, X0, X0
	VMOVUPS      X0, (R11)
	LEAQ         (DI)(R8*4), DI
	ADDQ         $16, R10
	ADDQ         $16, R11
	SUBQ         $4, CX
	JMP          dr4

drdone:
	VZEROUPPER
	RET

// func mulAddAsm(out, x, w *float32, n int, add bool)
// out[i] = x[i]·w[i], plus out[i] when add, for n (a multiple of 8)
// values: a multiply, then an add, each rounded, as the Go twin does.
TEXT ·mulAddAsm(SB), NOSPLIT, $0-33
	MOVQ   out+0(FP), DI
	MOVQ   x+8(FP), SI
	MOVQ   w+16(FP), DX
	MOVQ   n+24(FP), CX
	MOVBLZX add+32(FP), AX
	TESTQ  AX, AX
	JE     mmloop

maloop:
	CMPQ    CX, $8
	JL      madone
	VMOVUPS (SI), Y0
	VMULPS  (DX), Y0, Y0
	VADDPS  (DI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     maloop

mmloop:
	CMPQ    CX, $8
	JL      madone
	VMOVUPS (SI), Y0
	VMULPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     mmloop

madone:
	VZEROUPPER
	RET
