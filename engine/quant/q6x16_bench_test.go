package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkVecDotRowsQ6_KX16 measures a decode step's product over Q6_K
// rows in the file's layout (VecDotRows: the four-row kernel) and
// interleaved (VecDotRowsQ6_KX16), A and B alternated in one run: 256
// rows of 2,048 (420 KiB, in L2), 2,048 of 2,048 and 1,024 of 4,096
// (3.3 MiB, in L3) and 16,384 of 4,096 (52.5 MiB, from memory, past a
// 32 MiB L3). Bytes are the file's, for both.
func BenchmarkVecDotRowsQ6_KX16(b *testing.B) {
	r := rand.New(rand.NewPCG(38, 8))
	for _, s := range []struct{ n, nRows int }{{2048, 256}, {2048, 2048}, {4096, 1024}, {4096, 16384}} {
		size, _ := Q6_K.RowSize(s.n)
		rows := rawKRows(r, Q6_K, s.nRows, s.n)
		act := rawQ8KRows(r, 1, s.n)
		packed := make([]byte, Q6KX16Size(s.nRows, s.n))
		if err := RepackQ6_KX16(packed, rows, size, s.nRows, s.n); err != nil {
			b.Fatal(err)
		}
		out := make([]float32, s.nRows)
		for round := range 2 {
			b.Run(fmt.Sprintf("n=%d/rows=%d/file/%d", s.n, s.nRows, round), func(b *testing.B) {
				b.SetBytes(int64(len(rows)))
				for b.Loop() {
					VecDotRows(Q6_K, rows, size, s.nRows, act, s.n, out)
				}
			})
			b.Run(fmt.Sprintf("n=%d/rows=%d/q6x16/%d", s.n, s.nRows, round), func(b *testing.B) {
				b.SetBytes(int64(len(rows)))
				for b.Loop() {
					if err := VecDotRowsQ6_KX16(packed, s.nRows, act, s.n, out); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkRepackQ6_KX16 measures the load-time copy into the interleave
// (bytes: the file's) and back.
func BenchmarkRepackQ6_KX16(b *testing.B) {
	r := rand.New(rand.NewPCG(38, 9))
	const n, nRows = 4096, 1024
	size, _ := Q6_K.RowSize(n)
	rows := rawKRows(r, Q6_K, nRows, n)
	packed := make([]byte, Q6KX16Size(nRows, n))
	b.Run("repack", func(b *testing.B) {
		b.SetBytes(int64(len(rows)))
		for b.Loop() {
			if err := RepackQ6_KX16(packed, rows, size, nRows, n); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unpack", func(b *testing.B) {
		b.SetBytes(int64(len(rows)))
		for b.Loop() {
			if err := UnpackQ6_KX16(rows, packed, nRows, n); err != nil {
				b.Fatal(err)
			}
		}
	})
}
