package quant

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestUnpackQ4_KX16 repacks raw Q4_K rows (every quant, scale and min
// value; padded strides; partial groups) and unpacks them whole and from
// each group on: the file's bytes, byte for byte, and nothing written
// past the rows asked for.
func TestUnpackQ4_KX16(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 18))
	for _, c := range []struct{ n, nRows, pad int }{
		{256, 1, 0}, {256, 16, 0}, {512, 5, 144}, {2304, 17, 0}, {768, 33, 16}, {4096, 48, 0},
	} {
		size, _ := Q4_K.RowSize(c.n)
		stride := size + c.pad
		raw := rawKRows(r, Q4_K, c.nRows, c.n)
		rows := make([]byte, c.nRows*stride)
		for i := range c.nRows {
			copy(rows[i*stride:], raw[i*size:(i+1)*size])
		}
		packed := make([]byte, KX16Size(c.nRows, c.n))
		if err := RepackQ4_KX16(packed, rows, stride, c.nRows, c.n); err != nil {
			t.Fatal(err)
		}
		group := KX16Size(16, c.n)
		for lo := 0; lo < c.nRows; lo += 16 {
			for _, hi := range []int{min(c.nRows, lo+16), c.nRows} {
				name := fmt.Sprintf("n=%d rows=%d: rows %d..%d", c.n, c.nRows, lo, hi)
				got := bytes.Repeat([]byte{0xa5}, (hi-lo)*size+1)
				if err := UnpackQ4_KX16(got, packed[lo/16*group:], hi-lo, c.n); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !bytes.Equal(got[:(hi-lo)*size], raw[lo*size:hi*size]) {
					t.Errorf("%s: not the file's bytes", name)
				}
				if got[(hi-lo)*size] != 0xa5 {
					t.Errorf("%s: wrote past the rows", name)
				}
			}
		}
	}
}

// BenchmarkUnpackQ4_KX16 measures the de-interleave a prompt's product
// pays per weight byte (512 KiB of rows, the L2 block a job unpacks).
func BenchmarkUnpackQ4_KX16(b *testing.B) {
	benchX16Repack(b, q4_KX16Layout, rand.New(rand.NewPCG(35, 19)), 2048, 448)
}
