package quant

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// q6x16Extremes overwrites some super-blocks of raw Q6_K rows with
// extreme values: every quant 0 or 63, scales −128 or 127, d at fp16's
// largest finite, smallest normal and a subnormal, so that the kernel's
// int32 sums meet their bounds and the float step its edges.
func q6x16Extremes(r *rand.Rand, raw []byte) {
	ds := []uint16{0x7bff, 0xfbff, 0x0400, 0x0001, 0x8003}
	for o := 0; o < len(raw); o += q6KBytes {
		if r.IntN(3) != 0 {
			continue
		}
		b := raw[o : o+q6KBytes]
		fill := byte(0)
		if r.IntN(2) == 0 {
			fill = 0xff
		}
		for i := range 192 {
			b[i] = fill
		}
		for i := 192; i < 208; i++ {
			b[i] = 0x80 // −128
			if r.IntN(2) == 0 {
				b[i] = 127
			}
		}
		binary.LittleEndian.PutUint16(b[208:], ds[r.IntN(len(ds))])
	}
}

// q6x16Acts is one Q8_K row of n elements: random, or (extreme) every
// quant −128 or 127 by sub-block, bsums as Quantize writes them.
func q6x16Acts(r *rand.Rand, n int, extreme bool) []byte {
	act := rawQ8KRows(r, 1, n)
	if !extreme {
		return act
	}
	for o := 0; o < len(act); o += 292 {
		for j := range 16 {
			v := int8(-128)
			if r.IntN(2) == 0 {
				v = 127
			}
			for i := range 16 {
				act[o+4+16*j+i] = byte(v)
			}
		}
		setQ8KSums(act[o : o+292])
	}
	return act
}

// TestVecDotRowsQ6_KX16 repacks raw Q6_K rows (every quant and scale
// value, extremes, padded strides, partial groups of 16) and runs the
// interleave product at every level and through the Go twin: every
// result bit-identical to VecDot and the generic product of the original
// row; then unpacks the interleave back to the rows' bytes.
func TestVecDotRowsQ6_KX16(t *testing.T) {
	checkX16Product(t, q6_KX16Layout, 38, 6, []x16Case{
		{256, 1, 0, false}, {256, 15, 0, true}, {256, 16, 0, false}, {512, 17, 210, false},
		{512, 33, 0, true}, {4096 + 256, 16, 0, false}, {4096 + 256, 33, 6, true},
		{768, 100, 0, false}, {4096 + 256, 100, 0, true}, {2304, 1, 0, true},
	})
}

// TestQ6_KX16Padding checks that the rows past the last of a partial
// group and each block's padding are zero, as the layout says.
func TestQ6_KX16Padding(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 7))
	const n, nRows = 512, 5
	rows := rawKRows(r, Q6_K, nRows, n)
	for i := range rows {
		rows[i] |= 1 // no zero bytes, so every lane of a real row is nonzero somewhere
	}
	packed := make([]byte, Q6KX16Size(nRows, n))
	for i := range packed {
		packed[i] = 0xaa // RepackQ6_KX16 must clear what it does not write
	}
	size, _ := Q6_K.RowSize(n)
	if err := RepackQ6_KX16(packed, rows, size, nRows, n); err != nil {
		t.Fatal(err)
	}
	for s := range n / QK_K {
		blk := packed[s*q6x16Block:][:q6x16Block]
		for o, b := range blk {
			var lane int
			switch {
			case o < q6x16SC:
				lane = o % 64 / 4
			case o < q6x16D:
				lane = (o - q6x16SC) % 16
			case o < q6x16D+32:
				lane = (o - q6x16D) / 2
			default:
				lane = q6x16Rows // padding
			}
			if lane >= nRows && b != 0 {
				t.Fatalf("super-block %d byte %d (lane %d) = %#x, want 0", s, o, lane, b)
			}
		}
	}
}

// TestRepackQ6_KX16Errors checks the refusals: widths that are not whole
// super-blocks, too little room, too few row bytes, short activations
// and results.
func TestRepackQ6_KX16Errors(t *testing.T) { checkX16Errors(t, q6_KX16Layout) }
