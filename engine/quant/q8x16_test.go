package quant

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// rawQ8_0Rows fills rows of Q8_0 blocks with random quants (−128 and 127
// included), d an ordinary half; extreme sets a third of the blocks'
// quants all −128 or all 127 and their d to fp16's largest finite,
// smallest normal, a subnormal or zero.
func rawQ8_0Rows(r *rand.Rand, rows, n int, extreme bool) []byte {
	b := make([]byte, 0, rows*n/32*q8_0Bytes)
	for range rows {
		b = append(b, rawQ8_0Row(r, n, false)...)
	}
	ds := []uint16{0x7bff, 0xfbff, 0x0400, 0x0001, 0x8003, 0x0000}
	for o := 0; extreme && o < len(b); o += q8_0Bytes {
		if r.IntN(3) != 0 {
			continue
		}
		fill := byte(0x80)
		if r.IntN(2) == 0 {
			fill = 127
		}
		for i := 2; i < q8_0Bytes; i++ {
			b[o+i] = fill
		}
		binary.LittleEndian.PutUint16(b[o:], ds[r.IntN(len(ds))])
	}
	return b
}

// TestVecDotRowsQ8_0X16 is TestVecDotRowsQ4_0X16 for Q8_0: repacked raw
// rows (every quant value, extremes, padded strides, partial groups,
// odd block counts), the product at every level (both avx2 kernels where
// the CPU has AVX-VNNI) and the Go twin bit-identical to VecDot and the
// generic product of the original row; the interleave unpacked back to
// the rows' bytes.
func TestVecDotRowsQ8_0X16(t *testing.T) {
	forLevels(t, func(t *testing.T, level string) { forQ4X16Variants(t, level, testQ8X16) })
}

func testQ8X16(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 50))
	for _, c := range []struct {
		n, nRows, pad int
		extreme       bool
	}{
		{32, 1, 0, false}, {32, 15, 0, true}, {64, 16, 0, false}, {96, 17, 34, true},
		{896, 33, 0, false}, {896, 100, 5, true}, {4096, 16, 0, false}, {4096, 17, 0, true},
		{5632, 33, 0, false}, {5632 + 32, 100, 0, true}, {224, 1, 0, true}, {160, 100, 0, false},
		{16384 + 32, 17, 0, false}, // past the kernels' stack buffer
	} {
		size := c.n / 32 * q8_0Bytes
		stride := size + c.pad
		raw := rawQ8_0Rows(r, c.nRows, c.n, c.extreme)
		rows := make([]byte, c.nRows*stride)
		for i := range c.nRows {
			copy(rows[i*stride:], raw[i*size:(i+1)*size])
		}
		act := rawQ8_0Row(r, c.n, c.extreme)
		packed := make([]byte, Q8_0X16Size(c.nRows, c.n))
		if err := RepackQ8_0X16(packed, rows, stride, c.nRows, c.n); err != nil {
			t.Fatal(err)
		}
		out := make([]float32, c.nRows+1)
		out[c.nRows] = 42
		if err := VecDotRowsQ8_0X16(packed, c.nRows, act, c.n, out[:c.nRows]); err != nil {
			t.Fatal(err)
		}
		twin := make([]float32, c.nRows)
		q8x16Generic(packed, c.nRows, act, c.n/32, twin)
		for i := range c.nRows {
			row := rows[i*stride : i*stride+size]
			want := vecDotGeneric(Q8_0, row, act, c.n)
			vd := VecDot(Q8_0, row, act, c.n)
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
		if err := UnpackQ8_0X16(back, packed, c.nRows, c.n); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back, raw) {
			t.Errorf("n=%d rows=%d: unpacked rows differ from the originals", c.n, c.nRows)
		}
	}
}

// TestQ8_0X16Padding checks that the rows past the last of a partial
// group and the d area's padding (odd block counts) are zero, as the
// layout says.
func TestQ8_0X16Padding(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 51))
	const n, nRows = 96, 5
	nb := n / 32
	rows := rawQ8_0Rows(r, nRows, n, false)
	for i := range rows {
		rows[i] = rows[i]&^0x80 | 1 // neither 0 nor 0x80 (stored as 0)
	}
	packed := make([]byte, Q8_0X16Size(nRows, n))
	for i := range packed {
		packed[i] = 0xaa
	}
	if err := RepackQ8_0X16(packed, rows, nb*q8_0Bytes, nRows, n); err != nil {
		t.Fatal(err)
	}
	da := q4x16DArea(nb)
	for o, b := range packed {
		var lane int
		switch {
		case o < 32*nb:
			lane = o % 32 / 2
		case o < da:
			lane = q4x16Rows
		default:
			lane = (o - da) % 64 / 4
		}
		if (lane >= nRows) != (b == 0) {
			t.Fatalf("byte %d (lane %d) = %#x", o, lane, b)
		}
	}
}

// TestRepackQ8_0X16Errors checks the refusals, as Q4_0's.
func TestRepackQ8_0X16Errors(t *testing.T) {
	rows := make([]byte, 2*34)
	for _, c := range []struct {
		name          string
		dst           int
		n, nRows, str int
	}{
		{"width", 4096, 48, 1, 34},
		{"zero width", 4096, 0, 1, 34},
		{"room", Q8_0X16Size(2, 32) - 1, 32, 2, 34},
		{"rows", Q8_0X16Size(3, 32), 32, 3, 34},
		{"stride", Q8_0X16Size(2, 32), 32, 2, 20},
		{"negative rows", 4096, 32, -1, 34},
	} {
		if err := RepackQ8_0X16(make([]byte, c.dst), rows, c.str, c.nRows, c.n); err == nil {
			t.Errorf("repack, %s: no error", c.name)
		}
	}
	packed := make([]byte, Q8_0X16Size(1, 32))
	for _, c := range []struct {
		name              string
		packed, n, act, m int
	}{
		{"width", len(packed), 48, 34, 1},
		{"packed", len(packed) - 1, 32, 34, 1},
		{"activation", len(packed), 32, 33, 1},
		{"results", len(packed), 32, 34, 0},
	} {
		if err := VecDotRowsQ8_0X16(packed[:c.packed], 1, make([]byte, c.act), c.n, make([]float32, c.m)); err == nil {
			t.Errorf("product, %s: no error", c.name)
		}
	}
	for _, c := range []struct {
		name           string
		dst, packed, n int
	}{
		{"width", 34, len(packed), 48},
		{"packed", 34, len(packed) - 1, 32},
		{"room", 33, len(packed), 32},
	} {
		if err := UnpackQ8_0X16(make([]byte, c.dst), packed[:c.packed], 1, c.n); err == nil {
			t.Errorf("unpack, %s: no error", c.name)
		}
	}
}
