//go:build amd64 && !noasm

package quant

// Q4_0 and Q8_0 decode at the avx2 level in the generic order
// (gorderavx2_amd64.s, by internal/gengorderavx2): VecDotRows' path when
// the avx512 level is not in use, eight weight rows against the one
// activation row per pass, each row's result the generic twin's bits
// (dotQ4_0, dotQ8_0), so that it does not depend on the kernel or on
// how many rows or activations share a call (the rounding rule of
// docs/performance.md, "Q4_0 and Q8_0 prompt tiles and rounding").

// rows8AVX2Fits reports whether VecDotRows runs w's rows through the
// eight-row kernels: Q4_0 and Q8_0 at the avx2 level, at any stride
// (with prefetches into L2 they beat the one-row loop's two streams on
// rows of 896 too; docs/performance.md, "avx2 decode: the eight-row
// kernels prefetch into L2").
func rows8AVX2Fits(w Type, _ int) bool {
	return useAVX2 && !useAVX512 && (w == Q4_0 || w == Q8_0 || w == Q5_0)
}

// vecDotRows8AVX2 is vecDotRowsFast for Q4_0 and Q8_0 on checked inputs
// of nb blocks: the rows eight at a time; a last part group is run again
// as the last eight rows (lanes are independent, so a row computed twice
// gets the same bits), and fewer than eight rows in all go through the
// one-row kernel.
func vecDotRows8AVX2(w Type, rows []byte, stride, nRows int, act []byte, nb int, out []float32) {
	if nRows < 8 {
		for r := range nRows {
			out[r] = dotGAVX2(w, &rows[r*stride], &act[0], nb)
		}
		return
	}
	g, pf := nRows/8, rows8Prefetch(stride)
	rows8AVX2(w, &rows[0], stride, g, &act[0], nb, &out[0], pf)
	if rest := nRows - 8*g; rest > 0 {
		var tmp [8]float32
		rows8AVX2(w, &rows[(nRows-8)*stride], stride, 1, &act[0], nb, &tmp[0], pf)
		copy(out[8*g:nRows], tmp[8-rest:])
	}
}

// dotGAVX2 is w's one-row generic-order kernel (Q4_0, Q8_0 or Q5_0).
func dotGAVX2(w Type, wp, xp *byte, nb int) float32 {
	switch w {
	case Q8_0:
		return dotQ8_0GAVX2(wp, xp, nb)
	case Q5_0:
		return dotQ5_0GAVX2(wp, xp, nb)
	}
	return dotQ4_0GAVX2(wp, xp, nb)
}

// rows8AVX2 calls w's eight-row kernel directly: through a func value
// the compiler cannot see the kernels' go:noescape, and tmp above would
// be allocated on every call (TestDecodeAllocations).
func rows8AVX2(w Type, wp *byte, stride, g int, x *byte, nb int, out *float32, pf int) {
	switch w {
	case Q8_0:
		dotQ8_0Rows8AVX2(wp, stride, g, x, nb, out, pf)
	case Q5_0:
		dotQ5_0Rows8AVX2(wp, stride, g, x, nb, out, pf)
	default:
		dotQ4_0Rows8AVX2(wp, stride, g, x, nb, out, pf)
	}
}

// rows8Prefetch is how far ahead of each row the eight-row kernels
// prefetch: to the next group's same row, one group (8·stride) ahead,
// whatever the row length. From memory (BenchmarkRows8AVX2Stream-like,
// rows of 896, 2048, 4864) 2 KiB along the row lost 0.6-0.95× on long
// rows, and 2-4 groups ahead gained at most noise on short ones.
func rows8Prefetch(stride int) int { return 8 * stride }

//go:noescape
func dotQ4_0Rows8AVX2(w *byte, stride, ngroups int, x *byte, nb int, out *float32, pf int)

//go:noescape
func dotQ8_0Rows8AVX2(w *byte, stride, ngroups int, x *byte, nb int, out *float32, pf int)

// The one-row and multi-activation kernels in the generic order: one
// weight row against one to four activation rows (stride bytes apart),
// each result the generic twin's bits.

//go:noescape
func dotQ4_0GAVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ8_0GAVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ4_0x2GAVX2(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ4_0x3GAVX2(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ4_0x4GAVX2(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ8_0x2GAVX2(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ8_0x3GAVX2(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ8_0x4GAVX2(w, x *byte, stride, nb int, out *float32)
