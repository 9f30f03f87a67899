// msl.h: the Metal Shading Language that Churon's kernels use
// (kernels.metal), for a host C++ compiler.
//
// The emulated runner (fakemetal.cpp) runs a dispatch threadgroup by
// threadgroup; the threads of a threadgroup are fibers on one OS thread,
// switched only where threads wait for each other (threadgroup_barrier,
// a SIMD-group shuffle or sum). SIMD groups are 32 threads wide, as on
// every Apple GPU. A barrier a threadgroup or SIMD group can never
// complete (a divergent barrier, a shuffle with lanes that have exited)
// fails the command buffer, as the GPU would hang or fault.
//
// Address spaces (device, constant, thread) are dropped; threadgroup
// arrays (TG) become statics, shared by the fibers of the one threadgroup
// that runs at a time. Arithmetic is the host's IEEE single precision with
// FMA contraction off (-ffp-contract=off) and fma() fused; precise::exp,
// tanh and sqrt are the host's, not Metal's.
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
typedef uint32_t uint;
typedef uint16_t ushort;
typedef uint8_t uchar;

struct uint3 {
	uint x, y, z;
};

namespace emu {
struct Thread;
const uint3& tg_pos();
const uint3& tg_size();
const uint3& t_pos();
uint sg_lane();
uint sg_index();
void barrier();
// exchange publishes v (its bits) for the thread's SIMD group and returns
// what lane src published, once every lane of the group has published.
uint64_t exchange(uint64_t v, int src);
void misaligned(const void* p, int n);

typedef void (*Invoker)(void** bufs);
void register_kernel(const char* name, Invoker inv, int nbufs);

template <typename... A>
struct Reg;
template <typename... A>
struct Reg<void (*)(A...)> {
	template <void (*F)(A...)>
	struct With {
		template <size_t... I>
		static void call(void** p, std::index_sequence<I...>) {
			F(static_cast<A>(p[I])...);
		}
		static void invoke(void** p) { call(p, std::index_sequence_for<A...>{}); }
		With(const char* name) { register_kernel(name, &invoke, (int)sizeof...(A)); }
	};
};
}  // namespace emu

#define kernel static
#define device
#define constant
#define thread
#define TG static
#define TGP
#define DEV static inline
#define IDS
#define tgpig (emu::tg_pos())
#define ntg (emu::tg_size())
#define tpitg (emu::t_pos())
#define tiisg (emu::sg_lane())
#define sgitg (emu::sg_index())
#define ALIGNED(p, n) \
	if ((uintptr_t)(p) % (n) != 0) emu::misaligned(p, n)
// EMU_EXPORT makes a kernel dispatchable by name; every parameter is a
// buffer binding, in order from index 0.
#define EMU_EXPORT(name) static emu::Reg<decltype(&name)>::With<&name> emu_reg_##name(#name);

namespace mem_flags {
enum { mem_none = 0, mem_threadgroup = 2 };
}
static inline void threadgroup_barrier(int) { emu::barrier(); }

using std::fabs;
using std::isfinite;
using std::fma;
using std::rint;
using std::round;

namespace precise {
static inline float sqrt(float x) { return std::sqrt(x); }
static inline float exp(float x) { return std::exp(x); }
static inline float tanh(float x) { return std::tanh(x); }
}  // namespace precise

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

// f16f widens a half exactly (subnormals too), as the GPU's conversion.
static inline float f16f(u16 h) {
	u32 sign = (u32)(h & 0x8000u) << 16;
	u32 e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
	if (e == 0x1f) return bits_f32(sign | 0x7f800000u | (m << 13));
	if (e == 0) {
		if (m == 0) return bits_f32(sign);
		float f = (float)m * (1.0f / 16777216.0f);
		return sign ? -f : f;
	}
	return bits_f32(sign | ((e + 112) << 23) | (m << 13));
}

template <typename T>
static inline uint64_t emu_bits(T v) {
	uint64_t b = 0;
	memcpy(&b, &v, sizeof v);
	return b;
}
template <typename T>
static inline T emu_from(uint64_t b) {
	T v;
	memcpy(&v, &b, sizeof v);
	return v;
}
template <typename T>
static inline T simd_shuffle_xor(T v, ushort m) {
	return emu_from<T>(emu::exchange(emu_bits(v), (int)(emu::sg_lane() ^ m)));
}
template <typename T>
static inline T simd_shuffle(T v, ushort lane) {
	return emu_from<T>(emu::exchange(emu_bits(v), (int)lane));
}
// simd_sum of integers: exact whatever the order.
static inline int simd_sum(int v) {
	for (ushort m = 16; m > 0; m >>= 1) v += simd_shuffle_xor(v, m);
	return v;
}
