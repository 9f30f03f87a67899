package quant

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkVecDotRowsQ4_KX16 measures a decode step's product over Q4_K
// rows in the file's layout (VecDotRows: the four-row kernel) and
// interleaved (VecDotRowsQ4_KX16), A and B alternated in one run: 2,048
// rows of 2,048 (4.5 MiB, in cache) and 8,192 of 4,096 (36 MiB, from
// memory).
func BenchmarkVecDotRowsQ4_KX16(b *testing.B) {
	r := rand.New(rand.NewPCG(35, 17))
	benchX16VsFile(b, q4_KX16Layout, r, "kx16", []struct{ n, nRows int }{{2048, 2048}, {4096, 8192}})
}
