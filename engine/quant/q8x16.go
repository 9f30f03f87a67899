package quant

// Q8_0 rows interleaved 16 at a time for decode, as q4x16.go does for
// Q4_0, and for the same reason: with rows in lanes each lane adds its
// row's blocks in dotQ8_0's order, float32(isum·(d_w·d_x)), without a
// reduction across lanes.
//
// A group of 16 rows is laid out as
//
//	0     d[nb][16]  fp16, block-major, as Q4_0's (zero padded to a
//	      multiple of 64 bytes: 32 bytes when nb is odd)
//	dArea qs[nb][8][16][4]: block b, chunk k, row r = the row's quants
//	      4k..4k+3 of block b, each stored +128 (XOR 0x80) as an
//	      unsigned byte
//
// so that one 64-byte load and one VPDPBUSD (weights unsigned,
// activations signed) add four products of all 16 rows; the +128 comes
// back out as −128·Σq8 of the block, once per product for all rows. The
// copy is the file's bytes (16 × 34 = 32 + 512 per block) plus 32 bytes
// per group when nb is odd; rows past the last in a partial group are
// zero (d = 0: they add 0).

const (
	q8x16Chunk = 512 // qs bytes of one block of a group
	q8_0Bytes  = 34  // one file block
)

// q8x16Group is the bytes of one group of 16 rows of nb blocks.
func q8x16Group(nb int) int { return q4x16DArea(nb) + nb*q8x16Chunk }

// Q8_0X16Size is the bytes RepackQ8_0X16 writes for nRows rows of n
// elements.
func Q8_0X16Size(nRows, n int) int {
	return (nRows + q4x16Rows - 1) / q4x16Rows * q8x16Group(n/q4x16Elems)
}

// q8x16QS is the offset in a group of nb blocks of the quants 4k..4k+3
// of block b of row lane.
func q8x16QS(nb, b, k, lane int) int { return q4x16DArea(nb) + q8x16Chunk*b + 64*k + 4*lane }

// RepackQ8_0X16 lays out nRows Q8_0 rows of n elements, stride bytes
// apart, in the 16-row interleave (into dst, Q8_0X16Size bytes).
func RepackQ8_0X16(dst, rows []byte, stride, nRows, n int) error {
	return x16Repack(Q8_0, dst, rows, stride, nRows, n)
}

// UnpackQ8_0X16 writes the nRows Q8_0 rows of n elements that packed
// (from RepackQ8_0X16) holds back into the file's layout, one row after
// another in dst: the bytes the rows were repacked from.
func UnpackQ8_0X16(dst, packed []byte, nRows, n int) error {
	return x16Unpack[[q8_0Bytes]byte](dst, packed, nRows, n)
}

// VecDotRowsQ8_0X16 is VecDotRows for nRows Q8_0 rows repacked by
// RepackQ8_0X16 (packed: from the start of a group) against one Q8_0
// activation row of n elements: out[r] bit-identical to VecDot of the
// original row r.
func VecDotRowsQ8_0X16(packed []byte, nRows int, act []byte, n int, out []float32) error {
	return x16Product(Q8_0, Q8_0X16Size, q8x16Fast, q8x16Generic, packed, nRows, act, n, out)
}

// q8x16Generic is the Go twin of the Q8_0 interleave kernels: dotQ8_0's
// integer sums and float operations, in its order, read from the
// interleave.
func q8x16Generic(packed []byte, nRows int, act []byte, nb int, out []float32) {
	gsz := q8x16Group(nb)
	for r := range nRows {
		grp := packed[r/q4x16Rows*gsz:][:gsz]
		lane := r % q4x16Rows
		var sumf float32
		for b := range nb {
			bx := act[34*b : 34*b+34]
			sumi := 0
			for j, x := range bx[2:] {
				q := grp[q8x16QS(nb, b, j/4, lane)+j%4] ^ 0x80
				sumi += int(int8(q)) * int(int8(x))
			}
			sumf += float32(float32(sumi) * (fp16(grp[q4x16D(b, lane):]) * fp16(bx)))
		}
		out[r] = sumf
	}
}
