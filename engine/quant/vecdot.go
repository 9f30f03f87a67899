package quant

import (
	"encoding/binary"
	"math"
)

// Dot products of one weight row with one activation vector, in the
// formats llama.cpp multiplies: the activations are first quantized to
// VecDotType(w) (8-bit blocks for the quantized weight types), then each
// block's products are summed exactly in integers and scaled once. This is
// ggml's scalar reference arithmetic; SIMD kernels are meant to be its
// twins and are tested against it.

// VecDotType is the type activations are converted to before a dot
// product with weights of type w, as in llama.cpp's CPU backend. For a
// type VecDot does not support it returns w itself (check with
// VecDotSupported).
func VecDotType(w Type) Type {
	switch w {
	case F32, F16, BF16:
		return w
	case Q4_0, Q5_0, Q8_0, IQ4_NL, MXFP4:
		return Q8_0
	case Q4_1, Q5_1:
		return Q8_1
	case Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS:
		return Q8_K
	}
	return w
}

// VecDotSupported reports whether VecDot handles weights of type w.
func VecDotSupported(w Type) bool {
	switch w {
	case F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4,
		Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS:
		return true
	}
	return false
}

// VecDot returns the dot product of the first n elements of a weight row
// of type w with n activations already in VecDotType(w) (F32 activations
// as little-endian float32 bytes). wRow and act must hold at least the row
// size of n elements of their types, and n must be a whole number of
// blocks of both. On bad input (an unsupported type, short buffers, a
// partial block) it returns NaN rather than panicking: check the shapes
// once per matrix, not per row.
//
// Float scalar types accumulate float32 products in float64, like ggml's
// scalar ggml_vec_dot_f32/f16/bf16. VecDot does not allocate and is safe
// for concurrent use.
//
// On amd64 VecDot runs an AVX2 or AVX-512 kernel when the CPU has one
// (see simd_amd64.go), on arm64 a NEON kernel (simd_arm64.go). Those sum
// in a different order than the generic code and so may differ from it
// in the last bits for the float types and the 32-element block types;
// the K-quant kernels are bit-identical.
// Q8_K activations must carry their bsums (the sums of each 16 quants) as
// Quantize writes them: the kernels take the offset terms from them.
func VecDot(w Type, wRow, act []byte, n int) float32 {
	if !VecDotSupported(w) || !fits(w, len(wRow), n) || !fits(VecDotType(w), len(act), n) {
		return float32(math.NaN())
	}
	return vecDotChecked(w, wRow, act, n)
}

// vecDotChecked is VecDot after its checks: the SIMD kernel for w where
// this CPU has one, else the generic code.
func vecDotChecked(w Type, wRow, act []byte, n int) float32 {
	if n == 0 {
		return 0
	}
	if f, ok := vecDotFast(w, wRow, act, n); ok {
		return f
	}
	return vecDotGeneric(w, wRow, act, n)
}

// vecDotGeneric is the plain-Go oracle every SIMD kernel is tested against.
func vecDotGeneric(w Type, wRow, act []byte, n int) float32 {
	switch w {
	case F32:
		return dotF32(wRow, act, n)
	case F16:
		return dotF16(wRow, act, n)
	case BF16:
		return dotBF16(wRow, act, n)
	case Q4_0:
		return dotQ4_0(wRow, act, n/32)
	case Q4_1:
		return dotQ4_1(wRow, act, n/32)
	case Q5_0:
		return dotQ5_0(wRow, act, n/32)
	case Q5_1:
		return dotQ5_1(wRow, act, n/32)
	case Q8_0:
		return dotQ8_0(wRow, act, n/32)
	case IQ4_NL:
		return dotIQ4_NL(wRow, act, n/32)
	case MXFP4:
		return dotMXFP4(wRow, act, n/32)
	case Q2_K:
		return dotQ2_K(wRow, act, n/QK_K)
	case Q3_K:
		return dotQ3_K(wRow, act, n/QK_K)
	case Q4_K:
		return dotQ4_K(wRow, act, n/QK_K)
	case Q5_K:
		return dotQ5_K(wRow, act, n/QK_K)
	case Q6_K:
		return dotQ6_K(wRow, act, n/QK_K)
	case IQ4_XS:
		return dotIQ4_XS(wRow, act, n/QK_K)
	}
	return float32(math.NaN())
}

// fits reports whether nbytes hold n elements of t, n a whole number of blocks.
func fits(t Type, nbytes, n int) bool {
	need, ok := t.RowSize(n)
	return ok && nbytes >= need
}

// VecDotF32 is the dot product of two float32 vectors of equal length
// (NaN when the lengths differ), accumulated in float64 like ggml's scalar
// ggml_vec_dot_f32 by the generic code; it equals VecDot(F32, …) on the
// same values, SIMD included.
func VecDotF32(w, x []float32) float32 {
	if len(w) != len(x) {
		return float32(math.NaN())
	}
	if len(w) == 0 {
		return 0
	}
	if f, ok := vecDotF32Fast(w, x); ok {
		return f
	}
	var sum float64
	for i, v := range w {
		sum += float64(v * x[i])
	}
	return float32(sum)
}

func dotF32(w, x []byte, n int) float32 {
	w, x = w[:4*n], x[:4*n]
	var sum float64
	for i := 0; i < 4*n; i += 4 {
		a := math.Float32frombits(binary.LittleEndian.Uint32(w[i:]))
		b := math.Float32frombits(binary.LittleEndian.Uint32(x[i:]))
		sum += float64(a * b)
	}
	return float32(sum)
}

func dotF16(w, x []byte, n int) float32 {
	w, x = w[:2*n], x[:2*n]
	var sum float64
	for i := 0; i < 2*n; i += 2 {
		a, b := fp16(w[i:]), fp16(x[i:])
		sum += float64(a * b)
	}
	return float32(sum)
}

func dotBF16(w, x []byte, n int) float32 {
	w, x = w[:2*n], x[:2*n]
	var sum float64
	for i := 0; i < 2*n; i += 2 {
		a := BF16ToFP32(binary.LittleEndian.Uint16(w[i:]))
		b := BF16ToFP32(binary.LittleEndian.Uint16(x[i:]))
		sum += float64(a * b)
	}
	return float32(sum)
}

// nibbleSum is Σ(q−off)·q8 of one 32-element block of nibbles qw
// (elements 0–15 low, 16–31 high) against its Q8_0/Q8_1 quants qx: Q4_0
// (off 8) and Q4_1 (off 0) differ only in the offset. Small enough to
// inline, so the offset is a constant again at each call.
func nibbleSum(qw, qx []byte, off int) (sumi int) {
	qw, qx = qw[:16], qx[:32]
	for j := 0; j < 16; j++ {
		sumi += (int(qw[j]&0xf) - off) * int(int8(qx[j]))
		sumi += (int(qw[j]>>4) - off) * int(int8(qx[j+16]))
	}
	return sumi
}

// nibbleSum5 is nibbleSum with a fifth bit per element from qh (bit e
// for element e): Q5_0 (off 16) and Q5_1 (off 0). (Its inline cost is
// the budget's 80: h = qh>>j, not two shifts of qh, keeps it there.)
func nibbleSum5(qh uint32, qw, qx []byte, off int) (sumi int) {
	qw, qx = qw[:16], qx[:32]
	for j := 0; j < 16; j++ {
		q, h := qw[j], qh>>j // h's bits 0 and 16: elements j and j+16
		sumi += (int(q&0xf|byte(h<<4)&0x10) - off) * int(int8(qx[j]))
		sumi += (int(q>>4|byte(h>>12)&0x10) - off) * int(int8(qx[j+16]))
	}
	return sumi
}

// codebookSum is Σ kv[q]·q8 of one 32-element block of 4-bit codebook
// indexes qw (as nibbleSum lays them) against qx: IQ4_NL and MXFP4, which
// differ in their codebook and scale only.
func codebookSum(kv *[16]int8, qw, qx []byte) (sumi int) {
	qw, qx = qw[:16], qx[:32]
	for j := 0; j < 16; j++ {
		sumi += int(kv[qw[j]&0xf]) * int(int8(qx[j]))
		sumi += int(kv[qw[j]>>4]) * int(int8(qx[j+16]))
	}
	return sumi
}

// Q4_0 × Q8_0 (34-byte blocks: d, qs[32]).
func dotQ4_0(w, x []byte, nb int) float32 {
	var sumf float32
	for i := 0; i < nb; i++ {
		bw, bx := w[18*i:18*i+18], x[34*i:34*i+34]
		sumi := nibbleSum(bw[2:18], bx[2:34], 8)
		sumf += float32(float32(sumi) * fp16(bw) * fp16(bx))
	}
	return sumf
}

// Q4_1 × Q8_1 (36-byte blocks: d, s = d·Σq, qs[32]); the min term is m·s.
func dotQ4_1(w, x []byte, nb int) float32 {
	var sumf float32
	for i := 0; i < nb; i++ {
		bw, bx := w[20*i:20*i+20], x[36*i:36*i+36]
		sumi := nibbleSum(bw[4:20], bx[4:36], 0)
		sumf += float32(fp16(bw)*fp16(bx)*float32(sumi)) + float32(fp16(bw[2:])*fp16(bx[2:]))
	}
	return sumf
}

// Q5_0 × Q8_0.
func dotQ5_0(w, x []byte, nb int) float32 {
	var sumf float32
	for i := 0; i < nb; i++ {
		bw, bx := w[22*i:22*i+22], x[34*i:34*i+34]
		sumi := nibbleSum5(binary.LittleEndian.Uint32(bw[2:]), bw[6:22], bx[2:34], 16)
		sumf += float32(fp16(bw) * fp16(bx) * float32(sumi))
	}
	return sumf
}

// Q5_1 × Q8_1.
func dotQ5_1(w, x []byte, nb int) float32 {
	var sumf float32
	for i := 0; i < nb; i++ {
		bw, bx := w[24*i:24*i+24], x[36*i:36*i+36]
		sumi := nibbleSum5(binary.LittleEndian.Uint32(bw[4:]), bw[8:24], bx[4:36], 0)
		sumf += float32(fp16(bw)*fp16(bx)*float32(sumi)) + float32(fp16(bw[2:])*fp16(bx[2:]))
	}
	return sumf
}

// Q8_0 × Q8_0.
func dotQ8_0(w, x []byte, nb int) float32 {
	var sumf float32
	for i := 0; i < nb; i++ {
		bw, bx := w[34*i:34*i+34], x[34*i:34*i+34]
		qw, qx := bw[2:34], bx[2:34]
		sumi := 0
		for j := range qw {
			sumi += int(int8(qw[j])) * int(int8(qx[j]))
		}
		sumf += float32(float32(sumi) * (fp16(bw) * fp16(bx)))
	}
	return sumf
}

// IQ4_NL × Q8_0.
func dotIQ4_NL(w, x []byte, nb int) float32 {
	var sumf float32
	for i := 0; i < nb; i++ {
		bw, bx := w[18*i:18*i+18], x[34*i:34*i+34]
		sumi := codebookSum(&kvaluesIQ4NL, bw[2:18], bx[2:34])
		sumf += float32(fp16(bw) * fp16(bx) * float32(sumi))
	}
	return sumf
}

// q8K splits a 292-byte Q8_K block: float32 d, qs[256], bsums[16] (int16,
// the sum of each 16 quants, so min terms need no pass over the quants).
func q8K(b []byte) (d float32, qs []byte, bsums []byte) {
	return math.Float32frombits(binary.LittleEndian.Uint32(b)), b[4:260], b[260:292]
}

func bsum(bsums []byte, j int) int {
	return int(int16(binary.LittleEndian.Uint16(bsums[2*j:])))
}

// minSumK4 is the mins' term Σ m·q8 of sub-blocks 2j (min m1) and 2j+1
// (min m2) of a Q4_K or Q5_K super-block: each 32-element sub-block's
// activations are two of the Q8_K row's 16-element bsums.
func minSumK4(bsums []byte, j, m1, m2 int) int {
	return m1*(bsum(bsums, 4*j)+bsum(bsums, 4*j+1)) + m2*(bsum(bsums, 4*j+2)+bsum(bsums, 4*j+3))
}

// superSumK is a Q2_K, Q4_K or Q5_K super-block's share of a dot
// product, d·isum − dmin·summs (d, dmin: the block's scales times the
// activation's), each product rounded to float32 before the difference
// as ggml rounds it.
func superSumK(d, dmin float32, isum, summs int) float32 {
	return float32(d*float32(isum)) - float32(dmin*float32(summs))
}

// Q2_K's and Q3_K's 16 sub-blocks of 16 values: sub-block is holds the
// 2-bit fields at bit 2·(is/2%4) of qs[32·(is/8) + 16·(is%2):][:16], and
// Q3_K's third bits are bit is/2 of hmask[16·(is%2):][:16] (so the
// order ggml walks them in, by half, shift and 16 values, is is's).

// Q2_K × Q8_K: d·Σ sc·Σq·q8 − dmin·Σ m·bsum.
func dotQ2_K(w, x []byte, nb int) float32 {
	var sumf float32
	for i := 0; i < nb; i++ {
		bw := w[84*i : 84*i+84]
		dy, qx, bsums := q8K(x[292*i : 292*i+292])
		scales, qs := bw[0:16], bw[16:80]
		summs := 0
		for j := 0; j < 16; j++ {
			summs += int(scales[j]>>4) * bsum(bsums, j)
		}
		isum := 0
		for is := range 16 {
			q, shift, y := qs[32*(is/8)+16*(is%2):][:16], uint(is/2%4*2), qx[16*is:][:16]
			s := 0
			for l := range 16 {
				s += int((q[l]>>shift)&3) * int(int8(y[l]))
			}
			isum += int(scales[is]&0xf) * s
		}
		sumf += superSumK(dy*fp16(bw[80:]), dy*fp16(bw[82:]), isum, summs)
	}
	return sumf
}

// Q3_K × Q8_K: d·Σ (sc−32)·Σq·q8 with q in [−4, 3].
func dotQ3_K(w, x []byte, nb int) float32 {
	var sumf float32
	var sc [16]int8
	for i := 0; i < nb; i++ {
		bw := w[110*i : 110*i+110]
		dy, qx, _ := q8K(x[292*i : 292*i+292])
		hmask, qs := bw[0:32], bw[32:96]
		q3KScales(bw[96:108], &sc)
		isum := 0
		for is := range 16 {
			q, shift, y := qs[32*(is/8)+16*(is%2):][:16], uint(is/2%4*2), qx[16*is:][:16]
			h, m := hmask[16*(is%2):][:16], byte(1)<<(is/2)
			s := 0
			for l := range 16 {
				v := int((q[l] >> shift) & 3)
				if h[l]&m == 0 {
					v -= 4
				}
				s += v * int(int8(y[l]))
			}
			isum += (int(sc[is]) - 32) * s
		}
		sumf += float32(fp16(bw[108:]) * dy * float32(isum))
	}
	return sumf
}

// Q4_K × Q8_K: d·Σ sc·Σq·q8 − dmin·Σ m·(bsum pairs).
func dotQ4_K(w, x []byte, nb int) float32 { return dotQ45_K(w, x, nb, 144, 16) }

// Q5_K × Q8_K: as Q4_K with a fifth bit from qh.
func dotQ5_K(w, x []byte, nb int) float32 { return dotQ45_K(w, x, nb, 176, 48) }

// dotQ45_K is dotQ4_K and dotQ5_K: one super-block loop, because a Q5_K
// super-block is a Q4_K one (size bytes) with qh[32] before the nibbles,
// which start at qsOff (16 without qh, 48 with).
func dotQ45_K(w, x []byte, nb, size, qsOff int) float32 {
	var sumf float32
	for i := 0; i < nb; i++ {
		bw := w[size*i : size*i+size]
		dy, qx, bsums := q8K(x[292*i : 292*i+292])
		scales, qh, qs := bw[4:16], bw[16:qsOff], bw[qsOff:size]
		isum, summs := 0, 0
		for j := 0; j < 4; j++ {
			sc1, m1 := scaleMinK4(2*j, scales)
			sc2, m2 := scaleMinK4(2*j+1, scales)
			s1, s2 := quantSumsK45(qs[32*j:32*j+32], qh, j, qx[64*j:64*j+32], qx[64*j+32:64*j+64])
			isum += int(sc1)*s1 + int(sc2)*s2
			summs += minSumK4(bsums, j, int(m1), int(m2))
		}
		sumf += superSumK(fp16(bw)*dy, fp16(bw[2:])*dy, isum, summs)
	}
	return sumf
}

// quantSumsK45 is Σq·q8 of sub-blocks 2j (q's low nibbles against ylo)
// and 2j+1 (high nibbles, yhi), with Q5_K's fifth bits (qh bits 2j and
// 2j+1) where qh is not empty. Two loops, not a test per quant: the
// Q4_K loop stays as fast as it was, and a second pass for the fifth
// bits made Q5_K's Go path about 1.7× as slow.
func quantSumsK45(q, qh []byte, j int, ylo, yhi []byte) (s1, s2 int) {
	q, ylo, yhi = q[:32], ylo[:32], yhi[:32]
	if len(qh) == 0 {
		for l := 0; l < 32; l++ {
			s1 += int(q[l]&0xf) * int(int8(ylo[l]))
			s2 += int(q[l]>>4) * int(int8(yhi[l]))
		}
		return s1, s2
	}
	qh = qh[:32]
	u1, u2 := byte(1)<<(2*j), byte(2)<<(2*j)
	for l := 0; l < 32; l++ {
		v1, v2 := int(q[l]&0xf), int(q[l]>>4)
		if qh[l]&u1 != 0 {
			v1 += 16
		}
		if qh[l]&u2 != 0 {
			v2 += 16
		}
		s1 += v1 * int(int8(ylo[l]))
		s2 += v2 * int(int8(yhi[l]))
	}
	return s1, s2
}

// Q6_K × Q8_K: d·Σ sc·Σ(q−32)·q8.
func dotQ6_K(w, x []byte, nb int) float32 {
	var sumf float32
	for i := 0; i < nb; i++ {
		bw := w[210*i : 210*i+210]
		dy, qx, _ := q8K(x[292*i : 292*i+292])
		isum := 0
		for n := 0; n < 2; n++ {
			l4, h, s := q6KHalf(bw, n)
			y := qx[128*n : 128*n+128]
			for half := 0; half < 2; half++ {
				var s1, s2, s3, s4 int
				for l := 16 * half; l < 16*half+16; l++ {
					q1, q2, q3, q4 := q6KQuants(l4, h, l)
					s1 += q1 * int(int8(y[l]))
					s2 += q2 * int(int8(y[l+32]))
					s3 += q3 * int(int8(y[l+64]))
					s4 += q4 * int(int8(y[l+96]))
				}
				isum += int(int8(s[half]))*s1 + int(int8(s[half+2]))*s2 +
					int(int8(s[half+4]))*s3 + int(int8(s[half+6]))*s4
			}
		}
		sumf += float32(fp16(bw[208:]) * dy * float32(isum))
	}
	return sumf
}

// IQ4_XS × Q8_K: d·Σ (ls−32)·Σ kvalues[q]·q8.
func dotIQ4_XS(w, x []byte, nb int) float32 {
	var sumf float32
	for i := 0; i < nb; i++ {
		bw := w[136*i : 136*i+136]
		dy, qx, _ := q8K(x[292*i : 292*i+292])
		scalesH := binary.LittleEndian.Uint16(bw[2:])
		scalesL, qs := bw[4:8], bw[8:136]
		isum := 0
		for ib := 0; ib < 8; ib++ {
			q := qs[16*ib : 16*ib+16]
			y := qx[32*ib : 32*ib+32]
			s := 0
			for j := 0; j < 16; j++ {
				s += int(kvaluesIQ4NL[q[j]&0xf]) * int(int8(y[j]))
				s += int(kvaluesIQ4NL[q[j]>>4]) * int(int8(y[j+16]))
			}
			isum += (iq4XSScale(scalesH, scalesL, ib) - 32) * s
		}
		sumf += float32(fp16(bw) * dy * float32(isum))
	}
	return sumf
}
