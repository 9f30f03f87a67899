package quant

import (
	"encoding/binary"
	"fmt"
)

// Q4_0 rows interleaved 16 at a time for decode (matrix × one vector),
// as kx16.go and q6x16.go do for Q4_K and Q6_K.
//
// In the file's layout a kernel must reduce across lanes after every
// 32-element block to keep dotQ4_0's rounding (each block's sum is
// scaled and added on its own, in block order). With rows in lanes
// (dword lane r = row r) each lane keeps its row's float sum and the
// order falls out: lane r adds float32(float32(isum_r)·d_r·d_x) block by
// block, exactly dotQ4_0's operations, with no reduction at all.
//
// A group of 16 rows is laid out as
//
//	0     d[nb][16]  fp16, block-major: block b's d of rows 0..15
//	      (zero padded to a multiple of 64 bytes: 32 bytes when nb is odd)
//	dArea qs[nb][4][16][4]: block b, chunk k, row r = the row's quant
//	      bytes 4k..4k+3 of block b (low nibbles elements 4k..4k+3, high
//	      nibbles 16+4k..16+4k+3, as in the file)
//
// so that each chunk is one 64-byte load holding four bytes of all 16
// rows: one VPDPBUSD (nibbles unsigned, activations signed) per nibble
// half adds 16 rows' products. The copy is the file's bytes exactly
// (16 rows × 18 bytes = 32 + 256 per block) plus 32 bytes per group
// when nb is odd; rows past the last in a partial group are zero (d =
// 0: they add 0). Every qs load lies on a 64-byte line when the group
// does.

const (
	q4x16Rows  = 16
	q4x16Chunk = 256 // qs bytes of one block of a group
	q4_0Bytes  = 18  // one file block
	q4x16Elems = 32  // elements of one block
)

// q4x16DArea is the bytes of a group's d area for nb blocks.
func q4x16DArea(nb int) int { return (nb + 1) / 2 * 64 }

// q4x16Group is the bytes of one group of 16 rows of nb blocks.
func q4x16Group(nb int) int { return q4x16DArea(nb) + nb*q4x16Chunk }

// Q4_0X16Size is the bytes RepackQ4_0X16 writes for nRows rows of n
// elements.
func Q4_0X16Size(nRows, n int) int {
	return (nRows + q4x16Rows - 1) / q4x16Rows * q4x16Group(n/q4x16Elems)
}

// q4x16QS is the offset in a group of nb blocks of the quant bytes
// 4k..4k+3 of block b of row lane.
func q4x16QS(nb, b, k, lane int) int { return q4x16DArea(nb) + q4x16Chunk*b + 64*k + 4*lane }

// q4x16D is the offset in a group of block b's d of row lane.
func q4x16D(b, lane int) int { return 32*b + 2*lane }

// x16Width checks that rows of n elements of t fill whole blocks of t
// (32 elements for Q4_0 and Q8_0, 256 for Q4_K and Q6_K), as the 16-row
// interleaves need; op names the operation for the error.
func x16Width(t Type, op string, n int) error {
	if qk := t.BlockSize(); n <= 0 || n%qk != 0 {
		return fmt.Errorf("quant: %v %s of rows of %d elements: not a multiple of %d", t, op, n, qk)
	}
	return nil
}

// x16UnpackBuffers checks the width and buffers of a 16-row interleave's
// unpack (any of the four: Q4_0, Q8_0, Q4_K, Q6_K) of nRows rows of n
// elements: packed must hold size bytes, and dst the rows.
func x16UnpackBuffers(t Type, dst, packed []byte, nRows, n, size int) error {
	if err := x16Width(t, "interleave unpack", n); err != nil {
		return err
	}
	rowBytes := n / t.BlockSize() * t.TypeSize()
	if nRows < 0 || len(packed) < size || len(dst) < nRows*rowBytes {
		return fmt.Errorf("quant: %v unpack of %d rows of %d: %d packed bytes, want %d; %d bytes of room, want %d",
			t, nRows, n, len(packed), size, len(dst), max(nRows, 0)*rowBytes)
	}
	return nil
}

// x16RepackBuffers checks the width and buffers of a 16-row interleave's
// repack (any of the four) of nRows rows of n elements, stride bytes
// apart: dst must hold size bytes, and rows the rows.
func x16RepackBuffers(t Type, dst, rows []byte, stride, nRows, n, size int) error {
	if err := x16Width(t, "interleave", n); err != nil {
		return err
	}
	rowBytes := n / t.BlockSize() * t.TypeSize()
	if nRows < 0 || len(dst) < size {
		return fmt.Errorf("quant: %v interleave of %d rows: %d bytes of room, want %d", t, nRows, len(dst), size)
	}
	if nRows > 0 && ((nRows > 1 && stride < rowBytes) || len(rows) < (nRows-1)*stride+rowBytes) {
		return fmt.Errorf("quant: %v interleave of %d rows of stride %d: %d bytes", t, nRows, stride, len(rows))
	}
	return nil
}

// RepackQ4_0X16 lays out nRows Q4_0 rows of n elements, stride bytes
// apart, in the 16-row interleave (into dst, Q4_0X16Size bytes).
func RepackQ4_0X16(dst, rows []byte, stride, nRows, n int) error {
	return x16Repack(Q4_0, dst, rows, stride, nRows, n)
}

// x16Repack is RepackQ4_0X16 and RepackQ8_0X16: one layout, d area then
// each block's quant bytes in chunks of four per row, which differs
// between the two only in the quant bytes a block has (16 or 32) and in
// Q8_0's storing them +128, for the kernels' unsigned operand.
func x16Repack(t Type, dst, rows []byte, stride, nRows, n int) error {
	nb := n / q4x16Elems
	blockBytes, gsz, size, flip := x16Sizes(t, nRows, nb)
	if err := x16RepackBuffers(t, dst, rows, stride, nRows, n, size); err != nil {
		return err
	}
	dst = dst[:size]
	clear(dst)
	chunk, da := q4x16Rows*(blockBytes-2), q4x16DArea(nb) // a block's qs bytes in the group
	for r := range nRows {
		grp := dst[r/q4x16Rows*gsz:][:gsz]
		lane := r % q4x16Rows
		for b := range nb {
			src := rows[r*stride+blockBytes*b:][:blockBytes]
			copy(grp[q4x16D(b, lane):][:2], src[:2])
			x16PutQS(grp[da+chunk*b+4*lane:], src[2:], flip)
		}
	}
	return nil
}

// x16Sizes gives the sizes of Q4_0's or Q8_0's 16-row interleave of
// nRows rows of nb blocks: a file block's bytes, a group's, the whole
// interleave's, and the XOR its quant bytes are stored with.
func x16Sizes(t Type, nRows, nb int) (blockBytes, gsz, size int, flip uint32) {
	if t == Q8_0 {
		return q8_0Bytes, q8x16Group(nb), Q8_0X16Size(nRows, nb*q4x16Elems), 0x80808080
	}
	return q4_0Bytes, q4x16Group(nb), Q4_0X16Size(nRows, nb*q4x16Elems), 0
}

// x16PutQS stores a block's quant bytes qs into its chunks at dst, one
// word per 64 bytes (a row's lane of each chunk), XOR flip. Words, not
// bytes: a byte loop made Q4_0's repack 2.5× as slow as its four copy
// calls were, and the words make Q8_0's 2.5× as fast as its byte loop.
func x16PutQS(dst, qs []byte, flip uint32) {
	for len(qs) >= 4 {
		binary.LittleEndian.PutUint32(dst, binary.LittleEndian.Uint32(qs)^flip)
		qs = qs[4:]
		if len(qs) > 0 {
			dst = dst[64:]
		}
	}
}

// x16GetQS is x16PutQS backwards for four words: 16 quant bytes to qs
// from their chunks at src, one word per 64 bytes, XOR flip.
func x16GetQS(qs, src []byte, flip uint32) {
	le := binary.LittleEndian
	qs, src = qs[:16], src[:3*64+4]
	le.PutUint32(qs[0:], le.Uint32(src[0:])^flip)
	le.PutUint32(qs[4:], le.Uint32(src[64:])^flip)
	le.PutUint32(qs[8:], le.Uint32(src[128:])^flip)
	le.PutUint32(qs[12:], le.Uint32(src[192:])^flip)
}

// UnpackQ4_0X16 writes the nRows Q4_0 rows of n elements that packed
// (from RepackQ4_0X16) holds back into the file's layout, one row after
// another in dst: the bytes the rows were repacked from.
func UnpackQ4_0X16(dst, packed []byte, nRows, n int) error {
	return x16Unpack[[q4_0Bytes]byte](dst, packed, nRows, n)
}

// x16Unpack is UnpackQ4_0X16 and UnpackQ8_0X16, x16Repack backwards.
// The type parameter, a file block of Q4_0 or Q8_0, makes the block's
// size and XOR constants in each instantiation: with the type as an
// argument the unpack ran 1.3-1.5× as long.
func x16Unpack[B [q4_0Bytes]byte | [q8_0Bytes]byte](dst, packed []byte, nRows, n int) error {
	var blk B
	t, blockBytes, flip := Q4_0, len(blk), uint32(0)
	if blockBytes == q8_0Bytes {
		t, flip = Q8_0, 0x80808080
	}
	nb := n / q4x16Elems
	_, gsz, size, _ := x16Sizes(t, nRows, nb)
	if err := x16UnpackBuffers(t, dst, packed, nRows, n, size); err != nil {
		return err
	}
	chunk, da := q4x16Rows*(blockBytes-2), q4x16DArea(nb)
	// Word loads and stores, not copy calls or bytes: a prompt unpacks
	// every segment of the weights once per product, so this runs at the
	// speed of the tile kernels' input (Q4_0: ~6× the copies here; Q8_0 a
	// byte at a time cost more than the product itself).
	for r := range nRows {
		grp := packed[r/q4x16Rows*gsz:][:gsz]
		lane := r % q4x16Rows
		row := dst[r*nb*blockBytes:][:nb*blockBytes]
		for b := range nb {
			out := row[b*blockBytes:][:blockBytes]
			d := grp[q4x16D(b, lane):][:2]
			out[0], out[1] = d[0], d[1]
			qs := grp[da+chunk*b+4*lane:]
			x16GetQS(out[2:], qs, flip)
			if t == Q8_0 {
				x16GetQS(out[18:], qs[4*64:], flip)
			}
		}
	}
	return nil
}

// VecDotRowsQ4_0X16 is VecDotRows for nRows Q4_0 rows repacked by
// RepackQ4_0X16 (packed: from the start of a group) against one Q8_0
// activation row of n elements: out[r] bit-identical to VecDot of the
// original row r.
func VecDotRowsQ4_0X16(packed []byte, nRows int, act []byte, n int, out []float32) error {
	return x16Product(Q4_0, Q4_0X16Size, q4x16Fast, q4x16Generic, packed, nRows, act, n, out)
}

// x16Product checks a 16-row interleave product's buffers (any of the
// four; one activation row in VecDotType(t): Q8_0 for Q4_0 and Q8_0, Q8_K
// for Q4_K and Q6_K) and runs the level's kernel, or the Go twin where
// there is none. The kernel and twin take the row's count of t's blocks.
func x16Product(t Type, size func(nRows, n int) int,
	fast func([]byte, int, []byte, int, []float32) bool, twin func([]byte, int, []byte, int, []float32),
	packed []byte, nRows int, act []byte, n int, out []float32) error {
	if err := x16Width(t, "interleave product", n); err != nil {
		return err
	}
	nb := n / t.BlockSize()
	if nRows < 0 || len(packed) < size(nRows, n) || len(act) < nb*VecDotType(t).TypeSize() || len(out) < nRows {
		return fmt.Errorf("quant: %v interleave product of %d rows of %d: %d packed bytes, %d activation bytes, %d results",
			t, nRows, n, len(packed), len(act), len(out))
	}
	if nRows == 0 {
		return nil
	}
	if !fast(packed, nRows, act, nb, out) {
		twin(packed, nRows, act, nb, out)
	}
	return nil
}

// q4x16Generic is the Go twin of the interleave kernels: dotQ4_0's
// integer sums and float operations, in its order, read from the
// interleave.
func q4x16Generic(packed []byte, nRows int, act []byte, nb int, out []float32) {
	gsz := q4x16Group(nb)
	for r := range nRows {
		grp := packed[r/q4x16Rows*gsz:][:gsz]
		lane := r % q4x16Rows
		var sumf float32
		for b := range nb {
			bx := act[34*b : 34*b+34]
			qx := bx[2:]
			sumi := 0
			for j := range 16 {
				q := grp[q4x16QS(nb, b, j/4, lane)+j%4]
				sumi += (int(q&0xf) - 8) * int(int8(qx[j]))
				sumi += (int(q>>4) - 8) * int(int8(qx[j+16]))
			}
			sumf += float32(float32(sumi) * fp16(grp[q4x16D(b, lane):]) * fp16(bx))
		}
		out[r] = sumf
	}
}
