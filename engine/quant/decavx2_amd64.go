//go:build amd64 && !noasm

package quant

// Q4_0 and Q8_0 decode at the avx2 level in VecDot's lane order
// (decavx2_amd64.s, by internal/gendecavx2): VecDotRows' path only when
// the eight-row kernels in the generic order are off (rows8On, for
// BenchmarkRows8AVX2Stream's "before"; to be deleted with the lane
// kernels once those win on short rows too), four weight rows against the one activation row per pass, each
// row's result bit-identical to the one-row kernel's (dotQ4_0AVX2,
// dotQ8_0AVX2), so a row's value does not depend on how many rows a call
// holds.

// decAVX2Fits reports whether VecDotRows runs w's nRows rows through the
// four-row decode kernels. Q8_0's stays out of VecDotRows for now: it is
// 1.5× the one-row loop on rows in cache but 0.55× on rows streamed from
// memory (BenchmarkVecDotRowsStream, 896 wide: ~8.5 against ~15 GB/s,
// whatever its prefetch distance, 2-8 KiB), where the one-row loop's two
// streams (TWOSTREAMS) keep more reads in flight. Its kernel stays,
// pinned by TestDecAVX2Rows, for the two-stream version to build on.
func decAVX2Fits(w Type, nRows int) bool {
	return useAVX2 && !useAVX512 && w == Q4_0 && nRows >= 4
}

// decAVX2Kernel reports whether w has a four-row decode kernel.
func decAVX2Kernel(w Type) bool { return w == Q4_0 || w == Q8_0 }

// vecDotRowsDecAVX2 is vecDotRowsFast for decAVX2Kernel types on checked inputs
// of nb blocks: the rows four at a time, then the last one to three by
// the one-row kernel.
func vecDotRowsDecAVX2(w Type, rows []byte, stride, nRows int, act []byte, nb int, out []float32) {
	g := nRows / 4
	one := dotQ4_0AVX2
	if w == Q8_0 {
		dotQ8_0Rows4AVX2(&rows[0], stride, g, &act[0], nb, &out[0])
		one = dotQ8_0AVX2
	} else {
		dotQ4_0Rows4AVX2(&rows[0], stride, g, &act[0], nb, &out[0])
	}
	for r := 4 * g; r < nRows; r++ {
		out[r] = one(&rows[r*stride], &act[0], nb)
	}
}

//go:noescape
func dotQ4_0Rows4AVX2(w *byte, stride, ngroups int, x *byte, nb int, out *float32)

//go:noescape
func dotQ8_0Rows4AVX2(w *byte, stride, ngroups int, x *byte, nb int, out *float32)
