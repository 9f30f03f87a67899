// Churon's Metal kernels: every operation of the device seam
// (engine/backend.Device) that runs on an Apple GPU.
//
// They compute what the CPU backend computes, in the same formats, as the
// CUDA kernels do (engine/backend/cuda/kernels): activations are rounded
// to the block formats of quant.VecDotType byte for byte as
// quant.QuantizeActivations rounds them, the integer sums of the quantized
// dot products are exact, the K-quants' superblocks are added in row
// order, and the float steps of the small kernels are those of the Go
// code, operation for operation. Metal has no float64: where the CPU sums
// in float64 (RMSNorm's squares, softmax's denominator) these kernels sum
// in a pair of floats (about 48 bits) and round once, and where it calls
// float64 exp or tanh they call metal::precise's float ones. The tests
// (kernels_test.go) say which results must be equal and which close.
//
// One source compiles two ways: by Metal's run-time compiler on a Mac
// (__METAL_VERSION__ is defined), and as host C++ against emu/msl.h, which
// stands in for the few Metal types and functions used here, for the
// emulated runner the tests run on machines without a Mac. Keep to what
// both accept:
//
//   - every kernel takes `constant uint* a [[buffer(0)]]` (its scalar
//     arguments, 4 bytes each: A_INT/A_F read them) and then only device
//     pointers, at buffer indices 1, 2, … in parameter order, and begins
//     its parameters with IDS (the thread positions);
//   - threadgroup arrays are declared with TG in the kernel's body and
//     passed to helpers as TGP pointers;
//   - no vector types, no double, no half arithmetic (halves are widened
//     by f16f and made by f32_to_f16, bit for bit as quant's);
//   - every kernel is followed by EMU_EXPORT(name).
#ifdef __METAL_VERSION__
#include <metal_stdlib>
using namespace metal;
typedef uchar u8;
typedef char i8;
typedef ushort u16;
typedef short i16;
typedef uint u32;
typedef long i64;
#define IDS                                                                                                         \
	uint3 tgpig [[threadgroup_position_in_grid]], uint3 tpitg [[thread_position_in_threadgroup]],                   \
	    uint3 ntg [[threads_per_threadgroup]], uint tiisg [[thread_index_in_simdgroup]],                            \
	    uint sgitg [[simdgroup_index_in_threadgroup]],
#define EMU_EXPORT(name)
#define TG threadgroup
#define TGP threadgroup
#define DEV static inline
#define ALIGNED(p, n)
DEV float bits_f32(u32 b) { return as_type<float>(b); }
DEV u32 f32_bits(float f) { return as_type<u32>(f); }
DEV float f16f(u16 h) { return float(as_type<half>(h)); }
#else
#include "msl.h"
#endif

#define A_INT(i) ((int)a[i])
#define A_F(i) bits_f32(a[i])
#define BARRIER() threadgroup_barrier(mem_flags::mem_threadgroup)

DEV int imin(int x, int y) { return x < y ? x : y; }
DEV int imax(int x, int y) { return x > y ? x : y; }
// fmax2 is Go's max(a, b) and ggml's MAX for values without NaNs.
DEV float fmax2(float x, float y) { return x > y ? x : y; }
DEV float fmin2(float x, float y) { return x < y ? x : y; }

// f32_to_f16: ties to even, subnormals kept (quant.FP32ToFP16), in
// integer arithmetic so that no GPU rounding mode or flush matters.
DEV u16 f32_to_f16(float f) {
	u32 b = f32_bits(f);
	u16 sign = (u16)((b >> 16) & 0x8000u);
	u32 x = b & 0x7fffffffu;
	if (x > 0x7f800000u) return sign | 0x7e00u;
	if (x >= 0x477ff000u) return sign | 0x7c00u;
	if (x >= 0x38800000u) {
		u32 m = x - ((127u - 15u) << 23);
		m += 0xfffu + ((m >> 13) & 1u);
		return sign | (u16)(m >> 13);
	}
	u32 e = x >> 23;
	if (e < 102) return sign;
	u32 mant = (x & 0x7fffffu) | 0x800000u;
	u32 shift = 126 - e;
	u32 r = mant >> shift;
	u32 rem = mant & ((1u << shift) - 1);
	u32 hf = 1u << (shift - 1);
	if (rem > hf || (rem == hf && (r & 1))) r++;
	return sign | (u16)r;
}

// bf16 as ggml rounds it (quant.FP32ToBF16): ties to even, NaNs quiet.
DEV u16 f32_to_bf16(float f) {
	u32 b = f32_bits(f);
	if ((b & 0x7fffffffu) > 0x7f800000u) return (u16)((b >> 16) | 0x40u);
	return (u16)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
DEV float bf16f(u16 h) { return bits_f32((u32)h << 16); }

// Loads inside quantized blocks. Blocks of 18, 22, 34 and 210 bytes leave
// their contents 2-byte aligned only: ld32_b2 reads those in halves. The
// emulator checks every access's alignment (ALIGNED).
DEV u16 ld16(device const u8* p) {
	ALIGNED(p, 2);
	return *(device const u16*)p;
}
DEV int ld32_b2(device const u8* p) { return (int)((u32)ld16(p) | ((u32)ld16(p + 2) << 16)); }
DEV int ld32(device const u8* p) {
	ALIGNED(p, 4);
	return *(device const int*)p;
}
DEV float ldf16(device const u8* p) { return f16f(ld16(p)); }
DEV float ldf32(device const u8* p) {
	ALIGNED(p, 4);
	return *(device const float*)p;
}
DEV void st16(device u8* p, u16 v) {
	ALIGNED(p, 2);
	*(device u16*)p = v;
}
DEV void st32(device u8* p, u32 v) {
	ALIGNED(p, 4);
	*(device u32*)p = v;
}

// dp4a: four signed byte products added to c (what CUDA's dp4a does).
DEV int dp4a(int x, int y, int c) {
	c += (int)(i8)(x & 0xff) * (int)(i8)(y & 0xff);
	c += (int)(i8)((x >> 8) & 0xff) * (int)(i8)((y >> 8) & 0xff);
	c += (int)(i8)((x >> 16) & 0xff) * (int)(i8)((y >> 16) & 0xff);
	c += (int)(i8)((x >> 24) & 0xff) * (int)(i8)((y >> 24) & 0xff);
	return c;
}

// div_rn is x/y rounded as IEEE division rounds it, whatever the accuracy
// of the GPU's divide: one correction from the exact residual (fma)
// moves a quotient that is an ulp off, and leaves a right one alone
// (and infinities, zeros and NaNs as the divide gave them).
DEV float div_rn(float x, float y) {
	float q = x / y, iy = 1.0f / y;
	float r = fma(-q, y, x);
	return isfinite(q) && isfinite(r) && isfinite(iy) ? fma(r, iy, q) : q;
}

// Reductions across a SIMD group of 32 by butterfly, so that every lane
// gets the same value and the float sums add in one known order.
DEV float sg_sum(float v) {
	for (ushort m = 16; m > 0; m >>= 1) v += simd_shuffle_xor(v, m);
	return v;
}
DEV int sg_sum(int v) { return simd_sum(v); }
DEV float sg_max(float v) {
	for (ushort m = 16; m > 0; m >>= 1) v = fmax2(v, simd_shuffle_xor(v, m));
	return v;
}

// A float-float: hi + lo, the sum kept to about 48 bits, where the CPU
// sums in float64. two_sum is exact (Knuth), whatever the GPU contracts:
// it multiplies nothing.
struct FF {
	float hi, lo;
};
DEV FF ff_add(FF x, FF y) {
	float s = x.hi + y.hi;
	float bb = s - x.hi;
	float err = (x.hi - (s - bb)) + (y.hi - bb);
	err += x.lo + y.lo;
	float h = s + err;
	FF r;
	r.hi = h;
	r.lo = err - (h - s);
	return r;
}
DEV FF ff_of(float v) {
	FF r;
	r.hi = v;
	r.lo = 0.0f;
	return r;
}
// ff_div is (hi+lo)/d rounded to float, nearly always as the float64
// quotient rounds.
DEV float ff_div(FF x, float d) {
	float q = x.hi / d;
	float r = fma(-q, d, x.hi) + x.lo;
	return q + r / d;
}
DEV FF sg_sum_ff(FF v) {
	for (ushort m = 16; m > 0; m >>= 1) {
		FF o;
		o.hi = simd_shuffle_xor(v.hi, m);
		o.lo = simd_shuffle_xor(v.lo, m);
		v = ff_add(v, o);
	}
	return v;
}

// Threadgroup-wide reductions; sh holds 64 floats of the kernel's.
DEV FF tg_sum_ff(FF v, TGP float* sh, uint tid, uint nthreads) {
	uint lane = tid & 31, sg = tid >> 5, ns = (nthreads + 31) >> 5;
	v = sg_sum_ff(v);
	if (lane == 0) sh[2 * sg] = v.hi, sh[2 * sg + 1] = v.lo;
	BARRIER();
	FF t = ff_of(0.0f);
	if (lane < ns) t.hi = sh[2 * lane], t.lo = sh[2 * lane + 1];
	t = sg_sum_ff(t);
	BARRIER();
	return t;
}
DEV float tg_max(float v, TGP float* sh, uint tid, uint nthreads) {
	uint lane = tid & 31, sg = tid >> 5, ns = (nthreads + 31) >> 5;
	v = sg_max(v);
	if (lane == 0) sh[sg] = v;
	BARRIER();
	float t = lane < ns ? sh[lane] : bits_f32(0xff800000u);
	t = sg_max(t);
	BARRIER();
	return t;
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
	float t = x * log2e;
	int k = t >= 0.0f ? (int)(t + 0.5f) : (int)(t - 0.5f);
	float kf = (float)k;
	float r = (x - kf * ln2hi) - kf * ln2lo;
	float p = 1.0f / 5040.0f;
	p = p * r + 1.0f / 720.0f;
	p = p * r + 1.0f / 120.0f;
	p = p * r + 1.0f / 24.0f;
	p = p * r + 1.0f / 6.0f;
	p = p * r + 0.5f;
	p = p * r + 1.0f;
	p = p * r + 1.0f;
	if (k > 127) return (p * 2.0f) * bits_f32((u32)(127 + 127) << 23);
	if (k >= -126) return p * bits_f32((u32)(k + 127) << 23);
	return (p * bits_f32((u32)(k + 127 + 64) << 23)) * (1.0f / 18446744073709551616.0f);
}

// expf_vec is the CPU backend's vector exponential (the EXP macro of
// engine/backend/cpu/kernels_amd64.s) operation for operation.
DEV float expf_vec(float x) {
	x = fmin2(x, 88.0f);
	x = fmax2(x, -87.0f);
	float t = rint(x * bits_f32(0x3fb8aa3bu));
	x = fma(-t, bits_f32(0x3f317200u), x);
	x = fma(-t, bits_f32(0x35bfbe8eu), x);
	float p = bits_f32(0x39500d01u);
	p = fma(x, p, bits_f32(0x3ab60b61u));
	p = fma(x, p, bits_f32(0x3c088889u));
	p = fma(x, p, bits_f32(0x3d2aaaabu));
	p = fma(x, p, bits_f32(0x3e2aaaabu));
	p = fma(x, p, 0.5f);
	p = fma(x, p, 1.0f);
	p = fma(x, p, 1.0f);
	return p * bits_f32((u32)((int)t + 127) << 23);
}

// ---------------------------------------------------------------------
// Activation rounding (quant.QuantizeActivations). A SIMD group per
// block, eight to a threadgroup of 256.

// quantize_q8_0: d = amax/127 stored as F16, quants rint(v·127/amax).
kernel void quantize_q8_0(IDS constant u32* a [[buffer(0)]], device const float* x [[buffer(1)]],
                          device u8* y [[buffer(2)]]) {
	int nblocks = A_INT(0);
	int b = (int)(tgpig.x * 8 + sgitg), lane = (int)tiisg;
	if (b >= nblocks) return;
	float v = x[(i64)b * 32 + lane];
	float amax = sg_max(fabs(v));
	float d = div_rn(amax, 127.0f);
	float id = amax != 0.0f ? div_rn(127.0f, amax) : 0.0f;
	device u8* o = y + (i64)b * 34;
	if (lane == 0) st16(o, f32_to_f16(d));
	o[2 + lane] = (u8)(i8)(int)rint(v * id);
}
EMU_EXPORT(quantize_q8_0)

// quantize_q8_1: Q8_0's rounding, with s = d·Σq (F16) after the scale.
kernel void quantize_q8_1(IDS constant u32* a [[buffer(0)]], device const float* x [[buffer(1)]],
                          device u8* y [[buffer(2)]]) {
	int nblocks = A_INT(0);
	int b = (int)(tgpig.x * 8 + sgitg), lane = (int)tiisg;
	if (b >= nblocks) return;
	float v = x[(i64)b * 32 + lane];
	float amax = sg_max(fabs(v));
	float d = div_rn(amax, 127.0f);
	float id = amax != 0.0f ? div_rn(127.0f, amax) : 0.0f;
	int q = (int)rint(v * id);
	int sum = sg_sum(q);
	device u8* o = y + (i64)b * 36;
	if (lane == 0) {
		st16(o, f32_to_f16(d));
		st16(o + 2, f32_to_f16(d * (float)sum));
	}
	o[4 + lane] = (u8)(i8)q;
}
EMU_EXPORT(quantize_q8_1)

// nearest_int is ggml's nearestInt: round half to even through the adder.
DEV int nearest_int(float f) {
	float t = f + 12582912.0f;
	return (int)(f32_bits(t) & 0x007fffffu) - 0x00400000;
}

// quantize_q8_k: blocks of 256 (ggml's quantize_row_q8_K): iscale =
// −127/max, max the first value of largest magnitude, sign kept; float
// d = 1/iscale; 16 sums of 16 quants.
kernel void quantize_q8_k(IDS constant u32* a [[buffer(0)]], device const float* x [[buffer(1)]],
                          device u8* y [[buffer(2)]]) {
	int nblocks = A_INT(0);
	int b = (int)(tgpig.x * 8 + sgitg), lane = (int)tiisg;
	if (b >= nblocks) return;
	device const float* xb = x + (i64)b * 256;
	float v[8];
	float amax = 0.0f;
	int idx = 0x7fffffff;
	for (int k = 0; k < 8; k++) {
		v[k] = xb[lane + 32 * k];
		float m = fabs(v[k]);
		if (m > amax) amax = m, idx = lane + 32 * k;
	}
	for (ushort m = 16; m > 0; m >>= 1) {
		float oa = simd_shuffle_xor(amax, m);
		int oi = simd_shuffle_xor(idx, m);
		if (oa > amax || (oa == amax && oi < idx)) amax = oa, idx = oi;
	}
	device u8* o = y + (i64)b * 292;
	if (amax == 0.0f) {
		for (int j = lane; j < 292 / 4; j += 32) st32(o + 4 * j, 0);
		return;
	}
	float iscale = div_rn(-127.0f, xb[idx]);
	int q[8];
	for (int k = 0; k < 8; k++) {
		q[k] = imin(127, nearest_int(iscale * v[k]));
		o[4 + lane + 32 * k] = (u8)(i8)q[k];
	}
	for (int k = 0; k < 8; k++) {
		int s = q[k];
		for (ushort m = 8; m > 0; m >>= 1) s += simd_shuffle_xor(s, m);
		if ((lane & 15) == 0) st16(o + 260 + 2 * (2 * k + (lane >> 4)), (u16)(i16)s);
	}
	if (lane == 0) st32(o, f32_bits(div_rn(1.0f, iscale)));
}
EMU_EXPORT(quantize_q8_k)

#define GID ((i64)tgpig.x * ntg.x + tpitg.x)

kernel void round_f16(IDS constant u32* a [[buffer(0)]], device const float* x [[buffer(1)]],
                      device u16* y [[buffer(2)]]) {
	i64 i = GID;
	if (i < A_INT(0)) y[i] = f32_to_f16(x[i]);
}
EMU_EXPORT(round_f16)

kernel void round_bf16(IDS constant u32* a [[buffer(0)]], device const float* x [[buffer(1)]],
                       device u16* y [[buffer(2)]]) {
	i64 i = GID;
	if (i < A_INT(0)) y[i] = f32_to_bf16(x[i]);
}
EMU_EXPORT(round_bf16)

// ---------------------------------------------------------------------
// Quantized matrix products, unit by unit as the CUDA kernels: a weight
// unit is 32 consecutive values of a row decoded to small integers q
// (four to an int), an offset o, two integer sub-scales and two floats;
// an activation unit is 32 int8 a, their sums per 16, its scale and, for
// Q8_1, d·Σa. Each block's float is the CPU's generic code's, operation
// for operation.

struct WU {
	int q[8];
	int off, s0, s1;
	float dw, mw;
};

struct AU {
	int a[8];
	int asum0, asum1;
	float da, sa;
};

DEV void dots(thread const WU& w, thread const AU& x, thread int& d0, thread int& d1) {
	d0 = dp4a(w.q[0], x.a[0], 0);
	d0 = dp4a(w.q[1], x.a[1], d0);
	d0 = dp4a(w.q[2], x.a[2], d0);
	d0 = dp4a(w.q[3], x.a[3], d0);
	d1 = dp4a(w.q[4], x.a[4], 0);
	d1 = dp4a(w.q[5], x.a[5], d1);
	d1 = dp4a(w.q[6], x.a[6], d1);
	d1 = dp4a(w.q[7], x.a[7], d1);
}

DEV int isum32(thread const WU& w, thread const AU& x) {
	int d0, d1;
	dots(w, x, d0, d1);
	return d0 + d1 - w.off * (x.asum0 + x.asum1);
}

#define ONES 0x01010101

DEV void load_q8_0(device const u8* row, int u, thread AU& x) {
	device const u8* b = row + (i64)u * 34;
	x.da = ldf16(b);
	x.sa = 0.0f;
	for (int i = 0; i < 8; i++) x.a[i] = ld32_b2(b + 2 + 4 * i);
	// The weights of Q8_0 activations (Q4_0, Q5_0, Q8_0) come centred
	// (off 0): their sums would be multiplied by 0.
	x.asum0 = x.asum1 = 0;
}

DEV void load_q8_1(device const u8* row, int u, thread AU& x) {
	device const u8* b = row + (i64)u * 36;
	x.da = ldf16(b);
	x.sa = ldf16(b + 2);
	for (int i = 0; i < 8; i++) x.a[i] = ld32(b + 4 + 4 * i);
	x.asum0 = x.asum1 = 0;
}

DEV void load_q8_k(device const u8* row, int u, thread AU& x) {
	device const u8* b = row + (i64)(u >> 3) * 292;
	int k = u & 7;
	x.da = ldf32(b);
	for (int i = 0; i < 8; i++) x.a[i] = ld32(b + 4 + 32 * k + 4 * i);
	x.asum0 = (i16)ld16(b + 260 + 4 * k);
	x.asum1 = (i16)ld16(b + 262 + 4 * k);
	x.sa = 0.0f;
}

// The weight types: unit decodes, term is a 32-value block's float, ints
// and sb a K-quant's superblock integer sums and its float.

DEV float term_min(thread const WU& w, thread const AU& x) {
	return (w.dw * x.da) * (float)isum32(w, x) + w.mw * x.sa;
}

// centre subtracts o from each of four packed quants (0 ≤ q < 128, o a
// byte repeated) and returns the signed bytes q−o: the 32-value types'
// offsets taken off the weights, so their dot products need no sums of
// the activations. The high bit set first keeps borrows in their byte.
DEV int centre(int q, int o) { return (int)(((u32)(q | (int)0x80808080) - (u32)o) ^ 0x80808080u); }

struct TQ4_0 {
	enum { K = 0 };
	static void act(device const u8* row, int u, thread AU& x) { load_q8_0(row, u, x); }
	static void unit(device const u8* row, int u, thread WU& w) {
		device const u8* b = row + (i64)u * 18;
		w.dw = ldf16(b);
		w.mw = 0.0f;
		w.off = 0, w.s0 = w.s1 = 1;
		for (int i = 0; i < 4; i++) {
			int v = ld32_b2(b + 2 + 4 * i);
			w.q[i] = centre(v & 0x0f0f0f0f, 0x08080808);
			w.q[4 + i] = centre((v >> 4) & 0x0f0f0f0f, 0x08080808);
		}
	}
	static float term(thread const WU& w, thread const AU& x) { return ((float)isum32(w, x) * w.dw) * x.da; }
	static void ints(thread const WU&, thread const AU&, thread int&, thread int&) {}
	static float sb(thread const WU&, float, int, int) { return 0.0f; }
};

struct TQ4_1 {
	enum { K = 0 };
	static void act(device const u8* row, int u, thread AU& x) { load_q8_1(row, u, x); }
	static void unit(device const u8* row, int u, thread WU& w) {
		device const u8* b = row + (i64)u * 20;
		w.dw = ldf16(b);
		w.mw = ldf16(b + 2);
		w.off = 0, w.s0 = w.s1 = 1;
		for (int i = 0; i < 4; i++) {
			int v = ld32(b + 4 + 4 * i);
			w.q[i] = v & 0x0f0f0f0f;
			w.q[4 + i] = (v >> 4) & 0x0f0f0f0f;
		}
	}
	static float term(thread const WU& w, thread const AU& x) { return term_min(w, x); }
	static void ints(thread const WU&, thread const AU&, thread int&, thread int&) {}
	static float sb(thread const WU&, float, int, int) { return 0.0f; }
};

// spread4 puts bits 0..3 of hb at bit 4 of bytes 0..3.
DEV int spread4(u32 hb) {
	return (int)(((hb & 1u) << 4) | ((hb & 2u) << 11) | ((hb & 4u) << 18) | ((hb & 8u) << 25));
}

struct TQ5_0 {
	enum { K = 0 };
	static void act(device const u8* row, int u, thread AU& x) { load_q8_0(row, u, x); }
	static void unit(device const u8* row, int u, thread WU& w) {
		device const u8* b = row + (i64)u * 22;
		w.dw = ldf16(b);
		w.mw = 0.0f;
		w.off = 0, w.s0 = w.s1 = 1;
		u32 qh = (u32)ld32_b2(b + 2);
		for (int i = 0; i < 4; i++) {
			int v = ld32_b2(b + 6 + 4 * i);
			w.q[i] = centre((v & 0x0f0f0f0f) | spread4(qh >> (4 * i)), 0x10101010);
			w.q[4 + i] = centre(((v >> 4) & 0x0f0f0f0f) | spread4(qh >> (16 + 4 * i)), 0x10101010);
		}
	}
	static float term(thread const WU& w, thread const AU& x) { return (w.dw * x.da) * (float)isum32(w, x); }
	static void ints(thread const WU&, thread const AU&, thread int&, thread int&) {}
	static float sb(thread const WU&, float, int, int) { return 0.0f; }
};

struct TQ5_1 {
	enum { K = 0 };
	static void act(device const u8* row, int u, thread AU& x) { load_q8_1(row, u, x); }
	static void unit(device const u8* row, int u, thread WU& w) {
		device const u8* b = row + (i64)u * 24;
		w.dw = ldf16(b);
		w.mw = ldf16(b + 2);
		w.off = 0, w.s0 = w.s1 = 1;
		u32 qh = (u32)ld32(b + 4);
		for (int i = 0; i < 4; i++) {
			int v = ld32(b + 8 + 4 * i);
			w.q[i] = (v & 0x0f0f0f0f) | spread4(qh >> (4 * i));
			w.q[4 + i] = ((v >> 4) & 0x0f0f0f0f) | spread4(qh >> (16 + 4 * i));
		}
	}
	static float term(thread const WU& w, thread const AU& x) { return term_min(w, x); }
	static void ints(thread const WU&, thread const AU&, thread int&, thread int&) {}
	static float sb(thread const WU&, float, int, int) { return 0.0f; }
};

struct TQ8_0 {
	enum { K = 0 };
	static void act(device const u8* row, int u, thread AU& x) { load_q8_0(row, u, x); }
	static void unit(device const u8* row, int u, thread WU& w) {
		device const u8* b = row + (i64)u * 34;
		w.dw = ldf16(b);
		w.mw = 0.0f;
		w.off = 0, w.s0 = w.s1 = 1;
		for (int i = 0; i < 8; i++) w.q[i] = ld32_b2(b + 2 + 4 * i);
	}
	static float term(thread const WU& w, thread const AU& x) { return (float)isum32(w, x) * (w.dw * x.da); }
	static void ints(thread const WU&, thread const AU&, thread int&, thread int&) {}
	static float sb(thread const WU&, float, int, int) { return 0.0f; }
};

// scale_min_k4: ggml's get_scale_min_k4.
DEV void scale_min_k4(int j, device const u8* s, thread int& sc, thread int& m) {
	if (j < 4) {
		sc = s[j] & 63;
		m = s[j + 4] & 63;
	} else {
		sc = (s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4);
		m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
	}
}

DEV void kmin_ints(thread const WU& w, thread const AU& x, thread int& isum, thread int& summs) {
	int d0, d1;
	dots(w, x, d0, d1);
	isum += w.s0 * (d0 + d1);
	summs += w.s1 * (x.asum0 + x.asum1);
}
DEV float kmin_sb(thread const WU& w, float dy, int isum, int summs) {
	return (w.dw * dy) * (float)isum - (w.mw * dy) * (float)summs;
}

struct TQ4_K {
	enum { K = 1 };
	static void act(device const u8* row, int u, thread AU& x) { load_q8_k(row, u, x); }
	static void unit(device const u8* row, int u, thread WU& w) {
		device const u8* b = row + (i64)(u >> 3) * 144;
		int k = u & 7;
		scale_min_k4(k, b + 4, w.s0, w.s1);
		w.dw = ldf16(b);
		w.mw = ldf16(b + 2);
		w.off = 0;
		device const u8* qs = b + 16 + 32 * (k >> 1);
		int sh = 4 * (k & 1);
		for (int i = 0; i < 8; i++) w.q[i] = (ld32(qs + 4 * i) >> sh) & 0x0f0f0f0f;
	}
	static float term(thread const WU&, thread const AU&) { return 0.0f; }
	static void ints(thread const WU& w, thread const AU& x, thread int& is, thread int& sm) { kmin_ints(w, x, is, sm); }
	static float sb(thread const WU& w, float dy, int is, int sm) { return kmin_sb(w, dy, is, sm); }
};

struct TQ5_K {
	enum { K = 1 };
	static void act(device const u8* row, int u, thread AU& x) { load_q8_k(row, u, x); }
	static void unit(device const u8* row, int u, thread WU& w) {
		device const u8* b = row + (i64)(u >> 3) * 176;
		int k = u & 7;
		scale_min_k4(k, b + 4, w.s0, w.s1);
		w.dw = ldf16(b);
		w.mw = ldf16(b + 2);
		w.off = 0;
		device const u8* qh = b + 16;
		device const u8* qs = b + 48 + 32 * (k >> 1);
		int sh = 4 * (k & 1);
		for (int i = 0; i < 8; i++)
			w.q[i] = ((ld32(qs + 4 * i) >> sh) & 0x0f0f0f0f) | (((ld32(qh + 4 * i) >> k) & ONES) << 4);
	}
	static float term(thread const WU&, thread const AU&) { return 0.0f; }
	static void ints(thread const WU& w, thread const AU& x, thread int& is, thread int& sm) { kmin_ints(w, x, is, sm); }
	static float sb(thread const WU& w, float dy, int is, int sm) { return kmin_sb(w, dy, is, sm); }
};

struct TQ6_K {
	enum { K = 1 };
	static void act(device const u8* row, int u, thread AU& x) { load_q8_k(row, u, x); }
	static void unit(device const u8* row, int u, thread WU& w) {
		device const u8* b = row + (i64)(u >> 3) * 210;
		int k = u & 7, n = k >> 2, kk = k & 3;
		w.dw = ldf16(b + 208);
		w.mw = 0.0f;
		w.off = 32;
		w.s0 = (i8)b[192 + 8 * n + 2 * kk];
		w.s1 = (i8)b[192 + 8 * n + 2 * kk + 1];
		device const u8* ql = b + 64 * n + 32 * (kk & 1);
		device const u8* qh = b + 128 + 32 * n;
		int sh = 4 * (kk >> 1);
		for (int i = 0; i < 8; i++)
			w.q[i] = ((ld32_b2(ql + 4 * i) >> sh) & 0x0f0f0f0f) | (((ld32_b2(qh + 4 * i) >> (2 * kk)) & 0x03030303) << 4);
	}
	static float term(thread const WU&, thread const AU&) { return 0.0f; }
	static void ints(thread const WU& w, thread const AU& x, thread int& isum, thread int&) {
		int d0, d1;
		dots(w, x, d0, d1);
		isum += w.s0 * (d0 - 32 * x.asum0) + w.s1 * (d1 - 32 * x.asum1);
	}
	static float sb(thread const WU& w, float dy, int isum, int) { return (w.dw * dy) * (float)isum; }
};

// mmv: up to 8 input rows. A SIMD group per weight row, four to a
// threadgroup of 128. For the 32-value types lanes take the row's units
// in turn and their sums meet in a butterfly; for the K-quants eight
// lanes take a superblock's eight units, four superblocks at a time, and
// lane 0 adds the superblocks in order.
//
// Arguments: rows, units, n, wstride, astride, ystride (bytes, bytes,
// values); buffers W, A, Y.
template <class T>
DEV void mmv32(constant u32* a, device const u8* W, device const u8* A, device float* Y, uint3 gp, uint li, uint si) {
	int rows = A_INT(0), units = A_INT(1), n = A_INT(2);
	i64 wstride = A_INT(3), astride = A_INT(4), ystride = A_INT(5);
	int lane = (int)li, row = (int)(gp.x * 4 + si);
	if (row >= rows) return;
	device const u8* wr = W + row * wstride;
	float acc[8];
	for (int t = 0; t < 8; t++) acc[t] = 0.0f;
	for (int u = lane; u < units; u += 32) {
		WU w;
		T::unit(wr, u, w);
		for (int t = 0; t < 8; t++) {
			if (t < n) {
				AU x;
				T::act(A + t * astride, u, x);
				acc[t] = acc[t] + T::term(w, x);
			}
		}
	}
	for (int t = 0; t < 8; t++) {
		if (t < n) {
			float s = sg_sum(acc[t]);
			if (lane == 0) Y[(i64)t * ystride + row] = s;
		}
	}
}

template <class T>
DEV void mmvk(constant u32* a, device const u8* W, device const u8* A, device float* Y, uint3 gp, uint li, uint si) {
	int rows = A_INT(0), units = A_INT(1), n = A_INT(2);
	i64 wstride = A_INT(3), astride = A_INT(4), ystride = A_INT(5);
	int lane = (int)li, row = (int)(gp.x * 4 + si);
	if (row >= rows) return;
	device const u8* wr = W + row * wstride;
	int g = lane >> 3, k = lane & 7, nsb = units >> 3;
	float acc[8];
	for (int t = 0; t < 8; t++) acc[t] = 0.0f;
	for (int s0 = 0; s0 < nsb; s0 += 4) {
		int s = s0 + g;
		bool valid = s < nsb;
		WU w;
		if (valid) T::unit(wr, s * 8 + k, w);
		for (int t = 0; t < 8; t++) {
			if (t < n) {
				int is = 0, sm = 0;
				float dy = 0.0f;
				if (valid) {
					AU x;
					T::act(A + t * astride, s * 8 + k, x);
					T::ints(w, x, is, sm);
					dy = x.da;
				}
				for (ushort m = 1; m < 8; m <<= 1) {
					is += simd_shuffle_xor(is, m);
					sm += simd_shuffle_xor(sm, m);
				}
				float sbf = valid ? T::sb(w, dy, is, sm) : 0.0f;
				float f1 = simd_shuffle(sbf, (ushort)8), f2 = simd_shuffle(sbf, (ushort)16),
				      f3 = simd_shuffle(sbf, (ushort)24);
				if (lane == 0) {
					acc[t] = acc[t] + sbf;
					if (s0 + 1 < nsb) acc[t] = acc[t] + f1;
					if (s0 + 2 < nsb) acc[t] = acc[t] + f2;
					if (s0 + 3 < nsb) acc[t] = acc[t] + f3;
				}
			}
		}
	}
	if (lane == 0)
		for (int t = 0; t < n; t++) Y[(i64)t * ystride + row] = acc[t];
}

// mmq: a tile of 32 weight rows × 32 input rows per threadgroup of 256,
// four units at a time through threadgroup memory (Apple GPUs have 32 KiB
// of it); each thread sums a 2×2 part of the tile, block by block
// (superblock by superblock) in row order, as the CPU does.
#define MMQ_TILE 32
#define MMQ_STEP 4

template <class T>
DEV void mmq(constant u32* a, device const u8* W, device const u8* A, device float* Y, TGP WU* ws, TGP AU* as,
             uint3 gp, uint tid) {
	int rows = A_INT(0), units = A_INT(1), n = A_INT(2);
	i64 wstride = A_INT(3), astride = A_INT(4), ystride = A_INT(5);
	int r0 = (int)gp.x * MMQ_TILE, c0 = (int)gp.y * MMQ_TILE;
	int ty = (int)tid >> 4, tx = (int)tid & 15;
	float acc[2][2];
	int is[2][2], sm[2][2];
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++) acc[i][j] = 0.0f, is[i][j] = sm[i][j] = 0;
	for (int u0 = 0; u0 < units; u0 += MMQ_STEP) {
		// 256 threads load 4 units of 32 weight rows and 32 input rows.
		int kk = (int)tid >> 6, r = (int)tid & 63, u = u0 + kk;
		if (r < MMQ_TILE) {
			WU w;
			if (u < units && r0 + r < rows) {
				T::unit(W + (r0 + r) * wstride, u, w);
			} else {
				for (int i = 0; i < 8; i++) w.q[i] = 0;
				w.off = w.s0 = w.s1 = 0;
				w.dw = w.mw = 0.0f;
			}
			ws[kk * MMQ_TILE + r] = w;
		} else {
			r -= MMQ_TILE;
			AU x;
			if (u < units && c0 + r < n) {
				T::act(A + (c0 + r) * astride, u, x);
			} else {
				for (int i = 0; i < 8; i++) x.a[i] = 0;
				x.asum0 = x.asum1 = 0;
				x.da = x.sa = 0.0f;
			}
			as[kk * MMQ_TILE + r] = x;
		}
		BARRIER();
		for (int k = 0; k < MMQ_STEP && u0 + k < units; k++) {
			WU wr[2];
			for (int i = 0; i < 2; i++) wr[i] = ws[k * MMQ_TILE + ty * 2 + i];
			bool last = ((u0 + k) & 7) == 7;
			for (int j = 0; j < 2; j++) {
				AU ac = as[k * MMQ_TILE + tx * 2 + j];
				for (int i = 0; i < 2; i++) {
					if (T::K) {
						T::ints(wr[i], ac, is[i][j], sm[i][j]);
						if (last) {
							acc[i][j] = acc[i][j] + T::sb(wr[i], ac.da, is[i][j], sm[i][j]);
							is[i][j] = sm[i][j] = 0;
						}
					} else {
						acc[i][j] = acc[i][j] + T::term(wr[i], ac);
					}
				}
			}
		}
		BARRIER();
	}
	for (int j = 0; j < 2; j++) {
		int c = c0 + tx * 2 + j;
		if (c >= n) continue;
		for (int i = 0; i < 2; i++) {
			int r = r0 + ty * 2 + i;
			if (r < rows) Y[(i64)c * ystride + r] = acc[i][j];
		}
	}
}

#define MATMUL_KERNELS(name, T, MMV)                                                                                \
	kernel void mmv_##name(IDS constant u32* a [[buffer(0)]], device const u8* W [[buffer(1)]],                     \
	                       device const u8* A [[buffer(2)]], device float* Y [[buffer(3)]]) {                       \
		MMV<T>(a, W, A, Y, tgpig, tiisg, sgitg);                                                                    \
	}                                                                                                               \
	EMU_EXPORT(mmv_##name)                                                                                          \
	kernel void mmq_##name(IDS constant u32* a [[buffer(0)]], device const u8* W [[buffer(1)]],                     \
	                       device const u8* A [[buffer(2)]], device float* Y [[buffer(3)]]) {                       \
		TG WU ws[MMQ_STEP * MMQ_TILE];                                                                              \
		TG AU as[MMQ_STEP * MMQ_TILE];                                                                              \
		mmq<T>(a, W, A, Y, ws, as, tgpig, tpitg.x);                                                                 \
	}                                                                                                               \
	EMU_EXPORT(mmq_##name)

MATMUL_KERNELS(q4_0, TQ4_0, mmv32)
MATMUL_KERNELS(q4_1, TQ4_1, mmv32)
MATMUL_KERNELS(q5_0, TQ5_0, mmv32)
MATMUL_KERNELS(q5_1, TQ5_1, mmv32)
MATMUL_KERNELS(q8_0, TQ8_0, mmv32)
MATMUL_KERNELS(q4_k, TQ4_K, mmvk)
MATMUL_KERNELS(q5_k, TQ5_K, mmvk)
MATMUL_KERNELS(q6_k, TQ6_K, mmvk)

// ---------------------------------------------------------------------
// Float matrix products: F32 weights with F32 activations, F16 and BF16
// weights with activations rounded to F16 or BF16, the products of the
// widened values summed in float. Arguments: rows, cols, n, ystride.

struct FF32 {
	static float get(device const u8* p, i64 i) { return ((device const float*)p)[i]; }
};
struct FF16 {
	static float get(device const u8* p, i64 i) { return f16f(((device const u16*)p)[i]); }
};
struct FBF16 {
	static float get(device const u8* p, i64 i) { return bf16f(((device const u16*)p)[i]); }
};

template <class F>
DEV void mmvf(constant u32* a, device const u8* W, device const u8* A, device float* Y, uint3 gp, uint li, uint si) {
	int rows = A_INT(0), cols = A_INT(1), n = A_INT(2), ystride = A_INT(3);
	int lane = (int)li, row = (int)(gp.x * 4 + si);
	if (row >= rows) return;
	i64 wr = (i64)row * cols;
	float acc[8];
	for (int t = 0; t < 8; t++) acc[t] = 0.0f;
	for (int e = lane; e < cols; e += 32) {
		float w = F::get(W, wr + e);
		for (int t = 0; t < 8; t++)
			if (t < n) acc[t] = acc[t] + w * F::get(A, (i64)t * cols + e);
	}
	for (int t = 0; t < 8; t++) {
		if (t < n) {
			float s = sg_sum(acc[t]);
			if (lane == 0) Y[(i64)t * ystride + row] = s;
		}
	}
}

#define MMF_STEP 32

template <class F>
DEV void mmf(constant u32* a, device const u8* W, device const u8* A, device float* Y, TGP float* ws, TGP float* as,
             uint3 gp, uint tid) {
	int rows = A_INT(0), cols = A_INT(1), n = A_INT(2), ystride = A_INT(3);
	int r0 = (int)gp.x * MMQ_TILE, c0 = (int)gp.y * MMQ_TILE;
	int ty = (int)tid >> 4, tx = (int)tid & 15;
	float acc[2][2];
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++) acc[i][j] = 0.0f;
	for (int e0 = 0; e0 < cols; e0 += MMF_STEP) {
		for (int l = (int)tid; l < MMQ_TILE * MMF_STEP; l += 256) {
			int r = l / MMF_STEP, e = l % MMF_STEP;
			ws[r * (MMF_STEP + 1) + e] =
			    (r0 + r < rows && e0 + e < cols) ? F::get(W, (i64)(r0 + r) * cols + e0 + e) : 0.0f;
			as[r * (MMF_STEP + 1) + e] = (c0 + r < n && e0 + e < cols) ? F::get(A, (i64)(c0 + r) * cols + e0 + e) : 0.0f;
		}
		BARRIER();
		for (int e = 0; e < MMF_STEP; e++)
			for (int i = 0; i < 2; i++)
				for (int j = 0; j < 2; j++)
					acc[i][j] = acc[i][j] + ws[(ty * 2 + i) * (MMF_STEP + 1) + e] * as[(tx * 2 + j) * (MMF_STEP + 1) + e];
		BARRIER();
	}
	for (int j = 0; j < 2; j++) {
		int c = c0 + tx * 2 + j;
		if (c >= n) continue;
		for (int i = 0; i < 2; i++) {
			int r = r0 + ty * 2 + i;
			if (r < rows) Y[(i64)c * ystride + r] = acc[i][j];
		}
	}
}

#define FLOAT_KERNELS(name, F)                                                                                      \
	kernel void mmv_##name(IDS constant u32* a [[buffer(0)]], device const u8* W [[buffer(1)]],                     \
	                       device const u8* A [[buffer(2)]], device float* Y [[buffer(3)]]) {                       \
		mmvf<F>(a, W, A, Y, tgpig, tiisg, sgitg);                                                                   \
	}                                                                                                               \
	EMU_EXPORT(mmv_##name)                                                                                          \
	kernel void mmq_##name(IDS constant u32* a [[buffer(0)]], device const u8* W [[buffer(1)]],                     \
	                       device const u8* A [[buffer(2)]], device float* Y [[buffer(3)]]) {                       \
		TG float ws[MMQ_TILE * (MMF_STEP + 1)];                                                                     \
		TG float as[MMQ_TILE * (MMF_STEP + 1)];                                                                     \
		mmf<F>(a, W, A, Y, ws, as, tgpig, tpitg.x);                                                                 \
	}                                                                                                               \
	EMU_EXPORT(mmq_##name)

FLOAT_KERNELS(f32, FF32)
FLOAT_KERNELS(f16, FF16)
FLOAT_KERNELS(bf16, FBF16)

// ---------------------------------------------------------------------
// RMSNorm, as the CPU's: Σ v·v (here in a float-float, there float64),
// the mean rounded to float32, scale = 1/√(mean+eps) (here refined by a
// Newton step in float-float, there in float64), then (v·scale)·w. A
// threadgroup per row; y may be x. Arguments: d, eps.
kernel void rms_norm(IDS constant u32* a [[buffer(0)]], device const float* x [[buffer(1)]],
                     device float* y [[buffer(2)]], device const float* w [[buffer(3)]]) {
	TG float sh[64];
	int d = A_INT(0);
	float eps = A_F(1);
	device const float* xr = x + (i64)tgpig.x * d;
	device float* yr = y + (i64)tgpig.x * d;
	FF s = ff_of(0.0f);
	for (int e = (int)tpitg.x; e < d; e += (int)ntg.x) {
		float v = xr[e];
		s = ff_add(s, ff_of(v * v));
	}
	s = tg_sum_ff(s, sh, tpitg.x, ntg.x);
	float mean = ff_div(s, (float)d);
	float xe = mean + eps;
	float y0 = 1.0f / precise::sqrt(xe);
	// one Newton step for 1/√xe with the square kept exact
	float p = y0 * y0;
	float pe = fma(y0, y0, -p);
	float r = fma(-xe, p, 1.0f) - xe * pe;
	float scale = fma(y0 * 0.5f, r, y0);
	for (int e = (int)tpitg.x; e < d; e += (int)ntg.x) yr[e] = (xr[e] * scale) * w[e];
}
EMU_EXPORT(rms_norm)

// rope rotates pairs of each head by the (cos, sin) table the host made
// with the CPU's own code. Arguments: rows, heads, hd, dims, neox.
kernel void rope(IDS constant u32* a [[buffer(0)]], device float* x [[buffer(1)]], device const float* cs [[buffer(2)]]) {
	int rows = A_INT(0), heads = A_INT(1), hd = A_INT(2), dims = A_INT(3), neox = A_INT(4);
	int hf = dims / 2;
	i64 l = GID;
	if (l >= (i64)rows * heads * hf) return;
	int k = (int)(l % hf);
	i64 rh = l / hf;
	int i = (int)(rh / heads);
	device float* v = x + rh * hd;
	float c = cs[(i64)i * dims + 2 * k], s = cs[(i64)i * dims + 2 * k + 1];
	int ia = neox ? k : 2 * k, ib = neox ? k + hf : 2 * k + 1;
	float x0 = v[ia], x1 = v[ib];
	v[ia] = x0 * c - x1 * s;
	v[ib] = x0 * s + x1 * c;
}
EMU_EXPORT(rope)

// ---------------------------------------------------------------------
// The KV cache: keys and values of position p at row p. Arguments: n, dim.

kernel void store_kv_f16(IDS constant u32* a [[buffer(0)]], device const float* k [[buffer(1)]],
                         device const float* v [[buffer(2)]], device u16* kc [[buffer(3)]], device u16* vc [[buffer(4)]],
                         device const int* pos [[buffer(5)]]) {
	int n = A_INT(0), dim = A_INT(1);
	i64 l = GID;
	if (l >= (i64)n * dim) return;
	int i = (int)(l / dim), e = (int)(l % dim);
	i64 o = (i64)pos[i] * dim + e;
	kc[o] = f32_to_f16(k[l]);
	vc[o] = f32_to_f16(v[l]);
}
EMU_EXPORT(store_kv_f16)

kernel void store_kv_f32(IDS constant u32* a [[buffer(0)]], device const float* k [[buffer(1)]],
                         device const float* v [[buffer(2)]], device float* kc [[buffer(3)]],
                         device float* vc [[buffer(4)]], device const int* pos [[buffer(5)]]) {
	int n = A_INT(0), dim = A_INT(1);
	i64 l = GID;
	if (l >= (i64)n * dim) return;
	int i = (int)(l / dim), e = (int)(l % dim);
	i64 o = (i64)pos[i] * dim + e;
	kc[o] = k[l];
	vc[o] = v[l];
}
EMU_EXPORT(store_kv_f32)

// store_kv_q8_0: a SIMD group per block of 32 of a key or value row: d =
// amax/127, quants round(v·(1/d)), as quant.Quantize(Q8_0).
kernel void store_kv_q8_0(IDS constant u32* a [[buffer(0)]], device const float* k [[buffer(1)]],
                          device const float* v [[buffer(2)]], device u8* kc [[buffer(3)]], device u8* vc [[buffer(4)]],
                          device const int* pos [[buffer(5)]]) {
	int n = A_INT(0), dim = A_INT(1);
	int lane = (int)tiisg;
	int bpr = dim / 32;
	i64 w = (i64)tgpig.x * 8 + sgitg;
	if (w >= 2 * (i64)n * bpr) return;
	int isv = (int)(w / ((i64)n * bpr));
	i64 r = w % ((i64)n * bpr);
	int i = (int)(r / bpr), blk = (int)(r % bpr);
	float xv = (isv ? v : k)[(i64)i * dim + blk * 32 + lane];
	float amax = sg_max(fabs(xv));
	float d = div_rn(amax, 127.0f);
	float id = d != 0.0f ? div_rn(1.0f, d) : 0.0f;
	device u8* o = (isv ? vc : kc) + (i64)pos[i] * (bpr * 34) + blk * 34;
	if (lane == 0) st16(o, f32_to_f16(d));
	o[2 + lane] = (u8)(i8)(int)round(xv * id);
}
EMU_EXPORT(store_kv_q8_0)

// ---------------------------------------------------------------------
// Attention, as the CPU computes it (cpu/attention.go) and in the CUDA
// kernel's steps: scores q·k scaled, soft-capped, then ggml's soft_max
// (global max, a wide sum, one scale) with an optional sink, the
// probabilities rounded to F16 against an F16 cache (whose queries are
// rounded to F16 too), then the weighted sum of values and the optional
// sigmoid gate. A threadgroup of 256 per query row and head; scores go to
// the scratch the host sized (sstride per row and head). The float steps
// follow the CPU's vector kernels where cpuvec is set and the head is a
// multiple of 8, its plain Go loops otherwise (see the CUDA kernel).
//
// Arguments: heads, kvheads, hd, dim, scale, window, softcap, sstride,
// cpuvec, has_sinks, has_gate; buffers dst, q, kc, vc, pos, sinks, gate,
// scores.

#define ATT_MAX_HEAD 512

struct KF16 {
	static float get(device const u8* c, i64 p, int dim, int e) { return f16f(((device const u16*)c)[p * dim + e]); }
	enum { rnd = 1 };
};
struct KF32 {
	static float get(device const u8* c, i64 p, int dim, int e) { return ((device const float*)c)[p * dim + e]; }
	enum { rnd = 0 };
};
struct KQ8_0 {
	static float get(device const u8* c, i64 p, int dim, int e) {
		device const u8* b = c + p * (dim / 32 * 34) + (e >> 5) * 34;
		return ldf16(b) * (float)(i8)b[2 + (e & 31)];
	}
	enum { rnd = 0 };
};

template <class K>
DEV void attend(constant u32* a, device float* dst, device const float* q, device const u8* kc, device const u8* vc,
                device const int* pos, device const float* sinks, device const float* gate, device float* scores,
                TGP float* qs, TGP float* sh, uint3 gp, uint tid, uint nthreads) {
	int heads = A_INT(0), kvheads = A_INT(1), hd = A_INT(2), dim = A_INT(3);
	float scale = A_F(4);
	int window = A_INT(5);
	float softcap = A_F(6);
	int sstride = A_INT(7), cpuvec = A_INT(8), has_sinks = A_INT(9), has_gate = A_INT(10);
	int i = (int)gp.x, h = (int)gp.y;
	int lane = (int)tid & 31, sg = (int)tid >> 5, ns = (int)nthreads >> 5;
	int kvh = h / (heads / kvheads);
	int p = pos[i];
	int first = window > 0 ? imax(0, p - window + 1) : 0;
	int nk = p - first + 1;
	bool vec = cpuvec && hd % 8 == 0;
	i64 qo = ((i64)i * heads + h) * hd;
	for (int e = (int)tid; e < hd; e += (int)nthreads) {
		float v = q[qo + e];
		qs[e] = K::rnd ? f16f(f32_to_f16(v)) : v;
	}
	BARRIER();
	device float* S = scores + ((i64)i * heads + h) * sstride;
	// Scores: a half SIMD group per key.
	int half_ = lane >> 4, hl = lane & 15, ko = kvh * hd;
	for (int t0 = 2 * sg; t0 < nk; t0 += 2 * ns) {
		int t = t0 + half_, P = first + t;
		bool valid = t < nk;
		int kb = P & ~63, lo = imax(kb, first), ke = imin(kb + 64, p + 1), nkc = ke - lo;
		bool tail = P - lo >= nkc - nkc % 8;
		float v = 0.0f;
		if (valid) {
			if (!vec) {
				if (hl == 0)
					for (int e = 0; e < hd; e++) v = v + qs[e] * K::get(kc, P, dim, ko + e);
			} else if (!tail) {
				if (hl < 8)
					for (int e = hl; e < hd; e += 8) v = fma(qs[e], K::get(kc, P, dim, ko + e), v);
			} else {
				int h16 = hd - hd % 16;
				for (int e = hl; e < h16; e += 16) v = fma(qs[e], K::get(kc, P, dim, ko + e), v);
				if (h16 < hd && hl < 8) v = fma(qs[h16 + hl], K::get(kc, P, dim, ko + h16 + hl), v);
			}
		}
		// Both of the CPU's reduction trees, by every lane.
		float g = v + simd_shuffle_xor(v, (ushort)1);
		g = g + simd_shuffle_xor(g, (ushort)2);
		g = g + simd_shuffle_xor(g, (ushort)4);
		float u = v + simd_shuffle_xor(v, (ushort)8);
		u = u + simd_shuffle_xor(u, (ushort)4);
		u = u + simd_shuffle_xor(u, (ushort)1);
		u = u + simd_shuffle_xor(u, (ushort)2);
		if (valid && hl == 0) S[t] = (!vec ? v : tail ? u : g) * scale;
	}
	BARRIER();
	float mx = bits_f32(0xff800000u);
	float inv = softcap > 0.0f ? div_rn(1.0f, softcap) : 0.0f;
	for (int t = (int)tid; t < nk; t += (int)nthreads) {
		float s = S[t];
		if (softcap > 0.0f) {
			s = precise::tanh(s * inv) * softcap;
			S[t] = s;
		}
		mx = fmax2(mx, s);
	}
	mx = tg_max(mx, sh, tid, nthreads);
	float sink = 0.0f;
	if (has_sinks) {
		sink = sinks[h];
		mx = fmax2(mx, sink);
	}
	FF sum = ff_of(0.0f);
	int nvec = vec ? nk & ~7 : 0;
	for (int t = (int)tid; t < nk; t += (int)nthreads) {
		float x = S[t] - mx;
		float e = t < nvec ? expf_vec(x) : expf_go(x);
		S[t] = e;
		sum = ff_add(sum, ff_of(e));
	}
	sum = tg_sum_ff(sum, sh, tid, nthreads);
	if (has_sinks) sum = ff_add(sum, ff_of(precise::exp(sink - mx)));
	// norm = 1/sum, from the float-float
	float r0 = 1.0f / sum.hi;
	float res = fma(-r0, sum.hi, 1.0f) - r0 * sum.lo;
	float norm = fma(r0, res, r0);
	for (int t = (int)tid; t < nk; t += (int)nthreads) {
		float pr = S[t] * norm;
		S[t] = K::rnd ? f16f(f32_to_f16(pr)) : pr;
	}
	BARRIER();
	for (int e = (int)tid; e < hd; e += (int)nthreads) {
		float acc = 0.0f;
		if (vec)
			for (int t = 0; t < nk; t++) acc = fma(S[t], K::get(vc, first + t, dim, ko + e), acc);
		else
			for (int t = 0; t < nk; t++) acc = acc + S[t] * K::get(vc, first + t, dim, ko + e);
		if (has_gate) {
			float g = gate[qo + e];
			acc = acc * (1.0f / (1.0f + precise::exp(-g)));
		}
		dst[qo + e] = acc;
	}
}

#define ATTEND_KERNEL(name, K)                                                                                      \
	kernel void attend_##name(IDS constant u32* a [[buffer(0)]], device float* dst [[buffer(1)]],                   \
	                          device const float* q [[buffer(2)]], device const u8* kc [[buffer(3)]],               \
	                          device const u8* vc [[buffer(4)]], device const int* pos [[buffer(5)]],               \
	                          device const float* sinks [[buffer(6)]], device const float* gate [[buffer(7)]],      \
	                          device float* scores [[buffer(8)]]) {                                                 \
		TG float qs[ATT_MAX_HEAD];                                                                                  \
		TG float sh[64];                                                                                            \
		attend<K>(a, dst, q, kc, vc, pos, sinks, gate, scores, qs, sh, tgpig, tpitg.x, ntg.x);                      \
	}                                                                                                               \
	EMU_EXPORT(attend_##name)

ATTEND_KERNEL(f16, KF16)
ATTEND_KERNEL(f32, KF32)
ATTEND_KERNEL(q8_0, KQ8_0)

// ---------------------------------------------------------------------
// Element-wise operations, a thread per value. The first argument is n.

// swiglu: silu(gate)·up with the CPU vector kernel's exponential (vec)
// or its Go twin's. Arguments: n, vec.
kernel void swiglu(IDS constant u32* a [[buffer(0)]], device float* dst [[buffer(1)]],
                   device const float* gate [[buffer(2)]], device const float* up [[buffer(3)]]) {
	i64 i = GID;
	if (i >= A_INT(0)) return;
	float g = gate[i];
	float e = A_INT(1) ? expf_vec(-g) : expf_go(-g);
	dst[i] = div_rn(g, 1.0f + e) * up[i];
}
EMU_EXPORT(swiglu)

// geglu: ggml's GELU through its F16 table (the CPU's, uploaded), times up.
kernel void geglu(IDS constant u32* a [[buffer(0)]], device float* dst [[buffer(1)]],
                  device const float* gate [[buffer(2)]], device const float* up [[buffer(3)]],
                  device const u16* table [[buffer(4)]]) {
	i64 i = GID;
	if (i >= A_INT(0)) return;
	float g = gate[i];
	float r;
	if (g <= -10.0f) r = 0.0f;
	else if (g >= 10.0f) r = g * up[i];
	else r = f16f(table[f32_to_f16(g)]) * up[i];
	dst[i] = r;
}
EMU_EXPORT(geglu)

// swiglu_clamped: gpt-oss's. Arguments: n, alpha, limit.
kernel void swiglu_clamped(IDS constant u32* a [[buffer(0)]], device float* dst [[buffer(1)]],
                           device const float* gate [[buffer(2)]], device const float* up [[buffer(3)]]) {
	i64 i = GID;
	if (i >= A_INT(0)) return;
	float alpha = A_F(1), limit = A_F(2);
	float g = fmin2(gate[i], limit);
	float u = fmax2(-limit, fmin2(up[i], limit));
	float e = precise::exp(-(alpha * g));
	dst[i] = div_rn(g, 1.0f + e) * (u + 1.0f);
}
EMU_EXPORT(swiglu_clamped)

kernel void add(IDS constant u32* a [[buffer(0)]], device float* dst [[buffer(1)]], device const float* x [[buffer(2)]]) {
	i64 i = GID;
	if (i < A_INT(0)) dst[i] = dst[i] + x[i];
}
EMU_EXPORT(add)

// add_bias: arguments n, d.
kernel void add_bias(IDS constant u32* a [[buffer(0)]], device float* x [[buffer(1)]], device const float* b [[buffer(2)]]) {
	i64 i = GID;
	if (i < A_INT(0)) x[i] = x[i] + b[i % A_INT(1)];
}
EMU_EXPORT(add_bias)

// scale: arguments n, s.
kernel void scale(IDS constant u32* a [[buffer(0)]], device float* x [[buffer(1)]]) {
	i64 i = GID;
	if (i < A_INT(0)) x[i] = x[i] * A_F(1);
}
EMU_EXPORT(scale)

// soft_cap: c·tanh(v·(1/c)). Arguments: n, c.
kernel void soft_cap(IDS constant u32* a [[buffer(0)]], device float* x [[buffer(1)]]) {
	i64 i = GID;
	if (i >= A_INT(0)) return;
	float c = A_F(1);
	float inv = div_rn(1.0f, c);
	x[i] = precise::tanh(x[i] * inv) * c;
}
EMU_EXPORT(soft_cap)

// copy_words: n 4-byte words from src to dst (Write, Read, whole-row
// copies, cache rows).
kernel void copy_words(IDS constant u32* a [[buffer(0)]], device u32* dst [[buffer(1)]], device const u32* src [[buffer(2)]]) {
	i64 i = GID;
	if (i < A_INT(0)) dst[i] = src[i];
}
EMU_EXPORT(copy_words)

// fill_words: n 4-byte words set to v. Arguments: n, v.
kernel void fill_words(IDS constant u32* a [[buffer(0)]], device u32* dst [[buffer(1)]]) {
	i64 i = GID;
	if (i < A_INT(0)) dst[i] = a[1];
}
EMU_EXPORT(fill_words)

// copy_rows: arguments rows, cols, dstride, sstride.
kernel void copy_rows(IDS constant u32* a [[buffer(0)]], device float* dst [[buffer(1)]], device const float* src [[buffer(2)]]) {
	int rows = A_INT(0), cols = A_INT(1), dstride = A_INT(2), sstride = A_INT(3);
	i64 l = GID;
	if (l >= (i64)rows * cols) return;
	i64 r = l / cols;
	int c = (int)(l % cols);
	dst[r * dstride + c] = src[r * sstride + c];
}
EMU_EXPORT(copy_rows)

// gather_rows: arguments nrows, cols.
kernel void gather_rows(IDS constant u32* a [[buffer(0)]], device float* dst [[buffer(1)]],
                        device const float* src [[buffer(2)]], device const int* idx [[buffer(3)]]) {
	int nrows = A_INT(0), cols = A_INT(1);
	i64 l = GID;
	if (l >= (i64)nrows * cols) return;
	i64 j = l / cols;
	int c = (int)(l % cols);
	dst[l] = src[(i64)idx[j] * cols + c];
}
EMU_EXPORT(gather_rows)

// scatter_add_rows: a thread per column walks the rows in order, so rows
// sent to the same destination add up in the CPU's order. Arguments:
// nrows, cols, has_scale.
kernel void scatter_add_rows(IDS constant u32* a [[buffer(0)]], device float* dst [[buffer(1)]],
                             device const float* src [[buffer(2)]], device const int* idx [[buffer(3)]],
                             device const float* sc [[buffer(4)]]) {
	int nrows = A_INT(0), cols = A_INT(1), has_scale = A_INT(2);
	i64 c = GID;
	if (c >= cols) return;
	for (int j = 0; j < nrows; j++) {
		float v = src[(i64)j * cols + c];
		if (has_scale) v = sc[j] * v;
		i64 o = (i64)idx[j] * cols + c;
		dst[o] = dst[o] + v;
	}
}
EMU_EXPORT(scatter_add_rows)
