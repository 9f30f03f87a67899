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

// TestUnpackQ4_KX16Errors checks the refusals: widths that are not whole
// super-blocks, too few packed bytes, too little room.
func TestUnpackQ4_KX16Errors(t *testing.T) {
	for _, c := range []struct {
		name        string
		dst, packed int
		nRows, n    int
	}{
		{"width", 4096, KX16Size(1, 256), 1, 128},
		{"packed", 2 * 144, KX16Size(2, 256) - 1, 2, 256},
		{"room", 2*144 - 1, KX16Size(2, 256), 2, 256},
	} {
		if err := UnpackQ4_KX16(make([]byte, c.dst), make([]byte, c.packed), c.nRows, c.n); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// BenchmarkUnpackQ4_KX16 measures the de-interleave a prompt's product
// pays per weight byte (512 KiB of rows, the L2 block a job unpacks).
func BenchmarkUnpackQ4_KX16(b *testing.B) {
	r := rand.New(rand.NewPCG(35, 19))
	const n, nRows = 2048, 448
	size, _ := Q4_K.RowSize(n)
	rows := rawKRows(r, Q4_K, nRows, n)
	packed := make([]byte, KX16Size(nRows, n))
	if err := RepackQ4_KX16(packed, rows, size, nRows, n); err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, len(rows))
	b.Run("unpack", func(b *testing.B) {
		b.SetBytes(int64(len(rows)))
		for b.Loop() {
			if err := UnpackQ4_KX16(dst, packed, nRows, n); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("repack", func(b *testing.B) {
		b.SetBytes(int64(len(rows)))
		for b.Loop() {
			if err := RepackQ4_KX16(packed, rows, size, nRows, n); err != nil {
				b.Fatal(err)
			}
		}
	})
}
