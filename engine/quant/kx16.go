package quant

// Q4_K rows interleaved 16 at a time for decode (matrix × one vector).
//
// In the file's layout a row's 144-byte super-block holds its scales and
// mins packed six bits apiece and its quants as 32-byte runs; a kernel
// over several rows must gather and transpose those runs before every
// multiply, which on this class of CPU (512-bit ops double-pumped) left
// the four-row kernel compute-bound at ~10 GB/s. The interleave puts,
// for each group of 16 rows and each super-block, the 16 rows' bytes side
// by side so that one 64-byte load holds four quant bytes of each row
// (dword lane r = row r) and one VPDPBUSD against four activation quants
// broadcast from memory gives all 16 rows' partial sums; the scales and
// mins are unpacked to one byte each once, here, instead of on every
// product. The copy is 2,368 bytes per 16 rows and super-block against
// the file's 2,304 (+2.8 %).
//
// Block of one group and super-block (kx16Block bytes):
//
//	0    d[16]     fp16, the rows' d
//	32   dmin[16]  fp16
//	64   sc[8][16] the sub-block scales, sub-block major
//	192  m[8][16]  the sub-block mins
//	320  qs[32][16][4]: chunk c, row r = the row's qs bytes 4c..4c+3
//
// Rows past the last in a partial group are zero (d = 0: they add 0).

const (
	kx16Rows  = 16
	kx16Block = 320 + 2048
	kx16QS    = 320
)

// KX16Size is the bytes RepackQ4_KX16 writes for nRows rows of n
// elements.
func KX16Size(nRows, n int) int {
	return (nRows + kx16Rows - 1) / kx16Rows * (n / QK_K) * kx16Block
}

// RepackQ4_KX16 lays out nRows Q4_K rows of n elements, stride bytes
// apart, in the 16-row interleave (into dst, KX16Size bytes).
func RepackQ4_KX16(dst, rows []byte, stride, nRows, n int) error {
	if err := x16RepackBuffers(Q4_K, dst, rows, stride, nRows, n, KX16Size(nRows, n)); err != nil {
		return err
	}
	nsb := n / QK_K
	dst = dst[:KX16Size(nRows, n)]
	clear(dst)
	for r := range nRows {
		g, lane := r/kx16Rows, r%kx16Rows
		for s := range nsb {
			src := rows[r*stride+144*s : r*stride+144*s+144]
			blk := dst[(g*nsb+s)*kx16Block:][:kx16Block]
			copy(blk[2*lane:2*lane+2], src[0:2])
			copy(blk[32+2*lane:32+2*lane+2], src[2:4])
			for j := range 8 {
				blk[64+16*j+lane], blk[192+16*j+lane] = scaleMinK4(j, src[4:16])
			}
			for c := range 32 {
				copy(blk[kx16QS+64*c+4*lane:kx16QS+64*c+4*lane+4], src[16+4*c:16+4*c+4])
			}
		}
	}
	return nil
}

// VecDotRowsQ4_KX16 is VecDotRows for nRows Q4_K rows repacked by
// RepackQ4_KX16 (packed: from the start of a group) against one Q8_K
// activation row of n elements: out[r] bit-identical to VecDot of the
// original row r.
func VecDotRowsQ4_KX16(packed []byte, nRows int, act []byte, n int, out []float32) error {
	return x16Product(Q4_K, KX16Size, kx16Fast, kx16Generic, packed, nRows, act, n, out)
}

// kx16Generic is the Go twin of the interleave kernels: dotQ4_K's
// integer sums and float operations, in its order, read from the
// interleave.
func kx16Generic(packed []byte, nRows int, act []byte, nsb int, out []float32) {
	for r := range nRows {
		g, lane := r/kx16Rows, r%kx16Rows
		var sumf float32
		for s := range nsb {
			blk := packed[(g*nsb+s)*kx16Block:][:kx16Block]
			dy, qx, bsums := q8K(act[292*s : 292*s+292])
			isum, summs := 0, 0
			for j := range 4 {
				s1, s2 := 0, 0
				for c := 8 * j; c < 8*j+8; c++ {
					q := blk[kx16QS+64*c+4*lane:][:4]
					for i, b := range q {
						l := 4*(c-8*j) + i
						s1 += int(b&0xf) * int(int8(qx[64*j+l]))
						s2 += int(b>>4) * int(int8(qx[64*j+32+l]))
					}
				}
				isum += int(blk[64+16*(2*j)+lane])*s1 + int(blk[64+16*(2*j+1)+lane])*s2
				summs += minSumK4(bsums, j, int(blk[192+16*(2*j)+lane]), int(blk[192+16*(2*j+1)+lane]))
			}
			sumf += superSumK(fp16(blk[2*lane:])*dy, fp16(blk[32+2*lane:])*dy, isum, summs)
		}
		out[r] = sumf
	}
}
