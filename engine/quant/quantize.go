package quant

import (
	"encoding/binary"
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
	quant, err := quantizer(t, len(src), len(dst))
	if err != nil {
		return err
	}
	quant(src, dst)
	return nil
}

func quantF32(src []float32, dst []byte) {
	for i, f := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(f))
	}
}

func quantF16(src []float32, dst []byte) {
	for i, f := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], FP32ToFP16(f))
	}
}

func quantBF16(src []float32, dst []byte) {
	for i, f := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], FP32ToBF16(f))
	}
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

// absMax is the largest magnitude in x, as ggml's "amax = MAX(amax,
// fabsf(v))" scans find it (a NaN is passed over unless it comes last).
func absMax(x []float32) float32 {
	var amax float32
	for _, v := range x {
		amax = cmax(amax, abs32(v))
	}
	return amax
}

// putSignedScale writes the head of a Q4_0 or Q5_0 block, the step d =
// max/levels as FP16 (max: the element of largest magnitude, its sign
// kept, as ggml has it), and returns 1/d (0 for a block of zeros).
func putSignedScale(x []float32, b []byte, levels float32) (id float32) {
	max, _ := absMaxSigned(x)
	d := max / levels
	putFP16(b, d)
	return inverse(d)
}

// putMinScale writes the head of a Q4_1 or Q5_1 block: the step d that
// spans x's minimum to its maximum in levels steps, and the minimum, as
// FP16. It returns the minimum and 1/d (0 for a constant block).
func putMinScale(x []float32, b []byte, levels float32) (lo, id float32) {
	lo, hi := float32(math.MaxFloat32), float32(-math.MaxFloat32)
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	d := (hi - lo) / levels
	putFP16(b, d)
	putFP16(b[2:], lo)
	return lo, inverse(d)
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
	id := putSignedScale(x, b, -8)
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
	lo, id := putMinScale(x, b, 15)
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
	id := putSignedScale(x, b, -16)
	var q [32]byte
	for j, v := range x {
		q[j] = byte(min(31, int8(truncInt(float32(v*id)+16.5))))
	}
	pack5(&q, b[2:6], b[6:22])
}

func quantQ5_1(x []float32, b []byte) {
	x = x[:32]
	lo, id := putMinScale(x, b, 31)
	var q [32]byte
	for j, v := range x {
		q[j] = byte(truncInt(float32((v-lo)*id) + 0.5))
	}
	pack5(&q, b[4:8], b[8:24])
}

// pack5 stores 32 five-bit quants as Q5_0 and Q5_1 do: the low four bits
// of q[j] and q[j+16] in the low and high nibble of qs[j], the fifth bit
// of q[j] in bit j of the little-endian qh.
func pack5(q *[32]byte, qh, qs []byte) {
	var h uint32
	for j := 0; j < 16; j++ {
		qs[j] = q[j]&0x0f | (q[j+16]&0x0f)<<4
		h |= uint32(q[j]&0x10) >> 4 << j
		h |= uint32(q[j+16]&0x10) >> 4 << (j + 16)
	}
	binary.LittleEndian.PutUint32(qh, h)
}

func quantQ8_0(x []float32, b []byte) {
	x = x[:32]
	d := absMax(x) / 127
	id := inverse(d)
	putFP16(b, d)
	qs := b[2:34]
	for j, v := range x {
		qs[j] = byte(int8(truncInt(roundAway(v * id))))
	}
}

// quantQ8_1 is Q8_0 with d·Σq, the sum of the quants times the (unrounded)
// scale, stored between the scale and the quants.
func quantQ8_1(x []float32, b []byte) {
	var q8 [34]byte
	quantQ8_0(x, q8[:])
	copy(b[:2], q8[:2])
	copy(b[4:36], q8[2:])
	sum := 0
	for _, q := range q8[2:] {
		sum += int(int8(q))
	}
	putFP16(b[2:], float32(sum)*(absMax(x[:32])/127))
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
