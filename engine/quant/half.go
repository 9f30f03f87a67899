package quant

import (
	"fmt"
	"math"
)

// FP16ToFP32 widens an IEEE binary16 value. Every half float, subnormals
// included, is exactly representable in float32. A NaN keeps its sign and
// payload and comes back quiet, as ggml's conversions (table and F16C) do.
func FP16ToFP32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch exp {
	case 0x1f:
		if mant == 0 {
			return math.Float32frombits(sign | 0x7f800000)
		}
		return math.Float32frombits(sign | 0x7fc00000 | mant<<13)
	case 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		// A subnormal half is mant·2⁻²⁴; both factors are exact in float32.
		v := float32(mant) * (1.0 / (1 << 24))
		return math.Float32frombits(sign | math.Float32bits(v))
	}
	return math.Float32frombits(sign | (exp+(127-15))<<23 | mant<<13)
}

// FP32ToFP16 rounds to the nearest half float, ties to even, with correct
// subnormals and overflow to ±Inf. Results are bit-identical to ggml's
// portable GGML_FP32_TO_FP16 (the one ggml-base uses to write model files),
// including NaN, which becomes the canonical quiet NaN 0x7E00 with the
// input's sign (x86's F16C instruction differs only there: it keeps the
// NaN's payload).
func FP32ToFP16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	abs := b & 0x7fffffff
	switch {
	case abs > 0x7f800000: // NaN
		return sign | 0x7e00
	case abs >= 0x477ff000:
		// 65520 lies halfway between 65504 (odd mantissa) and 65536: ties
		// to even round it, and everything above, to infinity.
		return sign | 0x7c00
	case abs >= 0x38800000: // 2⁻¹⁴, the smallest normal half
		m := abs - (127-15)<<23 // rebias the exponent in place
		m += 0xfff + (m>>13)&1  // round the 13 dropped bits to nearest even
		return sign | uint16(m>>13)
	}
	// Subnormal (or zero) half: the result is round(|f| / 2⁻²⁴).
	e := abs >> 23
	if e < 102 { // |f| < 2⁻²⁵: below half the smallest subnormal
		return sign
	}
	mant := abs&0x7fffff | 0x800000
	shift := 126 - e // in 14..24
	r := mant >> shift
	rem := mant & (1<<shift - 1)
	half := uint32(1) << (shift - 1)
	if rem > half || (rem == half && r&1 == 1) {
		r++ // may carry into the exponent: 0x400 is the smallest normal
	}
	return sign | uint16(r)
}

// BF16ToFP32 widens a bfloat16 (the top half of a float32).
func BF16ToFP32(h uint16) float32 {
	return math.Float32frombits(uint32(h) << 16)
}

// FP32ToBF16 rounds to the nearest bfloat16, ties to even, keeping
// subnormals. A NaN keeps its top bits and is forced quiet. Bit-identical
// to ggml's GGML_FP32_TO_BF16.
func FP32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// FP16ToFP32Slice converts src into dst, which must have the same length.
func FP16ToFP32Slice(src []uint16, dst []float32) error {
	return convertSlice("FP16ToFP32Slice", src, dst, func(h uint16) float32 { return fp16Table[h] })
}

// FP32ToFP16Slice converts src into dst, which must have the same length.
func FP32ToFP16Slice(src []float32, dst []uint16) error {
	return convertSlice("FP32ToFP16Slice", src, dst, FP32ToFP16)
}

// BF16ToFP32Slice converts src into dst, which must have the same length.
func BF16ToFP32Slice(src []uint16, dst []float32) error {
	return convertSlice("BF16ToFP32Slice", src, dst, BF16ToFP32)
}

// FP32ToBF16Slice converts src into dst, which must have the same length.
func FP32ToBF16Slice(src []float32, dst []uint16) error {
	return convertSlice("FP32ToBF16Slice", src, dst, FP32ToBF16)
}

// convertSlice is the Slice functions' loop: dst[i] = conv(src[i]), or
// ErrSize (naming the function) when the lengths differ.
func convertSlice[S, D any](name string, src []S, dst []D, conv func(S) D) error {
	if len(src) != len(dst) {
		return fmt.Errorf("quant: %s: %d values into %d: %w", name, len(src), len(dst), ErrSize)
	}
	for i, v := range src {
		dst[i] = conv(v)
	}
	return nil
}

// fp16Table holds FP16ToFP32 of every half float, as ggml's
// ggml_table_f32_f16 does: a load is cheaper than the branches in hot loops.
var fp16Table = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for h := range t {
		t[h] = FP16ToFP32(uint16(h))
	}
	return &t
}()

// fp16 reads the little-endian half float at b[0:2] as float32.
func fp16(b []byte) float32 {
	return fp16Table[uint16(b[0])|uint16(b[1])<<8]
}

// putFP16 stores f as a little-endian half float at b[0:2].
func putFP16(b []byte, f float32) {
	h := FP32ToFP16(f)
	b[0] = byte(h)
	b[1] = byte(h >> 8)
}
