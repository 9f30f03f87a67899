package quant

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// rawQ4_0Rows fills rows of Q4_0 blocks with random quant bytes (every
// nibble value occurs), d an ordinary half; extreme sets a third of the
// blocks' nibbles all 0 or all 15 and their d to fp16's largest finite,
// smallest normal, a subnormal or zero, so the float step meets its edges.
func rawQ4_0Rows(r *rand.Rand, rows, n int, extreme bool) []byte {
	b := make([]byte, rows*n/32*q4_0Bytes)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	for o := 0; o < len(b); o += q4_0Bytes {
		binary.LittleEndian.PutUint16(b[o:], FP32ToFP16(float32(r.NormFloat64())*0.01))
	}
	if extreme {
		setExtremeBlocks(r, b, q4_0Bytes, 0, 0xff)
	}
	return b
}

// setExtremeBlocks sets about a third of the blocks of b (blockBytes
// each, an fp16 d first) to quants all lo or all hi, and their d to
// fp16's largest finite (either sign), smallest normal, a subnormal or
// zero.
func setExtremeBlocks(r *rand.Rand, b []byte, blockBytes int, lo, hi byte) {
	ds := []uint16{0x7bff, 0xfbff, 0x0400, 0x0001, 0x8003, 0x0000}
	for o := 0; o < len(b); o += blockBytes {
		if r.IntN(3) != 0 {
			continue
		}
		fill := lo
		if r.IntN(2) == 0 {
			fill = hi
		}
		for i := 2; i < blockBytes; i++ {
			b[o+i] = fill
		}
		binary.LittleEndian.PutUint16(b[o:], ds[r.IntN(len(ds))])
	}
}

// rawQ8_0Row is one Q8_0 row of n elements: random quants (−128 and 127
// runs included), or (extreme) each block all −128 or all 127; d an
// ordinary half.
func rawQ8_0Row(r *rand.Rand, n int, extreme bool) []byte {
	b := make([]byte, n/32*34)
	for o := 0; o < len(b); o += 34 {
		binary.LittleEndian.PutUint16(b[o:], FP32ToFP16(float32(r.NormFloat64())*0.02))
		fill := byte(0x80)
		if r.IntN(2) == 0 {
			fill = 127
		}
		for i := o + 2; i < o+34; i++ {
			switch {
			case extreme:
				b[i] = fill
			case r.IntN(8) == 0:
				b[i] = 0x80
			case r.IntN(8) == 0:
				b[i] = 127
			default:
				b[i] = byte(r.Uint32())
			}
		}
	}
	return b
}

// TestVecDotRowsQ4_0X16 repacks raw Q4_0 rows (every quant value,
// extremes, padded strides, partial groups of 16, odd block counts) and
// runs the interleave product at every level (both avx2 kernels where
// the CPU has AVX-VNNI) and through the Go twin: every result
// bit-identical to VecDot and the generic product of the original row;
// then unpacks the interleave back to the rows' bytes.
func TestVecDotRowsQ4_0X16(t *testing.T) {
	checkX16Product(t, q4_0X16Layout, 38, 40, q4x16Cases(Q4_0))
}

// q4x16Cases are the product checks of the Q4_0 and Q8_0 interleaves:
// one row to 100 (partial groups of 16), one block to past the kernels'
// stack buffer, odd block counts, extremes, strides padded by a block of
// typ and by 5 bytes.
func q4x16Cases(typ Type) []x16Case {
	return []x16Case{
		{32, 1, 0, false}, {32, 15, 0, true}, {64, 16, 0, false}, {96, 17, typ.TypeSize(), true},
		{896, 33, 0, false}, {896, 100, 5, true}, {4096, 16, 0, false}, {4096, 17, 0, true},
		{5632, 33, 0, false}, {5632 + 32, 100, 0, true}, {224, 1, 0, true}, {160, 100, 0, false},
		{16384 + 32, 17, 0, false}, // past the kernels' stack buffer
	}
}

// TestQ4_0X16Padding checks that the rows past the last of a partial
// group and the d area's padding (odd block counts) are zero, as the
// layout says.
func TestQ4_0X16Padding(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 41))
	rows := rawQ4_0Rows(r, 5, 96, false)
	for i := range rows {
		rows[i] |= 1 // no zero bytes, so every byte of a real row is nonzero
	}
	checkQ4X16Padding(t, q4_0X16Layout, rows, 96, 5)
}

// checkQ4X16Padding repacks nRows rows of n elements, none with a zero
// byte, into the Q4_0/Q8_0 interleave over a buffer of 0xaa (repack must
// clear what it does not write) and checks that the bytes of the lanes
// past the last row and the d area's padding, and only those, are zero.
func checkQ4X16Padding(t *testing.T, l x16Layout, rows []byte, n, nRows int) {
	t.Helper()
	nb := n / 32
	packed := make([]byte, l.size(nRows, n))
	for i := range packed {
		packed[i] = 0xaa
	}
	if err := l.repack(packed, rows, nb*l.typ.TypeSize(), nRows, n); err != nil {
		t.Fatal(err)
	}
	da := q4x16DArea(nb)
	for o, b := range packed {
		var lane int
		switch {
		case o < 32*nb:
			lane = o % 32 / 2
		case o < da:
			lane = q4x16Rows // padding
		default:
			lane = (o - da) % 64 / 4
		}
		if (lane >= nRows) != (b == 0) {
			t.Fatalf("byte %d (lane %d) = %#x", o, lane, b)
		}
	}
}

// TestRepackQ4_0X16Errors checks the refusals: widths that are not whole
// blocks, too little room, too few row bytes, short activations and
// results.
func TestRepackQ4_0X16Errors(t *testing.T) { checkX16Errors(t, q4_0X16Layout) }
