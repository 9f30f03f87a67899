package quant

import "math"

// QuantizeActivations converts a row of activations to t (normally
// VecDotType of a weight type) the way llama.cpp's CPU backend does at
// run time on x86, which is not always its reference quantizer: for Q8_0
// and Q8_1 the SIMD code scales by 127/amax and rounds halves to even,
// where the reference multiplies by 1/(amax/127) and rounds halves away
// from zero. The two differ in an occasional last bit of an int8, and
// every matrix product re-rounds its input, so matching the run-time
// formula is what keeps logits identical to llama.cpp's. Other types use
// Quantize.
func QuantizeActivations(t Type, src []float32, dst []byte) error {
	switch t {
	case Q8_0, Q8_1:
	case Q8_K:
		return quantizeQ8_K(src, dst)
	default:
		return Quantize(t, src, dst)
	}
	if err := checkSizes(t, len(src), len(dst)); err != nil {
		return err
	}
	bs := t.TypeSize()
	nb := len(src) / 32
	for i := 0; i < nb; i++ {
		if t == Q8_0 {
			// SIMD where there is one, up to a block it leaves to this code.
			if i += quantFast(Q8_0, src[i*32:], dst[i*bs:]); i == nb {
				break
			}
		}
		x, b := src[i*32:(i+1)*32], dst[i*bs:(i+1)*bs]
		amax := absMax(x)
		d := amax / 127
		var id float32
		if amax != 0 {
			id = 127 / amax
		}
		putFP16(b, d)
		qs := b[2:]
		if t == Q8_1 {
			qs = b[4:]
		}
		sum := 0
		for j, v := range x {
			q := int8(math.RoundToEven(float64(v * id)))
			qs[j] = byte(q)
			sum += int(q)
		}
		if t == Q8_1 {
			putFP16(b[2:], d*float32(sum))
		}
	}
	return nil
}

// quantizeQ8_K is Quantize for Q8_K (its reference quantizer is also what
// llama.cpp runs), SIMD where there is a kernel, up to each block that it
// leaves to the Go code.
func quantizeQ8_K(src []float32, dst []byte) error {
	if err := checkSizes(Q8_K, len(src), len(dst)); err != nil {
		return err
	}
	bs := Q8_K.TypeSize()
	nb := len(src) / QK_K
	for i := 0; i < nb; i++ {
		if i += quantFast(Q8_K, src[i*QK_K:], dst[i*bs:]); i == nb {
			break
		}
		quantQ8_K(src[i*QK_K:(i+1)*QK_K], dst[i*bs:(i+1)*bs])
	}
	return nil
}
