package quant

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"runtime"
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
	ds := []uint16{0x7bff, 0xfbff, 0x0400, 0x0001, 0x8003, 0x0000}
	for o := 0; o < len(b); o += q4_0Bytes {
		binary.LittleEndian.PutUint16(b[o:], FP32ToFP16(float32(r.NormFloat64())*0.01))
		if !extreme || r.IntN(3) != 0 {
			continue
		}
		fill := byte(0)
		if r.IntN(2) == 0 {
			fill = 0xff
		}
		for i := 2; i < q4_0Bytes; i++ {
			b[o+i] = fill
		}
		binary.LittleEndian.PutUint16(b[o:], ds[r.IntN(len(ds))])
	}
	return b
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
	forLevels(t, func(t *testing.T, level string) { forQ4X16Variants(t, level, testQ4X16) })
}

func testQ4X16(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 40))
	for _, c := range []struct {
		n, nRows, pad int
		extreme       bool
	}{
		{32, 1, 0, false}, {32, 15, 0, true}, {64, 16, 0, false}, {96, 17, 18, true},
		{896, 33, 0, false}, {896, 100, 5, true}, {4096, 16, 0, false}, {4096, 17, 0, true},
		{5632, 33, 0, false}, {5632 + 32, 100, 0, true}, {224, 1, 0, true}, {160, 100, 0, false},
		{16384 + 32, 17, 0, false}, // past the kernels' stack buffer
	} {
		size := c.n / 32 * q4_0Bytes
		stride := size + c.pad
		raw := rawQ4_0Rows(r, c.nRows, c.n, c.extreme)
		rows := make([]byte, c.nRows*stride)
		for i := range c.nRows {
			copy(rows[i*stride:], raw[i*size:(i+1)*size])
		}
		act := rawQ8_0Row(r, c.n, c.extreme)
		packed := make([]byte, Q4_0X16Size(c.nRows, c.n))
		if err := RepackQ4_0X16(packed, rows, stride, c.nRows, c.n); err != nil {
			t.Fatal(err)
		}
		out := make([]float32, c.nRows+1)
		out[c.nRows] = 42
		if err := VecDotRowsQ4_0X16(packed, c.nRows, act, c.n, out[:c.nRows]); err != nil {
			t.Fatal(err)
		}
		twin := make([]float32, c.nRows)
		q4x16Generic(packed, c.nRows, act, c.n/32, twin)
		for i := range c.nRows {
			row := rows[i*stride : i*stride+size]
			want := vecDotGeneric(Q4_0, row, act, c.n)
			vd := VecDot(Q4_0, row, act, c.n)
			if b := math.Float32bits(want); math.Float32bits(out[i]) != b ||
				math.Float32bits(twin[i]) != b || !sameAsVecDot(vd, want) {
				t.Errorf("n=%d rows=%d: row %d = %g (twin %g, VecDot %g), generic %g",
					c.n, c.nRows, i, out[i], twin[i], vd, want)
			}
		}
		if out[c.nRows] != 42 {
			t.Errorf("n=%d rows=%d: wrote past the results", c.n, c.nRows)
		}
		back := make([]byte, c.nRows*size)
		if err := UnpackQ4_0X16(back, packed, c.nRows, c.n); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back, raw) {
			t.Errorf("n=%d rows=%d: unpacked rows differ from the originals", c.n, c.nRows)
		}
	}
}

// TestQ4_0X16Padding checks that the rows past the last of a partial
// group and the d area's padding (odd block counts) are zero, as the
// layout says.
func TestQ4_0X16Padding(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 41))
	const n, nRows = 96, 5 // three blocks: 32 bytes of d padding
	nb := n / 32
	rows := rawQ4_0Rows(r, nRows, n, false)
	for i := range rows {
		rows[i] |= 1 // no zero bytes, so every byte of a real row is nonzero
	}
	packed := make([]byte, Q4_0X16Size(nRows, n))
	for i := range packed {
		packed[i] = 0xaa // RepackQ4_0X16 must clear what it does not write
	}
	if err := RepackQ4_0X16(packed, rows, nb*q4_0Bytes, nRows, n); err != nil {
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
func TestRepackQ4_0X16Errors(t *testing.T) {
	rows := make([]byte, 2*18)
	for _, c := range []struct {
		name          string
		dst           int
		n, nRows, str int
	}{
		{"width", 4096, 48, 1, 18},
		{"zero width", 4096, 0, 1, 18},
		{"room", Q4_0X16Size(2, 32) - 1, 32, 2, 18},
		{"rows", Q4_0X16Size(3, 32), 32, 3, 18},
		{"stride", Q4_0X16Size(2, 32), 32, 2, 10},
		{"negative rows", 4096, 32, -1, 18},
	} {
		if err := RepackQ4_0X16(make([]byte, c.dst), rows, c.str, c.nRows, c.n); err == nil {
			t.Errorf("repack, %s: no error", c.name)
		}
	}
	packed := make([]byte, Q4_0X16Size(1, 32))
	for _, c := range []struct {
		name              string
		packed, n, act, m int
	}{
		{"width", len(packed), 48, 34, 1},
		{"packed", len(packed) - 1, 32, 34, 1},
		{"activation", len(packed), 32, 33, 1},
		{"results", len(packed), 32, 34, 0},
	} {
		if err := VecDotRowsQ4_0X16(packed[:c.packed], 1, make([]byte, c.act), c.n, make([]float32, c.m)); err == nil {
			t.Errorf("product, %s: no error", c.name)
		}
	}
	for _, c := range []struct {
		name           string
		dst, packed, n int
	}{
		{"width", 18, len(packed), 48},
		{"packed", 18, len(packed) - 1, 32},
		{"room", 17, len(packed), 32},
	} {
		if err := UnpackQ4_0X16(make([]byte, c.dst), packed[:c.packed], 1, c.n); err == nil {
			t.Errorf("unpack, %s: no error", c.name)
		}
	}
}

// sameAsVecDot reports whether VecDot's result vd matches the generic
// product want as the one rounding rule promises: bit for bit on amd64,
// where every Q4_0/Q8_0 path gives the generic order's bits. The NEON
// kernels keep partial sums in lanes, so there VecDot may differ in the
// last bits; the interleave has no kernel there and the device does not
// hold weights in it.
func sameAsVecDot(vd, want float32) bool {
	if runtime.GOARCH == "amd64" {
		return math.Float32bits(vd) == math.Float32bits(want)
	}
	return math.Abs(float64(vd-want)) <= 1e-4*(1+math.Abs(float64(want)))
}
