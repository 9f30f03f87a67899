package quant

import (
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
	benchX16VsFile(b, q6_KX16Layout, r, "q6x16", []struct{ n, nRows int }{{2048, 256}, {2048, 2048}, {4096, 1024}, {4096, 16384}})
}

// BenchmarkRepackQ6_KX16 measures the load-time copy into the interleave
// (bytes: the file's) and back.
func BenchmarkRepackQ6_KX16(b *testing.B) {
	benchX16Repack(b, q6_KX16Layout, rand.New(rand.NewPCG(38, 9)), 4096, 1024)
}
