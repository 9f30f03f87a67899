package quant

import "math"

// MXFP4 is the OCP microscaling format gpt-oss ships its experts in: 32
// E2M1 (4-bit float) values sharing one E8M0 (power of two) scale. ggml
// stores the E2M1 values doubled, as the integers of kvaluesMXFP4, and
// halves the scale to make up for it, so a block dequantizes as
// e8m0Half(e)·kvalues[q] and dot products stay in integers until the one
// scale per block, as for IQ4_NL.

// kvaluesMXFP4 is E2M1's value set {0, 0.5, 1, 1.5, 2, 3, 4, 6} and its
// negatives, times two; index 8 is E2M1's negative zero.
var kvaluesMXFP4 = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// e8m0Half is half the value of the E8M0 scale e, 2^(e−128), as ggml's
// GGML_E8M0_TO_FP32_HALF computes it: e = 0 and 1 are float32
// subnormals, e = 255 (E8M0's NaN) reads as 2^127 as ggml reads it.
func e8m0Half(e uint8) float32 {
	if e < 2 {
		return math.Float32frombits(0x00200000 << e)
	}
	return math.Float32frombits(uint32(e-1) << 23)
}

// e8m0HalfTable holds e8m0Half of every byte, for the SIMD kernels.
var e8m0HalfTable = func() *[256]float32 {
	var t [256]float32
	for e := range t {
		t[e] = e8m0Half(uint8(e))
	}
	return &t
}()

// MXFP4: e8m0Half(e)·kvalues[q]; low nibbles hold elements 0–15, high
// nibbles 16–31.
func dequantMXFP4(b []byte, y []float32) {
	d := e8m0Half(b[0])
	qs := b[1:17]
	y = y[:32]
	for j := 0; j < 16; j++ {
		y[j] = float32(kvaluesMXFP4[qs[j]&0xf]) * d
		y[j+16] = float32(kvaluesMXFP4[qs[j]>>4]) * d
	}
}

// quantMXFP4 encodes one 32-value block as ggml's quantize_row_mxfp4_ref
// does (llama-quantize has no other MXFP4 quantizer): the exponent puts
// the largest magnitude in [4, 8)·d, i.e. at the top of E2M1's range
// after doubling, and each value takes the nearest codebook entry, the
// first of equals on a tie.
func quantMXFP4(x []float32, b []byte) {
	x = x[:32]
	var amax float32
	for _, v := range x {
		if a := abs32(v); amax < a {
			amax = a
		}
	}
	var e uint8
	if amax > 0 {
		// floorf(log2f(amax)) − 2 + 127 in float32, converted as x86 does
		// (through int32, so the few amax below 2^−125 wrap as in ggml).
		l := float32(math.Floor(float64(log2f(amax))))
		e = uint8(int32(l - 2 + 127))
	}
	d := e8m0Half(e)
	b[0] = e
	for j := 0; j < 16; j++ {
		b[1+j] = bestIndexMXFP4(x[j], d) | bestIndexMXFP4(x[j+16], d)<<4
	}
}

// log2f is log2 rounded once to float32, which is what a correctly
// rounded log2f returns; glibc's is within an ulp of it, and only amax a
// few ulps below a power of two could tell them apart.
func log2f(x float32) float32 { return float32(math.Log2(float64(x))) }

// bestIndexMXFP4 is the index of the codebook entry nearest x at scale
// d, errors measured in float32 as ggml does.
func bestIndexMXFP4(x, d float32) byte {
	best := 0
	bestErr := abs32(float32(float32(kvaluesMXFP4[0])*d) - x)
	for i := 1; i < 16; i++ {
		if err := abs32(float32(float32(kvaluesMXFP4[i])*d) - x); err < bestErr {
			best, bestErr = i, err
		}
	}
	return byte(best)
}

// MXFP4 × Q8_0 (17-byte blocks: e, qs[16]): the scale is the product of
// the activation's half and the weight's E8M0 half, as in ggml.
func dotMXFP4(w, x []byte, nb int) float32 {
	var sumf float32
	for i := 0; i < nb; i++ {
		bw, bx := w[17*i:17*i+17], x[34*i:34*i+34]
		sumi := codebookSum(&kvaluesMXFP4, bw[1:17], bx[2:34])
		d := fp16(bx) * e8m0Half(bw[0])
		sumf += float32(d * float32(sumi))
	}
	return sumf
}
