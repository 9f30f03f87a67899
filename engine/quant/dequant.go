package quant

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Bit-exactness with ggml depends on doing the same float32 operations in
// the same order, each rounded. Go may fuse x*y+z into one FMA on some
// architectures (arm64, ppc64, s390x), even across statements, unless the
// product is explicitly converted; every product that feeds an addition
// here is therefore wrapped in float32(...).

// Dequantize expands the blocks in src into float32 values in dst, exactly
// as ggml's to_float does (bit for bit). len(dst) must be a whole number of
// blocks and len(src) exactly t.RowSize(len(dst)).
func Dequantize(t Type, src []byte, dst []float32) error {
	if err := checkSizes(t, len(dst), len(src)); err != nil {
		return fmt.Errorf("quant: dequantize %v: %w", t, err)
	}
	// A switch, not a table of kernels as Quantize has: with constant
	// block sizes forBlocks inlines here and the small kernels into it,
	// which function values would prevent (Q8_0 ran half again as long).
	switch t {
	case F32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case F16:
		for i := range dst {
			dst[i] = fp16(src[2*i:])
		}
	case BF16:
		for i := range dst {
			dst[i] = BF16ToFP32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case Q4_0:
		forBlocks(src, dst, 18, 32, dequantQ4_0)
	case Q4_1:
		forBlocks(src, dst, 20, 32, dequantQ4_1)
	case Q5_0:
		forBlocks(src, dst, 22, 32, dequantQ5_0)
	case Q5_1:
		forBlocks(src, dst, 24, 32, dequantQ5_1)
	case Q8_0:
		forBlocks(src, dst, 34, 32, dequantQ8_0)
	case Q8_1:
		forBlocks(src, dst, 36, 32, dequantQ8_1)
	case Q2_K:
		forBlocks(src, dst, 84, QK_K, dequantQ2_K)
	case Q3_K:
		forBlocks(src, dst, 110, QK_K, dequantQ3_K)
	case Q4_K:
		forBlocks(src, dst, 144, QK_K, dequantQ4_K)
	case Q5_K:
		forBlocks(src, dst, 176, QK_K, dequantQ5_K)
	case Q6_K:
		forBlocks(src, dst, 210, QK_K, dequantQ6_K)
	case Q8_K:
		forBlocks(src, dst, 292, QK_K, dequantQ8_K)
	case IQ4_NL:
		forBlocks(src, dst, 18, 32, dequantIQ4_NL)
	case IQ4_XS:
		forBlocks(src, dst, 136, QK_K, dequantIQ4_XS)
	case MXFP4:
		forBlocks(src, dst, 17, 32, dequantMXFP4)
	default:
		return fmt.Errorf("quant: dequantize %v: %w", t, ErrUnsupported)
	}
	return nil
}

// checkSizes validates n elements against nbytes of type t.
func checkSizes(t Type, n, nbytes int) error {
	if !t.Known() {
		return ErrUnsupported
	}
	want, ok := t.RowSize(n)
	if !ok {
		return fmt.Errorf("%d elements is not a whole number of %d-element blocks: %w", n, t.BlockSize(), ErrSize)
	}
	if nbytes != want {
		return fmt.Errorf("%d elements take %d bytes, got %d: %w", n, want, nbytes, ErrSize)
	}
	return nil
}

// forBlocks runs one block kernel over every block. The slices passed to
// the kernel have their exact block lengths, so the kernels' constant
// indexes need no further checks.
func forBlocks(src []byte, dst []float32, bsize, qk int, f func(b []byte, y []float32)) {
	for i := 0; i < len(dst)/qk; i++ {
		f(src[i*bsize:(i+1)*bsize], dst[i*qk:(i+1)*qk])
	}
}

// Q4_0: d·(q−8).
func dequantQ4_0(b []byte, y []float32) {
	d := fp16(b)
	qs := b[2:18]
	y = y[:32]
	for j := 0; j < 16; j++ {
		y[j] = float32(int(qs[j]&0x0f)-8) * d
		y[j+16] = float32(int(qs[j]>>4)-8) * d
	}
}

// Q4_1: d·q + m.
func dequantQ4_1(b []byte, y []float32) {
	d, m := fp16(b), fp16(b[2:])
	qs := b[4:20]
	y = y[:32]
	for j := 0; j < 16; j++ {
		y[j] = float32(float32(qs[j]&0x0f)*d) + m
		y[j+16] = float32(float32(qs[j]>>4)*d) + m
	}
}

// Q5_0: d·(q−16), the fifth bit of element j in bit j of qh.
func dequantQ5_0(b []byte, y []float32) {
	d := fp16(b)
	qh := binary.LittleEndian.Uint32(b[2:])
	qs := b[6:22]
	y = y[:32]
	for j := 0; j < 16; j++ {
		h0 := byte(qh>>j<<4) & 0x10
		h1 := byte(qh>>(j+12)) & 0x10
		y[j] = float32(int(qs[j]&0x0f|h0)-16) * d
		y[j+16] = float32(int(qs[j]>>4|h1)-16) * d
	}
}

// Q5_1: d·q + m.
func dequantQ5_1(b []byte, y []float32) {
	d, m := fp16(b), fp16(b[2:])
	qh := binary.LittleEndian.Uint32(b[4:])
	qs := b[8:24]
	y = y[:32]
	for j := 0; j < 16; j++ {
		h0 := byte(qh>>j<<4) & 0x10
		h1 := byte(qh>>(j+12)) & 0x10
		y[j] = float32(float32(qs[j]&0x0f|h0)*d) + m
		y[j+16] = float32(float32(qs[j]>>4|h1)*d) + m
	}
}

// Q8_0: d·q.
func dequantQ8_0(b []byte, y []float32) { dequantInt8(fp16(b), b[2:34], y) }

// Q8_1: d·q (s is only a precomputed sum for dot products).
func dequantQ8_1(b []byte, y []float32) { dequantInt8(fp16(b), b[4:36], y) }

// dequantInt8 writes d·q for the 32 int8 quants qs of a block to y.
func dequantInt8(d float32, qs []byte, y []float32) {
	qs, y = qs[:32], y[:32]
	for j := range y {
		y[j] = float32(int8(qs[j])) * d
	}
}

// Q2_K: (d·sc)·q − (dmin·m) for 16 groups of 16.
func dequantQ2_K(b []byte, y []float32) {
	scales := b[0:16]
	qs := b[16:80]
	d, dmin := fp16(b[80:]), fp16(b[82:])
	y = y[:QK_K]
	is := 0
	for n := 0; n < 2; n++ {
		q := qs[32*n : 32*n+32]
		for shift := uint(0); shift < 8; shift += 2 {
			for half := 0; half < 2; half++ {
				sc := scales[is]
				is++
				dl := d * float32(sc&0xf)
				ml := float32(dmin * float32(sc>>4))
				out := y[:16]
				y = y[16:]
				for l := range out {
					out[l] = float32(dl*float32((q[16*half+l]>>shift)&3)) - ml
				}
			}
		}
	}
}

// q3KScales unpacks Q3_K's twelve bytes of 6-bit scales into 16 values
// still biased by 32: low nibbles from bytes 0–7, two high bits from 8–11.
func q3KScales(s []byte, out *[16]int8) {
	s = s[:12]
	for j := 0; j < 16; j++ {
		var lo byte
		if j < 8 {
			lo = s[j] & 0xf
		} else {
			lo = s[j-8] >> 4
		}
		hi := (s[8+j%4] >> (2 * uint(j/4))) & 3
		out[j] = int8(lo | hi<<4)
	}
}

// Q3_K: (d·(sc−32))·(q − 4·(1−h)) for 16 groups of 16.
func dequantQ3_K(b []byte, y []float32) {
	hmask := b[0:32]
	qs := b[32:96]
	var sc [16]int8
	q3KScales(b[96:108], &sc)
	d := fp16(b[108:])
	y = y[:QK_K]
	is := 0
	m := byte(1)
	for n := 0; n < 2; n++ {
		q := qs[32*n : 32*n+32]
		for shift := uint(0); shift < 8; shift += 2 {
			for half := 0; half < 2; half++ {
				dl := d * float32(int(sc[is])-32)
				is++
				out := y[:16]
				y = y[16:]
				for l := range out {
					v := int((q[16*half+l] >> shift) & 3)
					if hmask[16*half+l]&m == 0 {
						v -= 4
					}
					out[l] = dl * float32(v)
				}
			}
			m <<= 1
		}
	}
}

// scaleMinK4 unpacks the j-th 6-bit scale and min of Q4_K/Q5_K's 12 bytes.
func scaleMinK4(j int, s []byte) (sc, m byte) {
	s = s[:12]
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&0xf | (s[j-4]>>6)<<4, s[j+4]>>4 | (s[j]>>6)<<4
}

// Q4_K: (d·sc)·q − (dmin·m) for 8 groups of 32.
func dequantQ4_K(b []byte, y []float32) { dequantQ45_K(b[:144], 16, y) }

// Q5_K: (d·sc)·(q + 16·h) − (dmin·m) for 8 groups of 32.
func dequantQ5_K(b []byte, y []float32) { dequantQ45_K(b[:176], 48, y) }

// dequantQ45_K is dequantQ4_K and dequantQ5_K: a Q5_K block is a Q4_K
// one with qh[32] before the nibbles, which start at qsOff (16 without
// qh, 48 with). Each pair of sub-blocks has a loop without and one with
// the fifth bits, not a test per quant, so that Q4_K's stays as it was;
// the fifth bit joins the quant before it is scaled (a float product),
// so it cannot be added afterwards as dotQ45_K's integer sums could.
func dequantQ45_K(b []byte, qsOff int, y []float32) {
	d, dmin := fp16(b), fp16(b[2:])
	scales, qh, qs := b[4:16], b[16:qsOff], b[qsOff:]
	y = y[:QK_K]
	for j := 0; j < 4; j++ {
		sc1, m1 := scaleMinK4(2*j, scales)
		sc2, m2 := scaleMinK4(2*j+1, scales)
		d1, dm1 := d*float32(sc1), float32(dmin*float32(m1))
		d2, dm2 := d*float32(sc2), float32(dmin*float32(m2))
		q := qs[32*j : 32*j+32]
		lo, hi := y[64*j:64*j+32], y[64*j+32:64*j+64]
		if len(qh) == 0 {
			for l := 0; l < 32; l++ {
				lo[l] = float32(d1*float32(q[l]&0xf)) - dm1
				hi[l] = float32(d2*float32(q[l]>>4)) - dm2
			}
			continue
		}
		h := qh[:32]
		u1, u2 := byte(1)<<(2*j), byte(2)<<(2*j)
		for l := 0; l < 32; l++ {
			v1, v2 := q[l]&0xf, q[l]>>4
			if h[l]&u1 != 0 {
				v1 += 16
			}
			if h[l]&u2 != 0 {
				v2 += 16
			}
			lo[l] = float32(d1*float32(v1)) - dm1
			hi[l] = float32(d2*float32(v2)) - dm2
		}
	}
}

// q6KHalf is where half n (elements 128n…128n+127) of a Q6_K block b
// keeps its quants and scales: 64 bytes of ql, 32 of qh, 8 scales.
func q6KHalf(b []byte, n int) (l4, h, s []byte) {
	return b[64*n : 64*n+64], b[128+32*n : 128+32*n+32], b[192+8*n : 192+8*n+8]
}

// q6KQuants is elements l, l+32, l+64, l+96 of a Q6_K half (l4: its 64
// bytes of ql, h: its 32 of qh), less 32: dequantQ6_K and dotQ6_K read
// the six-bit quants the same way, and must.
func q6KQuants(l4, h []byte, l int) (q1, q2, q3, q4 int) {
	a, b, hb := l4[l], l4[l+32], h[l]
	return int(a&0xf|(hb&3)<<4) - 32, int(b&0xf|(hb>>2&3)<<4) - 32,
		int(a>>4|(hb>>4&3)<<4) - 32, int(b>>4|(hb>>6&3)<<4) - 32
}

// Q6_K: d·sc·(q−32) for 16 groups of 16.
func dequantQ6_K(b []byte, y []float32) {
	d := fp16(b[208:])
	y = y[:QK_K]
	for n := 0; n < 2; n++ {
		l4, h, s := q6KHalf(b, n)
		out := y[128*n : 128*n+128]
		for l := 0; l < 32; l++ {
			is := l / 16
			q1, q2, q3, q4 := q6KQuants(l4, h, l)
			out[l] = d * float32(int8(s[is])) * float32(q1)
			out[l+32] = d * float32(int8(s[is+2])) * float32(q2)
			out[l+64] = d * float32(int8(s[is+4])) * float32(q3)
			out[l+96] = d * float32(int8(s[is+6])) * float32(q4)
		}
	}
}

// Q8_K: d·q with a float32 d.
func dequantQ8_K(b []byte, y []float32) {
	d := math.Float32frombits(binary.LittleEndian.Uint32(b))
	qs := b[4:260]
	y = y[:QK_K]
	for j := range y {
		y[j] = d * float32(int8(qs[j]))
	}
}

// kvaluesIQ4NL is the non-linear 4-bit codebook shared by IQ4_NL and IQ4_XS.
var kvaluesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// IQ4_NL: d·kvalues[q].
func dequantIQ4_NL(b []byte, y []float32) {
	d := fp16(b)
	qs := b[2:18]
	y = y[:32]
	for j := 0; j < 16; j++ {
		y[j] = d * float32(kvaluesIQ4NL[qs[j]&0xf])
		y[j+16] = d * float32(kvaluesIQ4NL[qs[j]>>4])
	}
}

// iq4XSScale returns IQ4_XS's 6-bit scale of sub-block ib, still biased by 32.
func iq4XSScale(scalesH uint16, scalesL []byte, ib int) int {
	return int(scalesL[ib/2]>>(4*uint(ib%2))&0xf) | int(scalesH>>(2*uint(ib))&3)<<4
}

// IQ4_XS: (d·(ls−32))·kvalues[q] for 8 groups of 32.
func dequantIQ4_XS(b []byte, y []float32) {
	d := fp16(b)
	scalesH := binary.LittleEndian.Uint16(b[2:])
	scalesL := b[4:8]
	qs := b[8:136]
	y = y[:QK_K]
	for ib := 0; ib < 8; ib++ {
		dl := d * float32(iq4XSScale(scalesH, scalesL, ib)-32)
		q := qs[16*ib : 16*ib+16]
		out := y[32*ib : 32*ib+32]
		for j := 0; j < 16; j++ {
			out[j] = dl * float32(kvaluesIQ4NL[q[j]&0xf])
			out[j+16] = dl * float32(kvaluesIQ4NL[q[j]>>4])
		}
	}
}
