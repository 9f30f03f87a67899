// common.cuh: what Churon's kernels take from CUDA, in one place, so that
// one source compiles two ways:
//
//   - with NVRTC for the GPU (__CUDACC__ is defined): the builtins, and
//     inline PTX where NVRTC has no header to offer without the toolkit's
//     include files (half conversions, dp4a);
//   - with a host C++ compiler for the emulator (emu/emu.h, which the
//     compiler is told to include first): blocks and threads run as
//     fibers on the CPU, so every kernel can be checked against the CPU
//     backend's Go twins on a machine without a GPU.
//
// Only scalar arithmetic whose rounding both sides agree on is used where
// a kernel must equal its twin bit for bit: __fmul_rn and friends are
// never fused into an FMA by ptxas, and the emulator is built with
// -ffp-contract=off.
#pragma once

#if defined(__CUDACC__)

typedef unsigned char u8;
typedef signed char i8;
typedef unsigned short u16;
typedef short i16;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;

#define DEV static __device__ __forceinline__
// DEVM: a struct's static device function.
#define DEVM __device__ __forceinline__ static
#define KERNEL extern "C" __global__
// EMU_EXPORT registers a kernel with the emulator; the GPU build finds
// kernels by name in the PTX.
#define EMU_EXPORT(name)

DEV float f16_to_f32(u16 h) {
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
	return f;
}

// f32_to_f16 rounds to the nearest half, ties to even (IEEE), keeping
// subnormals: quant.FP32ToFP16.
DEV u16 f32_to_f16(float f) {
	u16 h;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
	return h;
}

DEV int dp4a(int a, int b, int c) {
	int d;
	asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
	return d;
}

DEV float shfl_xor(float v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
DEV float shfl(float v, int src) { return __shfl_sync(0xffffffffu, v, src); }
DEV int shfl_xor(int v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
DEV double shfl_xor(double v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }

DEV float bits_f32(u32 b) { return __uint_as_float(b); }
DEV u32 f32_bits(float f) { return __float_as_uint(f); }

#else

#include "emu.h"

#endif

DEV int imin(int a, int b) { return a < b ? a : b; }
DEV int imax(int a, int b) { return a > b ? a : b; }
// fmax2 is Go's max(a, b) and ggml's MAX for values without NaNs.
DEV float fmax2(float a, float b) { return a > b ? a : b; }
DEV float fmin2(float a, float b) { return a < b ? a : b; }

// Loads and stores of the values inside quantized blocks. A GPU faults
// on an access its size does not divide the address of (sticky
// CUDA_ERROR_MISALIGNED_ADDRESS); the emulator checks each (ALIGNED), so
// the CPU catches a block layout that would fault on the GPU. Blocks of
// 18, 22, 34 and 210 bytes leave their contents 2-byte aligned only:
// ld32_b2 reads those in halves.
#ifndef ALIGNED
#define ALIGNED(p, n)
#endif
DEV u16 ld16(const u8* p) {
	ALIGNED(p, 2);
	return *(const u16*)p;
}
DEV int ld32_b2(const u8* p) { return (int)((u32)ld16(p) | ((u32)ld16(p + 2) << 16)); }
DEV int ld32(const u8* p) {
	ALIGNED(p, 4);
	return *(const int*)p;
}
DEV float ldf16(const u8* p) { return f16_to_f32(ld16(p)); }
DEV float ldf32(const u8* p) {
	ALIGNED(p, 4);
	return *(const float*)p;
}
DEV void st16(u8* p, u16 v) {
	ALIGNED(p, 2);
	*(u16*)p = v;
}
DEV void st32(u8* p, u32 v) {
	ALIGNED(p, 4);
	*(u32*)p = v;
}

// warp_sum and warp_max reduce across the 32 lanes of a warp; every lane
// gets the result.
DEV float warp_sum(float v) {
	for (int m = 16; m > 0; m >>= 1) v += shfl_xor(v, m);
	return v;
}
DEV double warp_sum(double v) {
	for (int m = 16; m > 0; m >>= 1) v += shfl_xor(v, m);
	return v;
}
DEV int warp_sum(int v) {
	for (int m = 16; m > 0; m >>= 1) v += shfl_xor(v, m);
	return v;
}
DEV float warp_max(float v) {
	for (int m = 16; m > 0; m >>= 1) v = fmax2(v, shfl_xor(v, m));
	return v;
}

// expf_go is the CPU backend's expf (engine/backend/cpu/exp.go) step for
// step, so softmax and SiLU take the same exponentials on both sides.
DEV float expf_go(float x) {
	if (x != x) return x;
	if (x > 88.72284f) return bits_f32(0x7f800000u);
	if (x < -103.972084f) return 0.0f;
	const float log2e = 1.44269504088896341f;
	const float ln2hi = 0.693145751953125f;
	const float ln2lo = 1.42860682030941723e-6f;
	float t = __fmul_rn(x, log2e);
	int k = t >= 0.0f ? (int)__fadd_rn(t, 0.5f) : (int)__fsub_rn(t, 0.5f);
	float kf = (float)k;
	float r = __fsub_rn(__fsub_rn(x, __fmul_rn(kf, ln2hi)), __fmul_rn(kf, ln2lo));
	float p = 1.0f / 5040.0f;
	p = __fadd_rn(__fmul_rn(p, r), 1.0f / 720.0f);
	p = __fadd_rn(__fmul_rn(p, r), 1.0f / 120.0f);
	p = __fadd_rn(__fmul_rn(p, r), 1.0f / 24.0f);
	p = __fadd_rn(__fmul_rn(p, r), 1.0f / 6.0f);
	p = __fadd_rn(__fmul_rn(p, r), 0.5f);
	p = __fadd_rn(__fmul_rn(p, r), 1.0f);
	p = __fadd_rn(__fmul_rn(p, r), 1.0f);
	if (k > 127) return __fmul_rn(__fmul_rn(p, 2.0f), bits_f32((u32)(127 + 127) << 23));
	if (k >= -126) return __fmul_rn(p, bits_f32((u32)(k + 127) << 23));
	return __fmul_rn(__fmul_rn(p, bits_f32((u32)(k + 127 + 64) << 23)), 1.0f / 18446744073709551616.0f);
}

// bf16 as ggml rounds it (quant.FP32ToBF16): ties to even, NaNs quiet.
DEV u16 f32_to_bf16(float f) {
	u32 b = f32_bits(f);
	if ((b & 0x7fffffffu) > 0x7f800000u) return (u16)((b >> 16) | 0x40u);
	return (u16)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
DEV float bf16_to_f32(u16 h) { return bits_f32((u32)h << 16); }

// expf_vec is the CPU backend's vector exponential (the EXP macro of
// engine/backend/cpu/kernels_amd64.s, which softmax and SwiGLU use on
// CPUs with AVX2 and FMA) operation for operation: clamp to [−87, 88],
// k = rint(x·log2e), r = x − k·ln2 in two fused steps, a degree-7
// polynomial by fused multiply-adds, times 2^k.
DEV float expf_vec(float x) {
	x = fmin2(x, 88.0f);
	x = fmax2(x, -87.0f);
	float t = rintf(__fmul_rn(x, bits_f32(0x3fb8aa3bu)));
	x = fmaf(-t, bits_f32(0x3f317200u), x);
	x = fmaf(-t, bits_f32(0x35bfbe8eu), x);
	float p = bits_f32(0x39500d01u);
	p = fmaf(x, p, bits_f32(0x3ab60b61u));
	p = fmaf(x, p, bits_f32(0x3c088889u));
	p = fmaf(x, p, bits_f32(0x3d2aaaabu));
	p = fmaf(x, p, bits_f32(0x3e2aaaabu));
	p = fmaf(x, p, 0.5f);
	p = fmaf(x, p, 1.0f);
	p = fmaf(x, p, 1.0f);
	return __fmul_rn(p, bits_f32((u32)((int)t + 127) << 23));
}
