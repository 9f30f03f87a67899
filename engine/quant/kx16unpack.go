package quant

import "encoding/binary"

// UnpackQ4_KX16 writes nRows Q4_K rows of n elements back in the file's
// layout (rows one after the other, Q4_K.RowSize(n) bytes each) into dst,
// from their 16-row interleave packed (RepackQ4_KX16's bytes, from the
// start of a group): byte for byte the rows that were repacked. A device
// that holds only the interleave runs its matrix-matrix kernels, which
// read the file's layout, on rows unpacked a block at a time.
func UnpackQ4_KX16(dst, packed []byte, nRows, n int) error {
	if err := x16UnpackBuffers(Q4_K, dst, packed, nRows, n, KX16Size(nRows, n)); err != nil {
		return err
	}
	nsb := n / QK_K
	wrow := nsb * 144
	for g := 0; g*kx16Rows < nRows; g++ {
		lanes := min(kx16Rows, nRows-g*kx16Rows)
		for s := range nsb {
			blk := packed[(g*nsb+s)*kx16Block:][:kx16Block]
			for lane := range lanes {
				out := dst[(g*kx16Rows+lane)*wrow+144*s:][:144]
				copy(out[0:2], blk[2*lane:2*lane+2])
				copy(out[2:4], blk[32+2*lane:32+2*lane+2])
				for j := range 8 { // j < 4 first: those set the bytes the others add to
					packScaleMinK4(out[4:16], j, blk[64+16*j+lane], blk[192+16*j+lane])
				}
				for c := range 32 {
					binary.LittleEndian.PutUint32(out[16+4*c:], binary.LittleEndian.Uint32(blk[kx16QS+64*c+4*lane:]))
				}
			}
		}
	}
	return nil
}
