// Churon's CUDA kernels: every operation of the device seam
// (engine/backend.Device) that runs on an NVIDIA GPU.
//
// Each kernel computes what the CPU backend computes, in the same
// formats: activations are rounded to the block formats of
// quant.VecDotType byte for byte as quant.QuantizeActivations rounds them,
// the integer sums of the quantized dot products are exact, and the
// float steps of the small kernels (RMSNorm, RoPE, the KV store, the GLUs,
// softmax's exponentials) are those of the Go code, operation for
// operation. What differs is the order in which float partial sums are
// added: matrix products and attention sum across threads. The kernel
// tests (kernels_test.go) pin every kernel to its CPU twin, on a GPU and
// under the emulator.
//
// The source compiles to PTX with NVRTC (go generate; see gen.go) and,
// for the emulator, as host C++ (emu/fakecuda.cpp). Keep it to what both
// accept: C++14, no headers, kernel parameters of 4 and 8 bytes only.
#include "common.cuh"

// ---------------------------------------------------------------------
// Reductions across a block of up to 1024 threads.

DEV double block_sum(double v) {
	__shared__ double sh[32];
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
	v = warp_sum(v);
	if (lane == 0) sh[warp] = v;
	__syncthreads();
	if (warp == 0) {
		v = lane < nw ? sh[lane] : 0.0;
		v = warp_sum(v);
		if (lane == 0) sh[0] = v;
	}
	__syncthreads();
	double r = sh[0];
	__syncthreads();
	return r;
}

DEV float block_max(float v) {
	__shared__ float sh[32];
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
	v = warp_max(v);
	if (lane == 0) sh[warp] = v;
	__syncthreads();
	if (warp == 0) {
		v = lane < nw ? sh[lane] : bits_f32(0xff800000u);
		v = warp_max(v);
		if (lane == 0) sh[0] = v;
	}
	__syncthreads();
	float r = sh[0];
	__syncthreads();
	return r;
}

// ---------------------------------------------------------------------
// Activation rounding (quant.QuantizeActivations). One warp per block.

// quantize_q8_0: blocks of 32 as llama.cpp's x86 run-time code rounds
// them: d = amax/127 stored as F16, quants rint(v·127/amax).
KERNEL void quantize_q8_0(const float* x, u8* y, int nblocks) {
	int b = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5), lane = threadIdx.x & 31;
	if (b >= nblocks) return;
	float v = x[b * 32 + lane];
	float amax = warp_max(fabsf(v));
	float d = __fdiv_rn(amax, 127.0f);
	float id = amax != 0.0f ? __fdiv_rn(127.0f, amax) : 0.0f;
	u8* o = y + (i64)b * 34;
	if (lane == 0) st16(o, f32_to_f16(d));
	o[2 + lane] = (u8)(i8)(int)rintf(__fmul_rn(v, id));
}
EMU_EXPORT(quantize_q8_0)

// quantize_q8_1: Q8_0's rounding, with s = d·Σq (F16) after the scale.
KERNEL void quantize_q8_1(const float* x, u8* y, int nblocks) {
	int b = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5), lane = threadIdx.x & 31;
	if (b >= nblocks) return;
	float v = x[b * 32 + lane];
	float amax = warp_max(fabsf(v));
	float d = __fdiv_rn(amax, 127.0f);
	float id = amax != 0.0f ? __fdiv_rn(127.0f, amax) : 0.0f;
	int q = (int)rintf(__fmul_rn(v, id));
	int sum = warp_sum(q);
	u8* o = y + (i64)b * 36;
	if (lane == 0) {
		st16(o, f32_to_f16(d));
		st16(o + 2, f32_to_f16(__fmul_rn(d, (float)sum)));
	}
	o[4 + lane] = (u8)(i8)q;
}
EMU_EXPORT(quantize_q8_1)

// nearest_int is ggml's (and quant's) nearestInt: round half to even
// through the float adder.
DEV int nearest_int(float f) {
	float t = __fadd_rn(f, 12582912.0f);
	return (int)(f32_bits(t) & 0x007fffffu) - 0x00400000;
}

// quantize_q8_k: blocks of 256 for the K-quants (ggml's
// quantize_row_q8_K): iscale = −127/max, where max is the first value of
// largest magnitude, sign kept; float d = 1/iscale; 16 sums of 16 quants.
KERNEL void quantize_q8_k(const float* x, u8* y, int nblocks) {
	int b = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5), lane = threadIdx.x & 31;
	if (b >= nblocks) return;
	const float* xb = x + (i64)b * 256;
	float v[8];
	float amax = 0.0f;
	int idx = 0x7fffffff;
	for (int k = 0; k < 8; k++) {
		v[k] = xb[lane + 32 * k];
		float a = fabsf(v[k]);
		if (a > amax) amax = a, idx = lane + 32 * k;
	}
	// The first index of the largest magnitude wins, as ggml's scan.
	for (int m = 16; m > 0; m >>= 1) {
		float oa = shfl_xor(amax, m);
		int oi = shfl_xor(idx, m);
		if (oa > amax || (oa == amax && oi < idx)) amax = oa, idx = oi;
	}
	u8* o = y + (i64)b * 292;
	if (amax == 0.0f) {
		for (int j = lane; j < 292 / 4; j += 32) st32(o + 4 * j, 0);
		return;
	}
	float iscale = __fdiv_rn(-127.0f, xb[idx]);
	int q[8];
	for (int k = 0; k < 8; k++) {
		q[k] = imin(127, nearest_int(__fmul_rn(iscale, v[k])));
		o[4 + lane + 32 * k] = (u8)(i8)q[k];
	}
	// bsums: quants lane+32k of a half-warp are one group of 16.
	for (int k = 0; k < 8; k++) {
		int s = q[k];
		for (int m = 8; m > 0; m >>= 1) s += shfl_xor(s, m);
		if ((lane & 15) == 0) st16(o + 260 + 2 * (2 * k + (lane >> 4)), (u16)(i16)s);
	}
	if (lane == 0) st32(o, f32_bits(__fdiv_rn(1.0f, iscale)));
}
EMU_EXPORT(quantize_q8_k)

// round_f16 and round_bf16 make the activations of F16 and BF16 weights.
KERNEL void round_f16(const float* x, u16* y, int n) {
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = f32_to_f16(x[i]);
}
EMU_EXPORT(round_f16)

KERNEL void round_bf16(const float* x, u16* y, int n) {
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = f32_to_bf16(x[i]);
}
EMU_EXPORT(round_bf16)

// ---------------------------------------------------------------------
// Quantized matrix products.
//
// Every quantized type is read in units of 32 consecutive values of a
// row. A weight unit decodes to 32 small integers q (packed four to an
// int for dp4a), an offset o subtracted from each, two integer
// sub-scales (one per 16 values: Q6_K's; the K-quants' 6-bit scale and
// min otherwise) and two floats (the block's scales); an activation unit
// is 32 int8 a, their sums per 16, its scale and, for Q8_1, d·Σa.
//
// Each block's float is then the CPU's (quant/vecdot.go's generic code)
// operation for operation: for the 32-value types from the block's exact
// integer sum; for the K-quants from the two integer sums over a whole
// superblock of 256 (eight units), which the eight lanes or steps that
// took its units add up first. The K-quants' superblocks are added in
// row order, as the CPU adds them (its vector kernels included), so a
// K-quant product equals the CPU's bit for bit. The 32-value types' blocks
// are added in row order by the tiled kernel and across lanes by the
// matrix-vector one; the CPU's vector kernels have orders of their own.

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

DEV void dots(const WU& w, const AU& a, int& d0, int& d1) {
	d0 = dp4a(w.q[0], a.a[0], 0);
	d0 = dp4a(w.q[1], a.a[1], d0);
	d0 = dp4a(w.q[2], a.a[2], d0);
	d0 = dp4a(w.q[3], a.a[3], d0);
	d1 = dp4a(w.q[4], a.a[4], 0);
	d1 = dp4a(w.q[5], a.a[5], d1);
	d1 = dp4a(w.q[6], a.a[6], d1);
	d1 = dp4a(w.q[7], a.a[7], d1);
}

// isum is a 32-value block's exact integer sum Σ(q−o)·a.
DEV int isum32(const WU& w, const AU& a) {
	int d0, d1;
	dots(w, a, d0, d1);
	return d0 + d1 - w.off * (a.asum0 + a.asum1);
}

#define ONES 0x01010101

// Types of 32-value blocks: term is the block's float.
struct B32 {
	static const bool K = false;
	DEVM void ints(const WU&, const AU&, int&, int&) {}
	DEVM float sb(const WU&, float, int, int) { return 0.0f; }
};

// K-quants: ints adds a unit's part of its superblock's integer sums, sb
// makes the superblock's float from them.
struct BK {
	static const bool K = true;
	DEVM float term(const WU&, const AU&) { return 0.0f; }
};

// Activation units.

// Q8_0: 34-byte blocks, a unit each.
struct AQ8_0 {
	DEVM void load(const u8* row, int u, AU& a) {
		const u8* b = row + (i64)u * 34;
		a.da = ldf16(b);
		a.sa = 0.0f;
		for (int i = 0; i < 8; i++) a.a[i] = ld32_b2(b + 2 + 4 * i);
		a.asum0 = dp4a(a.a[3], ONES, dp4a(a.a[2], ONES, dp4a(a.a[1], ONES, dp4a(a.a[0], ONES, 0))));
		a.asum1 = dp4a(a.a[7], ONES, dp4a(a.a[6], ONES, dp4a(a.a[5], ONES, dp4a(a.a[4], ONES, 0))));
	}
};

// Q8_1: 36-byte blocks (d, s = d·Σq, quants), a unit each.
struct AQ8_1 {
	DEVM void load(const u8* row, int u, AU& a) {
		const u8* b = row + (i64)u * 36;
		a.da = ldf16(b);
		a.sa = ldf16(b + 2);
		for (int i = 0; i < 8; i++) a.a[i] = ld32(b + 4 + 4 * i);
		a.asum0 = a.asum1 = 0;
	}
};

// Q8_K: 292-byte blocks of 256 (float d, quants, 16 sums of 16), eight
// units each.
struct AQ8_K {
	DEVM void load(const u8* row, int u, AU& a) {
		const u8* b = row + (i64)(u >> 3) * 292;
		int k = u & 7;
		a.da = ldf32(b);
		for (int i = 0; i < 8; i++) a.a[i] = ld32(b + 4 + 32 * k + 4 * i);
		a.asum0 = (i16)ld16(b + 260 + 4 * k);
		a.asum1 = (i16)ld16(b + 262 + 4 * k);
		a.sa = 0.0f;
	}
};

// Weight units.

struct TQ4_0 : B32 {
	typedef AQ8_0 Act;
	DEVM void unit(const u8* row, int u, WU& w) {
		const u8* b = row + (i64)u * 18;
		w.dw = ldf16(b);
		w.mw = 0.0f;
		w.off = 8, w.s0 = w.s1 = 1;
		for (int i = 0; i < 4; i++) {
			int v = ld32_b2(b + 2 + 4 * i);
			w.q[i] = v & 0x0f0f0f0f;
			w.q[4 + i] = (v >> 4) & 0x0f0f0f0f;
		}
	}
	// float32(sumi)·d·dx
	DEVM float term(const WU& w, const AU& a) { return __fmul_rn(__fmul_rn((float)isum32(w, a), w.dw), a.da); }
};

// d·dx·sumi + m·s
DEV float term_min(const WU& w, const AU& a) {
	return __fadd_rn(__fmul_rn(__fmul_rn(w.dw, a.da), (float)isum32(w, a)), __fmul_rn(w.mw, a.sa));
}

struct TQ4_1 : B32 {
	typedef AQ8_1 Act;
	DEVM void unit(const u8* row, int u, WU& w) {
		const u8* b = row + (i64)u * 20;
		w.dw = ldf16(b);
		w.mw = ldf16(b + 2);
		w.off = 0, w.s0 = w.s1 = 1;
		for (int i = 0; i < 4; i++) {
			int v = ld32(b + 4 + 4 * i);
			w.q[i] = v & 0x0f0f0f0f;
			w.q[4 + i] = (v >> 4) & 0x0f0f0f0f;
		}
	}
	DEVM float term(const WU& w, const AU& a) { return term_min(w, a); }
};

// spread4 puts bits 0..3 of hb at bit 4 of bytes 0..3: the fifth bits of
// four Q5 quants.
DEV int spread4(u32 hb) {
	return (int)(((hb & 1u) << 4) | ((hb & 2u) << 11) | ((hb & 4u) << 18) | ((hb & 8u) << 25));
}

struct TQ5_0 : B32 {
	typedef AQ8_0 Act;
	DEVM void unit(const u8* row, int u, WU& w) {
		const u8* b = row + (i64)u * 22;
		w.dw = ldf16(b);
		w.mw = 0.0f;
		w.off = 16, w.s0 = w.s1 = 1;
		u32 qh = (u32)ld32_b2(b + 2);
		for (int i = 0; i < 4; i++) {
			int v = ld32_b2(b + 6 + 4 * i);
			w.q[i] = (v & 0x0f0f0f0f) | spread4(qh >> (4 * i));
			w.q[4 + i] = ((v >> 4) & 0x0f0f0f0f) | spread4(qh >> (16 + 4 * i));
		}
	}
	// d·dx·float32(sumi)
	DEVM float term(const WU& w, const AU& a) { return __fmul_rn(__fmul_rn(w.dw, a.da), (float)isum32(w, a)); }
};

struct TQ5_1 : B32 {
	typedef AQ8_1 Act;
	DEVM void unit(const u8* row, int u, WU& w) {
		const u8* b = row + (i64)u * 24;
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
	DEVM float term(const WU& w, const AU& a) { return term_min(w, a); }
};

struct TQ8_0 : B32 {
	typedef AQ8_0 Act;
	DEVM void unit(const u8* row, int u, WU& w) {
		const u8* b = row + (i64)u * 34;
		w.dw = ldf16(b);
		w.mw = 0.0f;
		w.off = 0, w.s0 = w.s1 = 1;
		for (int i = 0; i < 8; i++) w.q[i] = ld32_b2(b + 2 + 4 * i);
	}
	// float32(sumi)·(d·dx)
	DEVM float term(const WU& w, const AU& a) { return __fmul_rn((float)isum32(w, a), __fmul_rn(w.dw, a.da)); }
};

// scale_min_k4 unpacks the 6-bit scale and min of group j of a Q4_K or
// Q5_K block (ggml's get_scale_min_k4).
DEV void scale_min_k4(int j, const u8* s, int& sc, int& m) {
	if (j < 4) {
		sc = s[j] & 63;
		m = s[j + 4] & 63;
	} else {
		sc = (s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4);
		m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
	}
}

// Q4_K and Q5_K: d·Σ sc·Σq·a − dmin·Σ m·Σa, d and dmin times the
// activations' scale. Their units keep sc in s0, m in s1, d and dmin in
// dw and mw.
struct KMin : BK {
	DEVM void ints(const WU& w, const AU& a, int& isum, int& summs) {
		int d0, d1;
		dots(w, a, d0, d1);
		isum += w.s0 * (d0 + d1);
		summs += w.s1 * (a.asum0 + a.asum1);
	}
	DEVM float sb(const WU& w, float dy, int isum, int summs) {
		return __fsub_rn(__fmul_rn(__fmul_rn(w.dw, dy), (float)isum), __fmul_rn(__fmul_rn(w.mw, dy), (float)summs));
	}
};

struct TQ4_K : KMin {
	typedef AQ8_K Act;
	DEVM void unit(const u8* row, int u, WU& w) {
		const u8* b = row + (i64)(u >> 3) * 144;
		int k = u & 7;
		scale_min_k4(k, b + 4, w.s0, w.s1);
		w.dw = ldf16(b);
		w.mw = ldf16(b + 2);
		w.off = 0;
		const u8* qs = b + 16 + 32 * (k >> 1);
		int sh = 4 * (k & 1);
		for (int i = 0; i < 8; i++) w.q[i] = (ld32(qs + 4 * i) >> sh) & 0x0f0f0f0f;
	}
};

struct TQ5_K : KMin {
	typedef AQ8_K Act;
	DEVM void unit(const u8* row, int u, WU& w) {
		const u8* b = row + (i64)(u >> 3) * 176;
		int k = u & 7;
		scale_min_k4(k, b + 4, w.s0, w.s1);
		w.dw = ldf16(b);
		w.mw = ldf16(b + 2);
		w.off = 0;
		const u8* qh = b + 16;
		const u8* qs = b + 48 + 32 * (k >> 1);
		int sh = 4 * (k & 1);
		for (int i = 0; i < 8; i++)
			w.q[i] = ((ld32(qs + 4 * i) >> sh) & 0x0f0f0f0f) | (((ld32(qh + 4 * i) >> k) & ONES) << 4);
	}
};

// Q6_K: d·dy·Σ sc·Σ(q−32)·a, a sub-scale per 16 values.
struct TQ6_K : BK {
	typedef AQ8_K Act;
	DEVM void unit(const u8* row, int u, WU& w) {
		const u8* b = row + (i64)(u >> 3) * 210;
		int k = u & 7, n = k >> 2, kk = k & 3;
		w.dw = ldf16(b + 208);
		w.mw = 0.0f;
		w.off = 32;
		w.s0 = (i8)b[192 + 8 * n + 2 * kk];
		w.s1 = (i8)b[192 + 8 * n + 2 * kk + 1];
		const u8* ql = b + 64 * n + 32 * (kk & 1);
		const u8* qh = b + 128 + 32 * n;
		int sh = 4 * (kk >> 1);
		for (int i = 0; i < 8; i++)
			w.q[i] = ((ld32_b2(ql + 4 * i) >> sh) & 0x0f0f0f0f) | (((ld32_b2(qh + 4 * i) >> (2 * kk)) & 0x03030303) << 4);
	}
	DEVM void ints(const WU& w, const AU& a, int& isum, int&) {
		int d0, d1;
		dots(w, a, d0, d1);
		isum += w.s0 * (d0 - 32 * a.asum0) + w.s1 * (d1 - 32 * a.asum1);
	}
	DEVM float sb(const WU& w, float dy, int isum, int) { return __fmul_rn(__fmul_rn(w.dw, dy), (float)isum); }
};

// mmv: up to 8 input rows (decode, a few sequences at once). A warp per
// weight row. For the 32-value types lanes take the row's units in turn
// and their sums meet in a tree; for the K-quants eight lanes take a
// superblock's eight units, four superblocks at a time, and lane 0 adds
// the superblocks in order.
#define MMV_WARPS 4

template <class T>
DEV void mmv32(const u8* W, const u8* A, float* Y, int rows, int units, int n, i64 wstride, i64 astride, int ystride) {
	int lane = threadIdx.x & 31, row = blockIdx.x * MMV_WARPS + (threadIdx.x >> 5);
	if (row >= rows) return;
	const u8* wr = W + row * wstride;
	float acc[8];
	for (int t = 0; t < 8; t++) acc[t] = 0.0f;
	for (int u = lane; u < units; u += 32) {
		WU w;
		T::unit(wr, u, w);
#pragma unroll
		for (int t = 0; t < 8; t++) {
			if (t < n) {
				AU a;
				T::Act::load(A + t * astride, u, a);
				acc[t] = __fadd_rn(acc[t], T::term(w, a));
			}
		}
	}
#pragma unroll
	for (int t = 0; t < 8; t++) {
		if (t < n) {
			float s = warp_sum(acc[t]);
			if (lane == 0) Y[(i64)t * ystride + row] = s;
		}
	}
}

template <class T>
DEV void mmvk(const u8* W, const u8* A, float* Y, int rows, int units, int n, i64 wstride, i64 astride, int ystride) {
	int lane = threadIdx.x & 31, row = blockIdx.x * MMV_WARPS + (threadIdx.x >> 5);
	if (row >= rows) return;
	const u8* wr = W + row * wstride;
	int g = lane >> 3, k = lane & 7, nsb = units >> 3;
	float acc[8];
	for (int t = 0; t < 8; t++) acc[t] = 0.0f;
	for (int s0 = 0; s0 < nsb; s0 += 4) {
		int s = s0 + g;
		bool valid = s < nsb;
		WU w;
		if (valid) T::unit(wr, s * 8 + k, w);
#pragma unroll
		for (int t = 0; t < 8; t++) {
			if (t < n) {
				int is = 0, sm = 0;
				float dy = 0.0f;
				if (valid) {
					AU a;
					T::Act::load(A + t * astride, s * 8 + k, a);
					T::ints(w, a, is, sm);
					dy = a.da;
				}
				for (int m = 1; m < 8; m <<= 1) {
					is += shfl_xor(is, m);
					sm += shfl_xor(sm, m);
				}
				float sbf = valid ? T::sb(w, dy, is, sm) : 0.0f;
				float f1 = shfl(sbf, 8), f2 = shfl(sbf, 16), f3 = shfl(sbf, 24);
				if (lane == 0) {
					acc[t] = __fadd_rn(acc[t], sbf);
					if (s0 + 1 < nsb) acc[t] = __fadd_rn(acc[t], f1);
					if (s0 + 2 < nsb) acc[t] = __fadd_rn(acc[t], f2);
					if (s0 + 3 < nsb) acc[t] = __fadd_rn(acc[t], f3);
				}
			}
		}
	}
	if (lane == 0)
		for (int t = 0; t < n; t++) Y[(i64)t * ystride + row] = acc[t];
}

// mmq: a tile of 64 weight rows × 64 input rows per block of 256
// threads, four units at a time through shared memory; each thread sums
// a 4×4 part of the tile, block by block (superblock by superblock) in
// row order, as the CPU does.
#define MMQ_TILE 64
#define MMQ_STEP 4

template <class T>
DEV void mmq(const u8* W, const u8* A, float* Y, int rows, int units, int n, i64 wstride, i64 astride, int ystride) {
	__shared__ WU ws[MMQ_STEP][MMQ_TILE];
	__shared__ AU as[MMQ_STEP][MMQ_TILE];
	int tid = threadIdx.x, r0 = blockIdx.x * MMQ_TILE, c0 = blockIdx.y * MMQ_TILE;
	int ty = tid >> 4, tx = tid & 15;
	float acc[4][4];
	int is[4][4], sm[4][4];
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) acc[i][j] = 0.0f, is[i][j] = sm[i][j] = 0;
	for (int u0 = 0; u0 < units; u0 += MMQ_STEP) {
		int kk = tid >> 6, r = tid & 63, u = u0 + kk;
		WU& w = ws[kk][r];
		if (u < units && r0 + r < rows) {
			T::unit(W + (r0 + r) * wstride, u, w);
		} else {
			for (int i = 0; i < 8; i++) w.q[i] = 0;
			w.off = w.s0 = w.s1 = 0;
			w.dw = w.mw = 0.0f;
		}
		AU& a = as[kk][r];
		if (u < units && c0 + r < n) {
			T::Act::load(A + (c0 + r) * astride, u, a);
		} else {
			for (int i = 0; i < 8; i++) a.a[i] = 0;
			a.asum0 = a.asum1 = 0;
			a.da = a.sa = 0.0f;
		}
		__syncthreads();
		for (int k = 0; k < MMQ_STEP && u0 + k < units; k++) {
			WU wr[4];
			for (int i = 0; i < 4; i++) wr[i] = ws[k][ty * 4 + i];
			bool last = ((u0 + k) & 7) == 7;
			for (int j = 0; j < 4; j++) {
				AU ac = as[k][tx * 4 + j];
				for (int i = 0; i < 4; i++) {
					if (T::K) {
						T::ints(wr[i], ac, is[i][j], sm[i][j]);
						if (last) {
							acc[i][j] = __fadd_rn(acc[i][j], T::sb(wr[i], ac.da, is[i][j], sm[i][j]));
							is[i][j] = sm[i][j] = 0;
						}
					} else {
						acc[i][j] = __fadd_rn(acc[i][j], T::term(wr[i], ac));
					}
				}
			}
		}
		__syncthreads();
	}
	for (int j = 0; j < 4; j++) {
		int c = c0 + tx * 4 + j;
		if (c >= n) continue;
		for (int i = 0; i < 4; i++) {
			int r = r0 + ty * 4 + i;
			if (r < rows) Y[(i64)c * ystride + r] = acc[i][j];
		}
	}
}

#define MATMUL_KERNELS(name, T, MMV)                                                                                 \
	KERNEL void mmv_##name(const u8* W, const u8* A, float* Y, int rows, int units, int n, i64 wstride, i64 astride, \
	                       int ystride) {                                                                            \
		MMV<T>(W, A, Y, rows, units, n, wstride, astride, ystride);                                                  \
	}                                                                                                                \
	EMU_EXPORT(mmv_##name)                                                                                           \
	KERNEL void mmq_##name(const u8* W, const u8* A, float* Y, int rows, int units, int n, i64 wstride, i64 astride, \
	                       int ystride) {                                                                            \
		mmq<T>(W, A, Y, rows, units, n, wstride, astride, ystride);                                                  \
	}                                                                                                                \
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
// weights with activations rounded to F16 or BF16 (quant.VecDotType), the
// products of the widened values summed in float.

struct FF32 {
	typedef float E;
	DEVM float get(const E* p, i64 i) { return p[i]; }
};
struct FF16 {
	typedef u16 E;
	DEVM float get(const E* p, i64 i) { return f16_to_f32(p[i]); }
};
struct FBF16 {
	typedef u16 E;
	DEVM float get(const E* p, i64 i) { return bf16_to_f32(p[i]); }
};

template <class F>
DEV void mmvf(const typename F::E* W, const typename F::E* A, float* Y, int rows, int cols, int n, int ystride) {
	int lane = threadIdx.x & 31, row = blockIdx.x * MMV_WARPS + (threadIdx.x >> 5);
	if (row >= rows) return;
	const typename F::E* wr = W + (i64)row * cols;
	float acc[8];
	for (int t = 0; t < 8; t++) acc[t] = 0.0f;
	for (int e = lane; e < cols; e += 32) {
		float w = F::get(wr, e);
#pragma unroll
		for (int t = 0; t < 8; t++)
			if (t < n) acc[t] += __fmul_rn(w, F::get(A, (i64)t * cols + e));
	}
#pragma unroll
	for (int t = 0; t < 8; t++) {
		if (t < n) {
			float s = warp_sum(acc[t]);
			if (lane == 0) Y[(i64)t * ystride + row] = s;
		}
	}
}

#define MMF_STEP 32

// mmf: mmq's tiling for float weights, 32 values of the row at a time.
template <class F>
DEV void mmf(const typename F::E* W, const typename F::E* A, float* Y, int rows, int cols, int n, int ystride) {
	__shared__ float ws[MMQ_TILE][MMF_STEP + 1];
	__shared__ float as[MMQ_TILE][MMF_STEP + 1];
	int tid = threadIdx.x, r0 = blockIdx.x * MMQ_TILE, c0 = blockIdx.y * MMQ_TILE;
	int ty = tid >> 4, tx = tid & 15;
	float acc[4][4];
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) acc[i][j] = 0.0f;
	for (int e0 = 0; e0 < cols; e0 += MMF_STEP) {
		for (int l = tid; l < MMQ_TILE * MMF_STEP; l += 256) {
			int r = l / MMF_STEP, e = l % MMF_STEP;
			ws[r][e] = (r0 + r < rows && e0 + e < cols) ? F::get(W, (i64)(r0 + r) * cols + e0 + e) : 0.0f;
			as[r][e] = (c0 + r < n && e0 + e < cols) ? F::get(A, (i64)(c0 + r) * cols + e0 + e) : 0.0f;
		}
		__syncthreads();
		for (int e = 0; e < MMF_STEP; e++)
			for (int i = 0; i < 4; i++)
				for (int j = 0; j < 4; j++) acc[i][j] += __fmul_rn(ws[ty * 4 + i][e], as[tx * 4 + j][e]);
		__syncthreads();
	}
	for (int j = 0; j < 4; j++) {
		int c = c0 + tx * 4 + j;
		if (c >= n) continue;
		for (int i = 0; i < 4; i++) {
			int r = r0 + ty * 4 + i;
			if (r < rows) Y[(i64)c * ystride + r] = acc[i][j];
		}
	}
}

#define FLOAT_KERNELS(name, F)                                                                                 \
	KERNEL void mmv_##name(const F::E* W, const F::E* A, float* Y, int rows, int cols, int n, int ystride) {   \
		mmvf<F>(W, A, Y, rows, cols, n, ystride);                                                              \
	}                                                                                                          \
	EMU_EXPORT(mmv_##name)                                                                                     \
	KERNEL void mmq_##name(const F::E* W, const F::E* A, float* Y, int rows, int cols, int n, int ystride) {   \
		mmf<F>(W, A, Y, rows, cols, n, ystride);                                                               \
	}                                                                                                          \
	EMU_EXPORT(mmq_##name)

FLOAT_KERNELS(f32, FF32)
FLOAT_KERNELS(f16, FF16)
FLOAT_KERNELS(bf16, FBF16)

// ---------------------------------------------------------------------
// RMSNorm, as the CPU's: Σ float64(v·v), mean in float32, the scale
// 1/√(mean+eps) in float64, then (v·scale)·w. A block per row; y may be x.
KERNEL void rms_norm(const float* x, float* y, const float* w, int d, float eps) {
	const float* xr = x + (i64)blockIdx.x * d;
	float* yr = y + (i64)blockIdx.x * d;
	double s = 0.0;
	for (int e = threadIdx.x; e < d; e += blockDim.x) {
		float v = xr[e];
		s += (double)__fmul_rn(v, v);
	}
	s = block_sum(s);
	float mean = (float)(s / (double)d);
	float scale = (float)(1.0 / sqrt((double)__fadd_rn(mean, eps)));
	for (int e = threadIdx.x; e < d; e += blockDim.x) yr[e] = __fmul_rn(__fmul_rn(xr[e], scale), w[e]);
}
EMU_EXPORT(rms_norm)

// rope rotates pairs of each head by the (cos, sin) table the host made
// with the CPU's own code: per row, dims/2 pairs. neox pairs (i, i+dims/2),
// otherwise (2i, 2i+1).
KERNEL void rope(float* x, const float* cs, int rows, int heads, int hd, int dims, int neox) {
	int half = dims / 2;
	i64 total = (i64)rows * heads * half;
	for (i64 l = (i64)blockIdx.x * blockDim.x + threadIdx.x; l < total; l += (i64)gridDim.x * blockDim.x) {
		int k = (int)(l % half);
		i64 rh = l / half;
		int i = (int)(rh / heads);
		float* v = x + rh * hd;
		float c = cs[(i64)i * dims + 2 * k], s = cs[(i64)i * dims + 2 * k + 1];
		int a = neox ? k : 2 * k, b = neox ? k + half : 2 * k + 1;
		float x0 = v[a], x1 = v[b];
		v[a] = __fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, s));
		v[b] = __fadd_rn(__fmul_rn(x0, s), __fmul_rn(x1, c));
	}
}
EMU_EXPORT(rope)

// ---------------------------------------------------------------------
// The KV cache: keys and values of position p at row p, stored F16, F32
// or Q8_0 (quant's reference quantizer, as cpu.KV.Store).

KERNEL void store_kv_f16(const float* k, const float* v, u16* kc, u16* vc, const int* pos, int n, int dim) {
	i64 total = (i64)n * dim;
	for (i64 l = (i64)blockIdx.x * blockDim.x + threadIdx.x; l < total; l += (i64)gridDim.x * blockDim.x) {
		int i = (int)(l / dim), e = (int)(l % dim);
		i64 o = (i64)pos[i] * dim + e;
		kc[o] = f32_to_f16(k[l]);
		vc[o] = f32_to_f16(v[l]);
	}
}
EMU_EXPORT(store_kv_f16)

KERNEL void store_kv_f32(const float* k, const float* v, float* kc, float* vc, const int* pos, int n, int dim) {
	i64 total = (i64)n * dim;
	for (i64 l = (i64)blockIdx.x * blockDim.x + threadIdx.x; l < total; l += (i64)gridDim.x * blockDim.x) {
		int i = (int)(l / dim), e = (int)(l % dim);
		i64 o = (i64)pos[i] * dim + e;
		kc[o] = k[l];
		vc[o] = v[l];
	}
}
EMU_EXPORT(store_kv_f32)

// store_kv_q8_0: a warp per block of 32 of a key or value row: d =
// amax/127, quants roundf(v·(1/d)), as quant.Quantize(Q8_0).
KERNEL void store_kv_q8_0(const float* k, const float* v, u8* kc, u8* vc, const int* pos, int n, int dim) {
	int lane = threadIdx.x & 31;
	int bpr = dim / 32;
	i64 w = (i64)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
	if (w >= 2 * (i64)n * bpr) return;
	int isv = (int)(w / ((i64)n * bpr));
	i64 r = w % ((i64)n * bpr);
	int i = (int)(r / bpr), blk = (int)(r % bpr);
	float x = (isv ? v : k)[(i64)i * dim + blk * 32 + lane];
	float amax = warp_max(fabsf(x));
	float d = __fdiv_rn(amax, 127.0f);
	float id = d != 0.0f ? __fdiv_rn(1.0f, d) : 0.0f;
	u8* o = (isv ? vc : kc) + (i64)pos[i] * (bpr * 34) + blk * 34;
	if (lane == 0) st16(o, f32_to_f16(d));
	o[2 + lane] = (u8)(i8)(int)roundf(__fmul_rn(x, id));
}
EMU_EXPORT(store_kv_q8_0)

// ---------------------------------------------------------------------
// Attention, as the CPU computes it (cpu/attention.go): scores q·k
// scaled, soft-capped, then ggml's soft_max (global max, float64 sum, one
// scale) with an optional sink, the probabilities rounded to F16 against
// an F16 cache (whose queries are rounded to F16 too), then the weighted
// sum of values and the optional sigmoid gate. A block per query row and
// head; scores go to the scratch the host sized (sstride per row and
// head).
//
// The float steps follow the CPU's vector kernels (AVX2 and FMA, the
// usual case; heads of a multiple of 8): each score is the CPU's dot
// product in its order — eight fused lanes and its reduction tree for
// keys in the groups of eight its key blocks of 64 make, sixteen lanes
// and another tree for the rest of a block — the exponentials are its
// vector exponential for the first multiple of 8 of a row's scores and
// expf for the rest, and the weighted sum of values is one fused chain
// per value in key order. With a head that is not a multiple of 8 the
// CPU runs plain Go loops, and so does this: unfused, in order.

struct KF16 {
	DEVM float get(const u8* c, i64 p, int dim, int e) { return f16_to_f32(((const u16*)c)[p * dim + e]); }
	static const bool round = true;
};
struct KF32 {
	DEVM float get(const u8* c, i64 p, int dim, int e) { return ((const float*)c)[p * dim + e]; }
	static const bool round = false;
};
struct KQ8_0 {
	DEVM float get(const u8* c, i64 p, int dim, int e) {
		const u8* b = c + p * (dim / 32 * 34) + (e >> 5) * 34;
		return __fmul_rn(ldf16(b), (float)(i8)b[2 + (e & 31)]);
	}
	static const bool round = false;
};

#define ATT_MAX_HEAD 512

template <class K>
DEV void attend(float* dst, const float* q, const u8* kc, const u8* vc, const int* pos, int heads, int kvheads, int hd,
                int dim, float scale, int window, float softcap, const float* sinks, const float* gate, float* scores,
                int sstride, int cpuvec) {
	__shared__ float qs[ATT_MAX_HEAD];
	int i = blockIdx.x, h = blockIdx.y;
	int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nw = blockDim.x >> 5;
	int kvh = h / (heads / kvheads);
	int p = pos[i];
	int first = window > 0 ? imax(0, p - window + 1) : 0;
	int nk = p - first + 1;
	bool vec = cpuvec && hd % 8 == 0;
	i64 qo = ((i64)i * heads + h) * hd;
	for (int e = tid; e < hd; e += blockDim.x) {
		float v = q[qo + e];
		qs[e] = K::round ? f16_to_f32(f32_to_f16(v)) : v;
	}
	__syncthreads();
	float* S = scores + ((i64)i * heads + h) * sstride;
	// Scores: a half-warp per key.
	int half = lane >> 4, hl = lane & 15, ko = kvh * hd;
	for (int t0 = 2 * warp; t0 < nk; t0 += 2 * nw) {
		int t = t0 + half, P = first + t;
		bool valid = t < nk;
		// The CPU's call for P's key block: keys [lo, ke), eight at a time,
		// the last nkc%8 one by one.
		int kb = P & ~63, lo = imax(kb, first), ke = imin(kb + 64, p + 1), nkc = ke - lo;
		bool tail = P - lo >= nkc - nkc % 8;
		float v = 0.0f;
		if (valid) {
			if (!vec) {
				if (hl == 0)
					for (int e = 0; e < hd; e++) v = __fadd_rn(v, __fmul_rn(qs[e], K::get(kc, P, dim, ko + e)));
			} else if (!tail) {
				if (hl < 8)
					for (int e = hl; e < hd; e += 8) v = fmaf(qs[e], K::get(kc, P, dim, ko + e), v);
			} else {
				int h16 = hd - hd % 16;
				for (int e = hl; e < h16; e += 16) v = fmaf(qs[e], K::get(kc, P, dim, ko + e), v);
				if (h16 < hd && hl < 8) v = fmaf(qs[h16 + hl], K::get(kc, P, dim, ko + h16 + hl), v);
			}
		}
		// Both reduction trees, by every lane (shuffles do not diverge).
		float g = v + shfl_xor(v, 1);
		g = g + shfl_xor(g, 2);
		g = g + shfl_xor(g, 4);
		float u = v + shfl_xor(v, 8);
		u = u + shfl_xor(u, 4);
		u = u + shfl_xor(u, 1);
		u = u + shfl_xor(u, 2);
		if (valid && hl == 0) S[t] = __fmul_rn(!vec ? v : tail ? u : g, scale);
	}
	__syncthreads();
	float mx = bits_f32(0xff800000u);
	float inv = softcap > 0.0f ? __fdiv_rn(1.0f, softcap) : 0.0f;
	for (int t = tid; t < nk; t += blockDim.x) {
		float s = S[t];
		if (softcap > 0.0f) {
			s = __fmul_rn((float)tanh((double)__fmul_rn(s, inv)), softcap);
			S[t] = s;
		}
		mx = fmax2(mx, s);
	}
	mx = block_max(mx);
	float sink = 0.0f;
	if (sinks) {
		sink = sinks[h];
		mx = fmax2(mx, sink);
	}
	double sum = 0.0;
	int nvec = vec ? nk & ~7 : 0;
	for (int t = tid; t < nk; t += blockDim.x) {
		float x = __fsub_rn(S[t], mx);
		float e = t < nvec ? expf_vec(x) : expf_go(x);
		S[t] = e;
		sum += (double)e;
	}
	sum = block_sum(sum);
	if (sinks) sum += exp((double)__fsub_rn(sink, mx));
	float norm = (float)(1.0 / sum);
	for (int t = tid; t < nk; t += blockDim.x) {
		float pr = __fmul_rn(S[t], norm);
		S[t] = K::round ? f16_to_f32(f32_to_f16(pr)) : pr;
	}
	__syncthreads();
	for (int e = tid; e < hd; e += blockDim.x) {
		float acc = 0.0f;
		if (vec)
			for (int t = 0; t < nk; t++) acc = fmaf(S[t], K::get(vc, first + t, dim, ko + e), acc);
		else
			for (int t = 0; t < nk; t++) acc = __fadd_rn(acc, __fmul_rn(S[t], K::get(vc, first + t, dim, ko + e)));
		if (gate) {
			float g = gate[qo + e];
			acc = __fmul_rn(acc, __fdiv_rn(1.0f, __fadd_rn(1.0f, (float)exp(-(double)g))));
		}
		dst[qo + e] = acc;
	}
}

#define ATTEND_KERNEL(name, K)                                                                                      \
	KERNEL void attend_##name(float* dst, const float* q, const u8* kc, const u8* vc, const int* pos, int heads,    \
	                          int kvheads, int hd, int dim, float scale, int window, float softcap,                 \
	                          const float* sinks, const float* gate, float* scores, int sstride, int cpuvec) {      \
		attend<K>(dst, q, kc, vc, pos, heads, kvheads, hd, dim, scale, window, softcap, sinks, gate, scores,        \
		          sstride, cpuvec);                                                                                 \
	}                                                                                                               \
	EMU_EXPORT(attend_##name)

ATTEND_KERNEL(f16, KF16)
ATTEND_KERNEL(f32, KF32)
ATTEND_KERNEL(q8_0, KQ8_0)

// ---------------------------------------------------------------------
// Element-wise operations, grid-stride loops.

#define FOR_EACH(i, n) for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (i64)gridDim.x * blockDim.x)

// swiglu: silu(gate)·up = gate/(1+e^−gate)·up, with the CPU vector
// kernel's exponential (vec) or its Go twin's.
KERNEL void swiglu(float* dst, const float* gate, const float* up, i64 n, int vec) {
	FOR_EACH(i, n) {
		float g = gate[i];
		float e = vec ? expf_vec(-g) : expf_go(-g);
		dst[i] = __fmul_rn(__fdiv_rn(g, __fadd_rn(1.0f, e)), up[i]);
	}
}
EMU_EXPORT(swiglu)

// geglu: ggml's GELU through its F16 table (the CPU's, uploaded), times up.
KERNEL void geglu(float* dst, const float* gate, const float* up, i64 n, const u16* table) {
	FOR_EACH(i, n) {
		float g = gate[i];
		float r;
		if (g <= -10.0f) r = 0.0f;
		else if (g >= 10.0f) r = __fmul_rn(g, up[i]);
		else r = __fmul_rn(f16_to_f32(table[f32_to_f16(g)]), up[i]);
		dst[i] = r;
	}
}
EMU_EXPORT(geglu)

// swiglu_clamped: gpt-oss's, g = min(gate, limit), u = clamp(up, ±limit),
// g/(1+e^(−alpha·g))·(u+1), the exponential in float64 as the CPU's.
KERNEL void swiglu_clamped(float* dst, const float* gate, const float* up, i64 n, float alpha, float limit) {
	FOR_EACH(i, n) {
		float g = fmin2(gate[i], limit);
		float u = fmax2(-limit, fmin2(up[i], limit));
		float e = (float)exp((double)(-__fmul_rn(alpha, g)));
		dst[i] = __fmul_rn(__fdiv_rn(g, __fadd_rn(1.0f, e)), __fadd_rn(u, 1.0f));
	}
}
EMU_EXPORT(swiglu_clamped)

KERNEL void add(float* dst, const float* x, i64 n) {
	FOR_EACH(i, n) dst[i] = __fadd_rn(dst[i], x[i]);
}
EMU_EXPORT(add)

KERNEL void add_bias(float* x, const float* b, i64 n, int d) {
	FOR_EACH(i, n) x[i] = __fadd_rn(x[i], b[i % d]);
}
EMU_EXPORT(add_bias)

KERNEL void scale(float* x, i64 n, float s) {
	FOR_EACH(i, n) x[i] = __fmul_rn(x[i], s);
}
EMU_EXPORT(scale)

// soft_cap: c·tanh(v/c) as llama.cpp's graph spells it: v·(1/c), tanh in
// float64, times c, each rounded to float32.
KERNEL void soft_cap(float* x, i64 n, float c) {
	float inv = __fdiv_rn(1.0f, c);
	FOR_EACH(i, n) x[i] = __fmul_rn((float)tanh((double)__fmul_rn(x[i], inv)), c);
}
EMU_EXPORT(soft_cap)

KERNEL void copy_rows(float* dst, int dstride, const float* src, int sstride, int rows, int cols) {
	FOR_EACH(l, (i64)rows * cols) {
		i64 r = l / cols;
		int c = (int)(l % cols);
		dst[r * dstride + c] = src[r * sstride + c];
	}
}
EMU_EXPORT(copy_rows)

KERNEL void gather_rows(float* dst, const float* src, int cols, const int* idx, int nrows) {
	FOR_EACH(l, (i64)nrows * cols) {
		i64 j = l / cols;
		int c = (int)(l % cols);
		dst[l] = src[(i64)idx[j] * cols + c];
	}
}
EMU_EXPORT(gather_rows)

// scatter_add_rows: a thread per column walks the rows in order, so rows
// sent to the same destination add up in the CPU's order.
KERNEL void scatter_add_rows(float* dst, const float* src, int cols, const int* idx, const float* sc, int nrows) {
	FOR_EACH(c, cols) {
		for (int j = 0; j < nrows; j++) {
			float v = src[(i64)j * cols + c];
			if (sc) v = __fmul_rn(sc[j], v);
			i64 o = (i64)idx[j] * cols + c;
			dst[o] = __fadd_rn(dst[o], v);
		}
	}
}
EMU_EXPORT(scatter_add_rows)
