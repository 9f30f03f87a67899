package quant

import "fmt"

// quantizers encode rows of each type Quantize handles, whose sizes are
// checked, as ggml's reference quantizers do; indexed by type (an array:
// the CPU backend quantizes each new KV row through Quantize). A table
// costs Quantize nothing measurable, its kernels being large; Dequantize,
// whose are small, keeps a switch.
var quantizers = [...]func(src []float32, dst []byte){
	F32:    quantF32,
	F16:    quantF16,
	BF16:   quantBF16,
	Q4_0:   blocks(Q4_0, quantQ4_0),
	Q4_1:   blocks(Q4_1, quantQ4_1),
	Q5_0:   blocks(Q5_0, quantQ5_0),
	Q5_1:   blocks(Q5_1, quantQ5_1),
	Q8_0:   blocks(Q8_0, quantQ8_0),
	Q8_1:   blocks(Q8_1, quantQ8_1),
	Q2_K:   blocks(Q2_K, quantQ2_K),
	Q3_K:   blocks(Q3_K, quantQ3_K),
	Q4_K:   blocks(Q4_K, quantQ4_K),
	Q5_K:   blocks(Q5_K, quantQ5_K),
	Q6_K:   blocks(Q6_K, quantQ6_K),
	Q8_K:   blocks(Q8_K, quantQ8_K),
	IQ4_NL: blocks(IQ4_NL, quantIQ4_NL),
	IQ4_XS: blocks(IQ4_XS, quantIQ4_XS),
	MXFP4:  blocks(MXFP4, quantMXFP4),
}

// blocks runs a block format's one-block quantizer over every block of
// a row.
func blocks(t Type, quant func(x []float32, b []byte)) func(src []float32, dst []byte) {
	return func(src []float32, dst []byte) { quantBlocks(src, dst, t.BlockSize(), t.TypeSize(), quant) }
}

// quantizer checks n elements against nbytes of type t and returns t's
// quantizer.
func quantizer(t Type, n, nbytes int) (func(src []float32, dst []byte), error) {
	if err := checkSizes(t, n, nbytes); err != nil {
		return nil, fmt.Errorf("quant: quantize %v: %w", t, err)
	}
	if int(t) >= len(quantizers) || quantizers[t] == nil {
		return nil, fmt.Errorf("quant: quantize %v: %w", t, ErrUnsupported)
	}
	return quantizers[t], nil
}
