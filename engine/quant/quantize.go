package quant

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Quantize encodes src into the blocks of type t in dst, byte-identical to
// ggml's reference (scalar, no importance matrix) quantizers — the ones
// llama-quantize uses for these types when it has no imatrix. len(src)
// must be a whole number of blocks and len(dst) exactly t.RowSize(len(src)).
//
// Every block is quantized on its own, so a matrix gives the same bytes
// whether it is quantized whole or row by row.
func Quantize(t Type, src []float32, dst []byte) error {
	if err := checkSizes(t, len(src), len(dst)); err != nil {
		return fmt.Errorf("quant: quantize %v: %w", t, err)
	}
	switch t {
	case F32:
		for i, f := range src {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(f))
		}
	case F16:
		for i, f := range src {
			binary.LittleEndian.PutUint16(dst[2*i:], FP32ToFP16(f))
		}
	case BF16:
		for i, f := range src {
			binary.LittleEndian.PutUint16(dst[2*i:], FP32ToBF16(f))
		}
	case Q4_0:
		quantBlocks(src, dst, 32, 18, quantQ4_0)
	case Q4_1:
		quantBlocks(src, dst, 32, 20, quantQ4_1)
	case Q5_0:
		quantBlocks(src, dst, 32, 22, quantQ5_0)
	case Q5_1:
		quantBlocks(src, dst, 32, 24, quantQ5_1)
	case Q8_0:
		quantBlocks(src, dst, 32, 34, quantQ8_0)
	case Q8_1:
		quantBlocks(src, dst, 32, 36, quantQ8_1)
	case Q8_K:
		quantBlocks(src, dst, QK_K, 292, quantQ8_K)
	case Q2_K:
		quantBlocks(src, dst, QK_K, 84, quantQ2_K)
	case Q3_K:
		quantBlocks(src, dst, QK_K, 110, quantQ3_K)
	case Q4_K:
		quantBlocks(src, dst, QK_K, 144, quantQ4_K)
	case Q5_K:
		quantBlocks(src, dst, QK_K, 176, quantQ5_K)
	case Q6_K:
		quantBlocks(src, dst, QK_K, 210, quantQ6_K)
	case IQ4_NL:
		quantBlocks(src, dst, 32, 18, quantIQ4_NL)
	case IQ4_XS:
		quantBlocks(src, dst, QK_K, 136, quantIQ4_XS)
	default:
		return fmt.Errorf("quant: quantize %v: %w", t, ErrUnsupported)
	}
	return nil
}

func quantBlocks(src []float32, dst []byte, qk, bsize int, f func(x []float32, b []byte)) {
	for i := 0; i < len(src)/qk; i++ {
		f(src[i*qk:(i+1)*qk], dst[i*bsize:(i+1)*bsize])
	}
}

// absMaxSigned returns the element of largest magnitude (the first one on
// ties) and its magnitude, as ggml's "amax < fabsf(v)" scans do.
func absMaxSigned(x []float32) (max, amax float32) {
	for _, v := range x {
		if a := abs32(v); amax < a {
			amax, max = a, v
		}
	}
	return max, amax
}

func abs32(v float32) float32 {
	return math.Float32frombits(math.Float32bits(v) &^ (1 << 31))
}

// cmax is C's MAX(a, b) macro, which (unlike Go's max) lets a NaN in a
// running maximum be replaced by the next value.
func cmax(a, b float32) float32 {
	if a > b {
		return a
	}
	return b
}

// inverse is ggml's "d ? 1.0f/d : 0.0f".
func inverse(d float32) float32 {
	if d != 0 {
		return 1 / d
	}
	return 0
}

// truncInt mirrors C's float-to-integer conversion (toward zero) as x86
// compilers emit it; out-of-range values and NaN give math.MinInt32 there,
// and a defined value here, so nothing panics on garbage input.
func truncInt(f float32) int32 {
	if !(f > -2147483648 && f < 2147483648) {
		return math.MinInt32
	}
	return int32(f)
}

// roundAway is C's roundf: halves away from zero.
func roundAway(f float32) float32 {
	return float32(math.Round(float64(f)))
}

func quantQ4_0(x []float32, b []byte) {
	x = x[:32]
	max, _ := absMaxSigned(x)
	d := max / -8
	id := inverse(d)
	putFP16(b, d)
	qs := b[2:18]
	for j := 0; j < 16; j++ {
		x0 := float32(x[j] * id)
		x1 := float32(x[j+16] * id)
		xi0 := min(15, int8(truncInt(x0+8.5)))
		xi1 := min(15, int8(truncInt(x1+8.5)))
		qs[j] = byte(xi0) | byte(xi1)<<4
	}
}

func quantQ4_1(x []float32, b []byte) {
	x = x[:32]
	lo, hi := float32(math.MaxFloat32), float32(-math.MaxFloat32)
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	d := (hi - lo) / 15
	id := inverse(d)
	putFP16(b, d)
	putFP16(b[2:], lo)
	qs := b[4:20]
	for j := 0; j < 16; j++ {
		x0 := float32((x[j] - lo) * id)
		x1 := float32((x[j+16] - lo) * id)
		xi0 := min(15, int8(truncInt(x0+0.5)))
		xi1 := min(15, int8(truncInt(x1+0.5)))
		qs[j] = byte(xi0) | byte(xi1)<<4
	}
}

func quantQ5_0(x []float32, b []byte) {
	x = x[:32]
	max, _ := absMaxSigned(x)
	d := max / -16
	id := inverse(d)
	putFP16(b, d)
	qs := b[6:22]
	var qh uint32
	for j := 0; j < 16; j++ {
		x0 := float32(x[j] * id)
		x1 := float32(x[j+16] * id)
		xi0 := byte(min(31, int8(truncInt(x0+16.5))))
		xi1 := byte(min(31, int8(truncInt(x1+16.5))))
		qs[j] = xi0&0x0f | (xi1&0x0f)<<4
		qh |= uint32(xi0&0x10) >> 4 << j
		qh |= uint32(xi1&0x10) >> 4 << (j + 16)
	}
	binary.LittleEndian.PutUint32(b[2:], qh)
}

func quantQ5_1(x []float32, b []byte) {
	x = x[:32]
	lo, hi := float32(math.MaxFloat32), float32(-math.MaxFloat32)
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	d := (hi - lo) / 31
	id := inverse(d)
	putFP16(b, d)
	putFP16(b[2:], lo)
	qs := b[8:24]
	var qh uint32
	for j := 0; j < 16; j++ {
		x0 := float32((x[j] - lo) * id)
		x1 := float32((x[j+16] - lo) * id)
		xi0 := byte(truncInt(x0 + 0.5))
		xi1 := byte(truncInt(x1 + 0.5))
		qs[j] = xi0&0x0f | (xi1&0x0f)<<4
		qh |= uint32(xi0&0x10) >> 4 << j
		qh |= uint32(xi1&0x10) >> 4 << (j + 16)
	}
	binary.LittleEndian.PutUint32(b[4:], qh)
}

func quantQ8_0(x []float32, b []byte) {
	x = x[:32]
	var amax float32
	for _, v := range x {
		amax = cmax(amax, abs32(v))
	}
	d := amax / 127
	id := inverse(d)
	putFP16(b, d)
	qs := b[2:34]
	for j, v := range x {
		qs[j] = byte(int8(truncInt(roundAway(v * id))))
	}
}

func quantQ8_1(x []float32, b []byte) {
	x = x[:32]
	var amax float32
	for _, v := range x {
		amax = cmax(amax, abs32(v))
	}
	d := amax / 127
	id := inverse(d)
	putFP16(b, d)
	qs := b[4:36]
	sum := 0
	for j, v := range x {
		q := int8(truncInt(roundAway(v * id)))
		qs[j] = byte(q)
		sum += int(q)
	}
	putFP16(b[2:], float32(sum)*d)
}

// quantQ8_K makes the activation blocks the K-quant dot products use:
// float32 d, 256 int8 and the 16 sums of each 16 for the min terms.
func quantQ8_K(x []float32, b []byte) {
	x = x[:QK_K]
	qs := b[4:260]
	max, amax := absMaxSigned(x)
	if amax == 0 {
		clear(b)
		return
	}
	iscale := -127 / max
	for j, v := range x {
		qs[j] = byte(int8(min(127, nearestInt(iscale*v))))
	}
	for j := 0; j < 16; j++ {
		sum := 0
		for _, q := range qs[16*j : 16*j+16] {
			sum += int(int8(q))
		}
		binary.LittleEndian.PutUint16(b[260+2*j:], uint16(int16(sum)))
	}
	binary.LittleEndian.PutUint32(b, math.Float32bits(1/iscale))
}
