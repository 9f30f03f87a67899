// emu.h: the CUDA that Churon's kernels use, for a host C++ compiler.
//
// The emulated driver (fakecuda.cpp) runs a launch block by block; the
// threads of a block are fibers on one OS thread, switched only where
// CUDA threads wait for each other (__syncthreads, a warp shuffle). A
// thread that reaches a barrier its warp or block can never complete (a
// divergent __syncthreads, a shuffle with lanes that have exited) stops
// the launch with an error, as compute-sanitizer's synccheck would.
//
// __shared__ becomes static: one block runs at a time, and its threads
// share the kernel's statics as a block's threads share its shared
// memory. Arithmetic is the host's IEEE single and double precision with
// FMA contraction off, so __fmul_rn and its kin round as on the GPU;
// library functions (expf, tanh) are the host's, not CUDA's.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

typedef uint8_t u8;
typedef int8_t i8;
typedef uint16_t u16;
typedef int16_t i16;
typedef uint32_t u32;
typedef int64_t i64;
typedef uint64_t u64;

namespace emu {

struct uint3 {
	unsigned x, y, z;
};

struct Thread;
Thread* cur();
const uint3& thread_idx(Thread*);
const uint3& block_idx();
const uint3& block_dim();
const uint3& grid_dim();
void sync_block();
// exchange publishes v (its bits) for the thread's warp and returns what
// lane src published, once every lane of the warp has published.
u64 exchange(u64 v, int src);
int lane();
// misaligned fails the launch: the GPU would fault there.
void misaligned(const void* p, int n);

}  // namespace emu

#define threadIdx (emu::thread_idx(emu::cur()))
#define blockIdx (emu::block_idx())
#define blockDim (emu::block_dim())
#define gridDim (emu::grid_dim())
#define __syncthreads() emu::sync_block()
#define __shared__ static
#define __device__
#define __global__
#define __forceinline__ inline
#define __restrict__ __restrict

#define DEV static inline
#define ALIGNED(p, n) \
	if ((uintptr_t)(p) % (n) != 0) emu::misaligned(p, n)
#define DEVM static inline
#define KERNEL extern "C"

namespace emu {
typedef void (*Invoker)(void** params);
void register_kernel(const char* name, Invoker inv, int nparams, const int* sizes);

template <typename... A>
struct Reg;

template <typename... A>
struct Reg<void (*)(A...)> {
	template <void (*F)(A...)>
	struct With {
		template <size_t... I>
		static void call(void** p, std::index_sequence<I...>) {
			F(*static_cast<A*>(p[I])...);
		}
		static void invoke(void** p) { call(p, std::index_sequence_for<A...>{}); }
		With(const char* name) {
			static const int sizes[] = {(int)sizeof(A)..., 0};
			register_kernel(name, &invoke, (int)sizeof...(A), sizes);
		}
	};
};
}  // namespace emu

// EMU_EXPORT makes a kernel launchable by name through the emulated
// driver, which copies its parameters by the sizes of their types.
#define EMU_EXPORT(name) \
	static emu::Reg<decltype(&name)>::With<&name> emu_reg_##name(#name);

static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __dadd_rn(double a, double b) { return a + b; }

static inline float bits_f32(u32 b) {
	float f;
	memcpy(&f, &b, 4);
	return f;
}
static inline u32 f32_bits(float f) {
	u32 b;
	memcpy(&b, &f, 4);
	return b;
}

static inline float f16_to_f32(u16 h) {
	u32 sign = (u32)(h & 0x8000u) << 16;
	u32 e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
	if (e == 0x1f) return bits_f32(sign | 0x7f800000u | (m << 13));
	if (e == 0) {
		if (m == 0) return bits_f32(sign);
		// subnormal: m·2⁻²⁴, exact in float
		float f = (float)m * (1.0f / 16777216.0f);
		return sign ? -f : f;
	}
	return bits_f32(sign | ((e + 112) << 23) | (m << 13));
}

// f32_to_f16: ties to even, subnormals kept (as cvt.rn.f16.f32).
static inline u16 f32_to_f16(float f) {
	u32 b = f32_bits(f);
	u16 sign = (u16)((b >> 16) & 0x8000u);
	u32 a = b & 0x7fffffffu;
	if (a > 0x7f800000u) return sign | 0x7e00u;
	if (a >= 0x477ff000u) return sign | 0x7c00u;
	if (a >= 0x38800000u) {
		u32 m = a - ((127u - 15u) << 23);
		m += 0xfffu + ((m >> 13) & 1u);
		return sign | (u16)(m >> 13);
	}
	u32 e = a >> 23;
	if (e < 102) return sign;
	u32 mant = (a & 0x7fffffu) | 0x800000u;
	u32 shift = 126 - e;
	u32 r = mant >> shift;
	u32 rem = mant & ((1u << shift) - 1);
	u32 half = 1u << (shift - 1);
	if (rem > half || (rem == half && (r & 1))) r++;
	return sign | (u16)r;
}

static inline int dp4a(int a, int b, int c) {
	for (int i = 0; i < 4; i++) c += (int)(i8)(a >> (8 * i)) * (int)(i8)(b >> (8 * i));
	return c;
}

static inline float shfl_xor(float v, int m) {
	u64 r = emu::exchange(f32_bits(v), emu::lane() ^ m);
	return bits_f32((u32)r);
}
static inline float shfl(float v, int src) { return bits_f32((u32)emu::exchange(f32_bits(v), src)); }
static inline int shfl_xor(int v, int m) { return (int)(u32)emu::exchange((u32)v, emu::lane() ^ m); }
static inline double shfl_xor(double v, int m) {
	u64 b;
	memcpy(&b, &v, 8);
	b = emu::exchange(b, emu::lane() ^ m);
	double d;
	memcpy(&d, &b, 8);
	return d;
}
