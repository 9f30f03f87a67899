//go:build amd64 && !noasm

package quant

// The avx512 level's Q4_0 and Q8_0 paths that run the avx2 generic-order
// kernels (gorderavx2_amd64.s; AVX2 code runs on an AVX-512 CPU), so that
// every product there has the generic twins' bits (gOrderOn).

// rowsTwoStreamsGAVX2 runs the avx2 one-row generic-order kernel
// (dotQ4_0GAVX2, dotQ8_0GAVX2) over the rows in two streams, as the
// many-row kernels read them (TWOSTREAMS in dot_amd64.s), asking for
// each row a little ahead (the one-row kernels do not prefetch).
func rowsTwoStreamsGAVX2(w Type, rows []byte, stride, nRows int, act []byte, nb int, out []float32) {
	h := (nRows + 1) / 2
	for i := range nRows {
		r := i/2 + i%2*h
		prefetchAhead(&rows[r*stride], stride)
		out[r] = dotGAVX2(w, &rows[r*stride], &act[0], nb)
	}
}

// vecDotTileGOrder is vecDotTileFast for gOrderOn types below the
// prompt tiles (qTileFits), on checked inputs of nb blocks: VecDotRows'
// kernels once per activation row. Each weight row against the
// activations four at a time through the avx2 multi-activation kernels
// reads the weights once, but ran at 0.5-0.9 times this from memory
// (BenchmarkTile512Pick, "multi", since removed: 3.9 against 5.8 GB/s
// for Q4_0 rows of 896 at 2 activation rows, 7.0 against 6.2 for Q8_0 at
// 4 its one win).
func vecDotTileGOrder(w Type, rows []byte, rowStride, nRows int, acts []byte, actStride, nActs, nb int, out []float32, outStride int) {
	for a := range nActs {
		vecDotRowsGOrder(w, rows, rowStride, nRows, acts[a*actStride:], nb, out[a*outStride:a*outStride+nRows])
	}
}
