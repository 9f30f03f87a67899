package quant

import "encoding/binary"

// Q6_K rows interleaved 16 at a time for decode (matrix × one vector),
// as kx16.go does for Q4_K.
//
// A Q6_K element is six bits: four in a ql nibble and two in a qh byte
// shared by four elements, so a kernel over the file's layout gathers
// each quant from two places with a shift and mask apiece. The interleave
// stores the same 192 quant bytes per row and super-block regrouped: for
// the four elements the file's dotQ6_K takes together (l, l+32, l+64,
// l+96 of a 128-element half, q1…q4) it keeps three bytes,
//
//	X = q1 | (q4>>4)<<6    Y = q2 | (q4>>2 & 3)<<6    Z = q3 | (q4&3)<<6
//
// so that q1, q2, q3 are one AND each and q4·4 is two shifts, two
// selects and an AND (q6x16_amd64.s, avx512) — eight vector operations
// for four products of 16 rows, where the file's bit planes would take
// thirteen. (The avx2 kernels there run the same layout as two halves
// of eight rows, with AVX-VNNI where the CPU has it.) Each
// of X, Y, Z is laid 16 rows wide (dword lane r = row r's four bytes),
// so one 64-byte load feeds one VPDPBUSD for all 16 rows; the scales
// stay int8, sub-block major; d stays fp16. The copy is 3,392 bytes per
// 16 rows and super-block against the file's 3,360 (+0.95 %): 32 bytes
// of padding keep every block, and so every load, on 64-byte lines.
//
// Block of one group and super-block (q6x16Block bytes):
//
//	0     qs[2][8][3][16][4]: half n, chunk k, plane X/Y/Z, row r =
//	      the row's bytes for l = 4k..4k+3 of half n
//	3072  sc[16][16] the sub-block scales (int8), sub-block major
//	3328  d[16]      fp16, the rows' d
//	3360  zero padding
//
// Rows past the last in a partial group are zero (d = 0: they add 0).

const (
	q6x16Rows  = 16
	q6x16Block = 3392
	q6x16SC    = 3072
	q6x16D     = 3328
	q6KBytes   = 210 // one file super-block
)

// Q6KX16Size is the bytes RepackQ6_KX16 writes for nRows rows of n
// elements.
func Q6KX16Size(nRows, n int) int {
	return (nRows + q6x16Rows - 1) / q6x16Rows * (n / QK_K) * q6x16Block
}

// q6ToXYZ and q6FromXYZ turn the file's quant bytes into the
// interleave's and back, four elements l..l+3 of a 128-element half at a
// time (one byte per element in each uint32): ql at l and l+32 (a, b),
// qh at l (h); X, Y, Z as the layout above says.
const (
	lo2 = 0x03030303
	lo4 = 0x0f0f0f0f
	lo6 = 0x3f3f3f3f
)

func q6ToXYZ(a, b, h uint32) (x, y, z uint32) {
	q1 := a&lo4 | (h&lo2)<<4
	q2 := b&lo4 | (h>>2&lo2)<<4
	q3 := a>>4&lo4 | (h>>4&lo2)<<4
	q4 := b>>4&lo4 | (h>>6&lo2)<<4
	return q1 | (q4>>4&lo2)<<6, q2 | (q4>>2&lo2)<<6, q3 | (q4&lo2)<<6
}

func q6FromXYZ(x, y, z uint32) (a, b, h uint32) {
	q1, q2, q3 := x&lo6, y&lo6, z&lo6
	q4 := (x>>6&lo2)<<4 | (y>>6&lo2)<<2 | z>>6&lo2
	a = q1&lo4 | (q3&lo4)<<4
	b = q2&lo4 | (q4&lo4)<<4
	h = q1>>4&lo2 | (q2>>4&lo2)<<2 | (q3>>4&lo2)<<4 | (q4>>4&lo2)<<6
	return a, b, h
}

// q6x16QS is the offset in a block of plane p (0..2: X, Y, Z) of half n,
// chunk k, row lane.
func q6x16QS(n, k, p, lane int) int {
	return 192*(8*n+k) + 64*p + 4*lane
}

// RepackQ6_KX16 lays out nRows Q6_K rows of n elements, stride bytes
// apart, in the 16-row interleave (into dst, Q6KX16Size bytes).
func RepackQ6_KX16(dst, rows []byte, stride, nRows, n int) error {
	if err := x16RepackBuffers(Q6_K, dst, rows, stride, nRows, n, Q6KX16Size(nRows, n)); err != nil {
		return err
	}
	nsb := n / QK_K
	dst = dst[:Q6KX16Size(nRows, n)]
	clear(dst)
	le := binary.LittleEndian
	for r := range nRows {
		g, lane := r/q6x16Rows, r%q6x16Rows
		for s := range nsb {
			src := rows[r*stride+q6KBytes*s:][:q6KBytes]
			ql, qh, sc := src[0:128], src[128:192], src[192:208]
			blk := dst[(g*nsb+s)*q6x16Block:][:q6x16Block]
			for nh := range 2 {
				for k := range 8 {
					l := 4 * k
					x, y, z := q6ToXYZ(le.Uint32(ql[64*nh+l:]), le.Uint32(ql[64*nh+32+l:]), le.Uint32(qh[32*nh+l:]))
					le.PutUint32(blk[q6x16QS(nh, k, 0, lane):], x)
					le.PutUint32(blk[q6x16QS(nh, k, 1, lane):], y)
					le.PutUint32(blk[q6x16QS(nh, k, 2, lane):], z)
				}
			}
			for j := range 16 {
				blk[q6x16SC+16*j+lane] = sc[j]
			}
			copy(blk[q6x16D+2*lane:q6x16D+2*lane+2], src[208:210])
		}
	}
	return nil
}

// UnpackQ6_KX16 writes the nRows Q6_K rows of n elements that packed (from
// RepackQ6_KX16) holds back into the file's layout, one row after another
// in dst: the bytes the rows were repacked from.
func UnpackQ6_KX16(dst, packed []byte, nRows, n int) error {
	if err := x16UnpackBuffers(Q6_K, dst, packed, nRows, n, Q6KX16Size(nRows, n)); err != nil {
		return err
	}
	nsb := n / QK_K
	le := binary.LittleEndian
	for r := range nRows {
		g, lane := r/q6x16Rows, r%q6x16Rows
		for s := range nsb {
			out := dst[(r*nsb+s)*q6KBytes:][:q6KBytes]
			ql, qh := out[0:128], out[128:192]
			blk := packed[(g*nsb+s)*q6x16Block:][:q6x16Block]
			for nh := range 2 {
				for k := range 8 {
					l := 4 * k
					a, b, h := q6FromXYZ(le.Uint32(blk[q6x16QS(nh, k, 0, lane):]),
						le.Uint32(blk[q6x16QS(nh, k, 1, lane):]), le.Uint32(blk[q6x16QS(nh, k, 2, lane):]))
					le.PutUint32(ql[64*nh+l:], a)
					le.PutUint32(ql[64*nh+32+l:], b)
					le.PutUint32(qh[32*nh+l:], h)
				}
			}
			for j := range 16 {
				out[192+j] = blk[q6x16SC+16*j+lane]
			}
			copy(out[208:210], blk[q6x16D+2*lane:])
		}
	}
	return nil
}

// VecDotRowsQ6_KX16 is VecDotRows for nRows Q6_K rows repacked by
// RepackQ6_KX16 (packed: from the start of a group) against one Q8_K
// activation row of n elements: out[r] bit-identical to VecDot of the
// original row r.
func VecDotRowsQ6_KX16(packed []byte, nRows int, act []byte, n int, out []float32) error {
	return x16Product(Q6_K, Q6KX16Size, q6x16Fast, q6x16Generic, packed, nRows, act, n, out)
}

// q6x16Generic is the Go twin of the interleave kernels: dotQ6_K's
// integer sums and float operations, in its order, read from the
// interleave.
func q6x16Generic(packed []byte, nRows int, act []byte, nsb int, out []float32) {
	for r := range nRows {
		g, lane := r/q6x16Rows, r%q6x16Rows
		var sumf float32
		for s := range nsb {
			blk := packed[(g*nsb+s)*q6x16Block:][:q6x16Block]
			dy, qx, _ := q8K(act[292*s : 292*s+292])
			sc := func(j int) int { return int(int8(blk[q6x16SC+16*j+lane])) }
			isum := 0
			for nh := 0; nh < 2; nh++ {
				y := qx[128*nh : 128*nh+128]
				for half := 0; half < 2; half++ {
					var s1, s2, s3, s4 int
					for l := 16 * half; l < 16*half+16; l++ {
						k, i := l/4, l%4
						x := blk[q6x16QS(nh, k, 0, lane)+i]
						yb := blk[q6x16QS(nh, k, 1, lane)+i]
						z := blk[q6x16QS(nh, k, 2, lane)+i]
						q1 := int(x&63) - 32
						q2 := int(yb&63) - 32
						q3 := int(z&63) - 32
						q4 := int(x>>6<<4|yb>>6<<2|z>>6) - 32
						s1 += q1 * int(int8(y[l]))
						s2 += q2 * int(int8(y[l+32]))
						s3 += q3 * int(int8(y[l+64]))
						s4 += q4 * int(int8(y[l+96]))
					}
					isum += sc(8*nh+half)*s1 + sc(8*nh+half+2)*s2 +
						sc(8*nh+half+4)*s3 + sc(8*nh+half+6)*s4
				}
			}
			sumf += float32(fp16(blk[q6x16D+2*lane:]) * dy * float32(isum))
		}
		out[r] = sumf
	}
}
