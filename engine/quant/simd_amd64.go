//go:build amd64 && !noasm

package quant

import (
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// CPU features, read once. Tests flip them (setSIMDLevel) to run every
// implementation this machine has against the generic code.
//
// The avx2 level needs AVX2 and FMA; it also uses F16C, which x/sys/cpu
// does not report but every AVX2 processor has. The avx512 level adds
// AVX-512 F, BW, VL and VNNI (Ice Lake, Zen 4 and later); a CPU with
// AVX-512 but no VNNI (Skylake-X) runs the avx2 kernels. CHURON_NOSIMD=1
// in the environment, or the noasm build tag, forces the generic code;
// CHURON_CPU=go|avx2|avx512|amx caps the level (avx512: no AMX tile
// kernels), so that the avx2 kernels can be measured on an AVX-512
// machine and the avx512 ones on a Xeon with AMX.
var (
	hasAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA && os.Getenv("CHURON_NOSIMD") != "1"
	hasAVX512 = hasAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW &&
		cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI

	cpuCap, cpuKnown = cpuSetting([]string{"go", "avx2", "avx512", "amx"})
	useAVX2          = hasAVX2 && cpuCap != "go"
	useAVX512        = hasAVX512 && (cpuCap == "avx512" || cpuCap == "amx")
)

// levels are amd64's kernel levels (see simd_loops.go).
var levels = [...]simdLevel{{"avx2", &hasAVX2, &useAVX2}, {"avx512", &hasAVX512, &useAVX512}}

// rowKernels are the one-row kernels in dot_amd64.s, by weight type: the
// avx2 kernel, and the avx512 one where that level has its own. (Q4_0 and
// Q5_0 at avx512 run through the prepared kernels; see vecDotFast.)
var rowKernels = [...]levelKernels{
	Q4_0:   {base: dotQ4_0GAVX2},
	Q8_0:   {dotQ8_0GAVX2, dotQ8_0AVX512},
	Q5_0:   {base: dotQ5_0GAVX2},
	Q4_1:   {dotQ4_1AVX2, dotQ4_1VNNI},
	Q5_1:   {dotQ5_1AVX2, dotQ5_1VNNI},
	IQ4_NL: {dotIQ4_NLAVX2, dotIQ4_NLVNNI},
	MXFP4:  {dotMXFP4AVX2, dotMXFP4Top},
	Q4_K:   {base: dotQ4_KAVX2},
	Q2_K:   {base: dotQ2_KAVX2},
	Q3_K:   {base: dotQ3_KAVX2},
	Q5_K:   {base: dotQ5_KAVX2},
	Q6_K:   {base: dotQ6_KAVX2},
	IQ4_XS: {base: dotIQ4_XSAVX2},
}

// vecDotFast runs the SIMD kernel for w, if there is one, on checked
// inputs with n > 0.
func vecDotFast(w Type, wRow, act []byte, n int) (float32, bool) {
	if gOrderOn(w) {
		return vecDotGOrder(w, wRow, act, n)
	}
	if quadsFit(w, n/32) {
		return vecDotPrepared(w, wRow, act, n), true
	}
	return vecDotKernel(w, wRow, act, n)
}

// floatStep is the element count the float kernels take per iteration.
func floatStep() int {
	if useAVX512 {
		return 64
	}
	return 32
}

// dotHalfKernel runs the F16 or BF16 kernel on m elements, a multiple of
// floatStep.
func dotHalfKernel(w, x *byte, m int, t Type) float32 {
	switch {
	case t == F16 && useAVX512:
		return dotF16AVX512(w, x, m)
	case t == F16:
		return dotF16AVX2(w, x, m)
	case useAVX512:
		return dotBF16AVX512(w, x, m)
	}
	return dotBF16AVX2(w, x, m)
}

// dotF32Kernel runs the F32 kernel on m elements, a multiple of floatStep.
func dotF32Kernel(w, x *byte, m int) float32 {
	if useAVX512 {
		return dotF32AVX512(w, x, m)
	}
	return dotF32AVX2(w, x, m)
}

// quantFast rounds the leading blocks of src to t, Q8_0 or Q8_K, in dst
// as QuantizeActivations does, stopping before a block it leaves to the
// Go code; it returns the blocks done.
func quantFast(t Type, src []float32, dst []byte) int {
	nb := len(src) / t.BlockSize()
	if nb == 0 || !useAVX2 {
		return 0
	}
	switch {
	case t == Q8_0 && useAVX512:
		return quantQ8_0AVX512(&src[0], nb, &dst[0])
	case t == Q8_0:
		return quantQ8_0AVX2(&src[0], nb, &dst[0])
	case t == Q8_K && useAVX512:
		return quantQ8_KAVX512(&src[0], nb, &dst[0])
	case t == Q8_K:
		return quantQ8_KAVX2(&src[0], nb, &dst[0])
	}
	return 0
}

// simdOn reports whether any kernel level is in use (the shared loops in
// simd_loops.go ask).
func simdOn() bool { return useAVX2 }

// dotX4 runs the four-activation kernel for w, if there is one. (Direct
// calls, not a function value, keep out from escaping.)
func dotX4(w Type, wp, xp *byte, stride, nb int, out *float32) bool {
	switch {
	case (w == Q4_0 || w == Q5_0) && lanes512(w) && quadsFit(w, nb):
		dotX4Quads(w, wp, xp, stride, nb, out)
	case w == Q4_0:
		dotQ4_0x4GAVX2(wp, xp, stride, nb, out)
	case w == Q5_0:
		dotQ5_0x4GAVX2(wp, xp, stride, nb, out)
	case w == Q8_0 && lanes512(w):
		dotQ8_0x4AVX512(wp, xp, stride, nb, out)
	case w == Q8_0:
		dotQ8_0x4GAVX2(wp, xp, stride, nb, out)
	case w == F16 && f16x4Fits(nb):
		dotX4F16(wp, xp, stride, nb, out)
	case w == Q4_K:
		dotQ4_Kx4AVX2(wp, xp, stride, nb, out)
	case w == Q6_K:
		dotQ6_Kx4AVX2(wp, xp, stride, nb, out)
	case w == MXFP4 && useAVX512:
		dotMXFP4x4One(wp, xp, stride, nb, out)
	case w == MXFP4:
		dotMXFP4x4AVX2(wp, xp, stride, nb, out)
	default:
		return false
	}
	return true
}

// dotXn runs the two- or three-activation kernel for w, if there is
// one: Q4_0 and Q8_0 in the generic order, at both levels (with the
// avx512 lane kernels, which round otherwise, none), and Q5_0 at avx2.
func dotXn(w Type, n int, wp, xp *byte, stride, nb int, out *float32) bool {
	if (w != Q4_0 && w != Q8_0 && w != Q5_0) || lanes512(w) {
		return false
	}
	switch {
	case w == Q5_0 && n == 3:
		dotQ5_0x3GAVX2(wp, xp, stride, nb, out)
	case w == Q5_0 && n == 2:
		dotQ5_0x2GAVX2(wp, xp, stride, nb, out)
	case w == Q4_0 && n == 3:
		dotQ4_0x3GAVX2(wp, xp, stride, nb, out)
	case w == Q4_0 && n == 2:
		dotQ4_0x2GAVX2(wp, xp, stride, nb, out)
	case w == Q8_0 && n == 3:
		dotQ8_0x3GAVX2(wp, xp, stride, nb, out)
	case w == Q8_0 && n == 2:
		dotQ8_0x2GAVX2(wp, xp, stride, nb, out)
	default:
		return false
	}
	return true
}

// prepOffset is the offset the 512-bit kernels subtract from w's
// unsigned quants (Q4_0: q−8, Q5_0: q−16, Q8_0: (w+128)−128), or 0 when
// w has no prepared-activation kernels.
func prepOffset(w Type) int {
	switch w {
	case Q4_0:
		return 8
	case Q5_0:
		return 16
	case Q8_0:
		return 128
	}
	return 0
}

// prepLayout says how w's 512-bit kernels want an activation row of nb
// blocks laid out (see dot_amd64.s): in quads of blocks (Q4_0 and
// Q5_0, whose every product at this level runs through them, VecDot's
// included) or in pairs (Q8_0), and the bytes one prepared row takes. ok is false when w has no such kernels, the row
// does not fit prepBuf four times, or a row of one block has no pair.
func prepLayout(w Type, nb int) (quads bool, pstride int, ok bool) {
	switch {
	case !useAVX512:
		return false, 0, false
	case w == Q4_0 || w == Q5_0:
		nq := (nb + 3) / 4
		return true, nq * 256, nq <= maxPreparedPairs*192/256
	case w == Q8_0:
		return false, nb / 2 * 192, nb >= 2 && nb/2 <= maxPreparedPairs
	}
	return false, 0, false
}

// quadsFit reports whether w (Q4_0 or Q5_0) runs through the quad
// kernels for rows of nb blocks.
func quadsFit(w Type, nb int) bool {
	quads, _, ok := prepLayout(w, nb)
	return quads && ok
}

// prepare lays out the activation row at xp for w's prepared kernels.
func prepare(w Type, quads bool, xp *byte, nb int, dst *byte) {
	if quads {
		prepQ8_0Quads(xp, nb, prepOffset(w), dst)
		return
	}
	prepQ8_0Pairs(xp, nb/2, prepOffset(w), dst)
}

// vecDotPrepared is VecDot through the prepared kernels: the one-row
// products must run the same arithmetic as the many-row ones.
func vecDotPrepared(w Type, wRow, act []byte, n int) float32 {
	nb := n / 32
	quads, _, _ := prepLayout(w, nb)
	prep := prepPool.Get().(*prepBuf)
	prepare(w, quads, &act[0], nb, &prep[0])
	var out float32
	dotRows(w, &wRow[0], len(wRow), 1, &prep[0], &act[0], nb, &out)
	prepPool.Put(prep)
	return out
}

// vecDotRowsFast runs a many-rows kernel where there is one, and else
// the one-row kernel row by row, on checked inputs with n > 0. Either way
// it prefetches the rows a little ahead of the one it reads (see PFDIST
// in dot_amd64.s), so callers should pass all their rows in one call.
func vecDotRowsFast(w Type, rows []byte, stride, nRows int, act []byte, n int, out []float32) bool {
	if !useAVX2 {
		return false
	}
	nb := n / 32
	if w == MXFP4 && mxOn(stride) {
		mxTile(1, rows, stride, nRows, act, 0, nb, out, 0)
		return true
	}
	if gOrderOn(w) {
		return vecDotRowsGOrder(w, rows, stride, nRows, act, nb, out)
	}
	if quads, _, ok := prepLayout(w, nb); ok {
		prep := prepPool.Get().(*prepBuf)
		prepare(w, quads, &act[0], nb, &prep[0])
		dotRows(w, &rows[0], stride, nRows, &prep[0], &act[0], nb, &out[0])
		prepPool.Put(prep)
		return true
	}
	if (w == Q4_K || w == Q6_K) && useAVX512 && nRows >= 4 {
		// Four rows at a time, each in its lanes (prefetching each ahead).
		g, nsb := nRows/4, n/QK_K
		if w == Q4_K {
			dotQ4_KRows4AVX512(&rows[0], stride, g, &act[0], nsb, &out[0])
		} else {
			dotQ6_KRows4AVX512(&rows[0], stride, g, &act[0], nsb, &out[0])
		}
		for r := 4 * g; r < nRows; r++ {
			out[r], _ = vecDotFast(w, rows[r*stride:], act, n)
		}
		return true
	}
	if (w == Q4_K || w == Q6_K) && nRows >= 2 {
		// avx2: two rows at a time, one per 128-bit lane.
		g, nsb := nRows/2, n/QK_K
		if w == Q4_K {
			dotQ4_KRows2AVX2(&rows[0], stride, g, &act[0], nsb, &out[0])
		} else {
			dotQ6_KRows2AVX2(&rows[0], stride, g, &act[0], nsb, &out[0])
		}
		if nRows%2 != 0 {
			out[nRows-1], _ = vecDotFast(w, rows[(nRows-1)*stride:], act, n)
		}
		return true
	}
	if rows8AVX2Fits(w, stride) {
		vecDotRows8AVX2(w, rows, stride, nRows, act, nb, out)
		return true
	}
	// Two streams, as the many-row kernels read them (TWOSTREAMS). The
	// Q4_K, Q6_K and F16 kernels prefetch as they go (PFSB2-4).
	wrow, _ := w.RowSize(n)
	h := (nRows + 1) / 2
	selfPrefetch := w == Q4_K || w == Q6_K || w == F16
	for i := range nRows {
		r := i/2 + i%2*h
		row := rows[r*stride : r*stride+wrow]
		if !selfPrefetch {
			prefetchAhead(&row[0], stride)
		}
		f, ok := vecDotFast(w, row, act, n)
		if !ok {
			f = vecDotGeneric(w, row, act, n)
		}
		out[r] = f
	}
	return true
}

// dotRows runs w's many-row prepared kernel (xp: the raw activation row,
// whose last odd block the pair kernels read from there).
func dotRows(w Type, wp *byte, stride, nRows int, prep, xp *byte, nb int, out *float32) {
	switch w {
	case Q4_0:
		dotQ4_0RowsAVX512(wp, stride, nRows, prep, nb, out)
	case Q5_0:
		dotQ5_0RowsAVX512(wp, stride, nRows, prep, nb, out)
	case Q8_0:
		dotQ8_0RowsAVX512(wp, stride, nRows, prep, xp, nb, out)
	}
}

// dotX4Prep runs w's one-row, four-activation prepared kernel.
func dotX4Prep(w Type, wp, prep *byte, pstride int, xp *byte, xstride, nb int, out *float32) {
	switch w {
	case Q4_0:
		dotQ4_0TileAVX512(wp, 0, 1, prep, pstride, nb, out, 1)
	case Q5_0:
		dotQ5_0TileAVX512(wp, 0, 1, prep, pstride, nb, out, 1)
	case Q8_0:
		dotQ8_0x4PrepAVX512(wp, prep, pstride, xp, xstride, nb, out)
	}
}

// dotX4Quads is VecDotMulti's four-activation product for the types
// that run only through quads at the avx512 level: the four rows
// prepared, then the prepared kernel.
func dotX4Quads(w Type, wp, xp *byte, stride, nb int, out *float32) {
	_, pstride, _ := prepLayout(w, nb)
	prep := prepPool.Get().(*prepBuf)
	for i := range 4 {
		prepQ8_0Quads((*byte)(unsafe.Add(unsafe.Pointer(xp), i*stride)), nb, prepOffset(w), &prep[i*pstride])
	}
	dotX4Prep(w, wp, &prep[0], pstride, xp, stride, nb, out)
	prepPool.Put(prep)
}

// f16x4Fits reports whether F16 rows of n elements run through the
// four-activation kernel: avx512, at least one 64-element step, and four
// widened rows fit prepBuf.
func f16x4Fits(n int) bool {
	return useAVX512 && n >= 64 && 4*4*(n&^63) <= len(prepBuf{})
}

// widen4F16 widens the first m (a multiple of 64) halves of four
// activation rows stride bytes apart into prep, m floats apart.
func widen4F16(xp *byte, stride, m int, prep *prepBuf) *float32 {
	f := (*[len(prepBuf{}) / 4]float32)(unsafe.Pointer(prep))
	for i := range 4 {
		widenF16(&f[i*m], (*byte)(unsafe.Add(unsafe.Pointer(xp), i*stride)), m)
	}
	return &f[0]
}

// dotX4F16 is VecDot(F16) for four activation rows stride bytes apart:
// the kernel on the largest multiple of 64 elements, then the rest added
// as dotHalfFast adds it.
func dotX4F16(wp, xp *byte, stride, n int, out *float32) {
	m := n &^ 63
	prep := prepPool.Get().(*prepBuf)
	dotF16x4AVX512(wp, widen4F16(xp, stride, m, prep), 4*m, m, out)
	prepPool.Put(prep)
	f16Tails(wp, xp, stride, n, m, (*[4]float32)(unsafe.Pointer(out)))
}

// f16Tails adds the products past m to four F16 sums as dotHalfFast does.
func f16Tails(wp, xp *byte, stride, n, m int, out *[4]float32) {
	if m == n {
		return
	}
	w := unsafe.Slice(wp, 2*n)
	for i := range out {
		x := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(xp), i*stride)), 2*n)
		out[i] = float32(float64(out[i]) + float64(dotF16(w[2*m:], x[2*m:], n-m)))
	}
}

// vecDotTileF16 is vecDotTileFast for F16: each group of four activation
// rows widened once and run against every weight row.
func vecDotTileF16(rows []byte, rowStride, nRows int, acts []byte, actStride, nActs, n int, out []float32, outStride int) {
	m := n &^ 63
	prep := prepPool.Get().(*prepBuf)
	var tmp [4]float32
	a := 0
	for ; a+4 <= nActs; a += 4 {
		xp := &acts[a*actStride]
		xf := widen4F16(xp, actStride, m, prep)
		h := (nRows + 1) / 2
		for i := range nRows {
			r := i/2 + i%2*h
			wp := &rows[r*rowStride]
			dotF16x4AVX512(wp, xf, 4*m, m, &tmp[0])
			f16Tails(wp, xp, actStride, n, m, &tmp)
			for i, v := range tmp {
				out[(a+i)*outStride+r] = v
			}
		}
	}
	prepPool.Put(prep)
	wrow, _ := F16.RowSize(n)
	for ; a < nActs; a++ {
		vecDotRowsFast(F16, rows, rowStride, nRows, acts[a*actStride:a*actStride+wrow], n, out[a*outStride:])
	}
}

// vecDotTileFast runs the prepared-activation kernels for a tile, on
// checked inputs with n > 0: activation rows four at a time, each group
// laid out once and run against every weight row.
func vecDotTileFast(w Type, rows []byte, rowStride, nRows int, acts []byte, actStride, nActs, n int, out []float32, outStride int) bool {
	if w == MXFP4 && mxOn(rowStride) {
		vecDotTileMX(rows, rowStride, nRows, acts, actStride, nActs, n, out, outStride)
		return true
	}
	if kTileFits(w, nActs, rowStride) {
		vecDotTileK(w, rows, rowStride, nRows, acts, actStride, nActs, n, out, outStride)
		return true
	}
	if qTileAVX2Fits(w, nActs, rowStride) {
		vecDotTileQAVX2(w, rows, rowStride, nRows, acts, actStride, nActs, n/32, out, outStride)
		return true
	}
	if qTileFits(w, nActs, rowStride) {
		vecDotTileQ(w, rows, rowStride, nRows, acts, actStride, nActs, n/32, out, outStride)
		return true
	}
	if w == F16 && f16x4Fits(n) {
		vecDotTileF16(rows, rowStride, nRows, acts, actStride, nActs, n, out, outStride)
		return true
	}
	if gOrderOn(w) {
		vecDotTileGOrder(w, rows, rowStride, nRows, acts, actStride, nActs, n/32, out, outStride)
		return true
	}
	nb := n / 32
	quads, pstride, ok := prepLayout(w, nb)
	if !ok {
		return false
	}
	if w == Q4_0 || w == Q8_0 {
		vecDotTileGroups(w, rows, rowStride, nRows, acts, actStride, nActs, nb, quads, pstride, out, outStride)
		return true
	}
	prep := prepPool.Get().(*prepBuf)
	var tmp [4]float32
	a := 0
	for ; a+4 <= nActs; a += 4 {
		for i := range 4 {
			prepare(w, quads, &acts[(a+i)*actStride], nb, &prep[i*pstride])
		}
		switch w {
		case Q4_0:
			dotQ4_0TileAVX512(&rows[0], rowStride, nRows, &prep[0], pstride, nb, &out[a*outStride], outStride)
			continue
		case Q5_0:
			dotQ5_0TileAVX512(&rows[0], rowStride, nRows, &prep[0], pstride, nb, &out[a*outStride], outStride)
			continue
		}
		// Rows in two streams, as the many-row kernels read them (see
		// TWOSTREAMS in dot_amd64.s): the first group reads them from
		// memory.
		h := (nRows + 1) / 2
		for i := range nRows {
			r := i/2 + i%2*h
			// The one-row kernel does not prefetch; ask for the row a
			// little ahead as the row kernels do (a 4-sequence decode of
			// a Q8_0 output projection read 9 GB/s without).
			prefetchAhead(&rows[r*rowStride], rowStride)
			dotX4Prep(w, &rows[r*rowStride], &prep[0], pstride, &acts[a*actStride], actStride, nb, &tmp[0])
			for i, v := range tmp {
				out[(a+i)*outStride+r] = v
			}
		}
	}
	for ; a < nActs; a++ {
		prepare(w, quads, &acts[a*actStride], nb, &prep[0])
		dotRows(w, &rows[0], rowStride, nRows, &prep[0], &acts[a*actStride], nb, &out[a*outStride])
	}
	prepPool.Put(prep)
	return true
}

// maxPreparedPairs bounds the activation block pairs the prepared kernels
// lay out (rows up to 16384 elements, Llama-3-8B's 14336 included); prepBuf
// holds four rows of them.
const maxPreparedPairs = 256

type prepBuf [4 * maxPreparedPairs * 192]byte

// prepPool recycles prepBufs, so that the kernels neither allocate nor
// zero 192 KiB of stack per call.
var prepPool = sync.Pool{New: func() any { return new(prepBuf) }}

// Kernels in dot_amd64.s. Each takes pointers to whole blocks that the
// caller has bounds-checked, and a block count (element count for the
// float types) > 0.

//go:noescape
func dotQ5_0AVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ4_1AVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ4_1VNNI(w, x *byte, nb int) float32

//go:noescape
func dotQ5_1AVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ5_1VNNI(w, x *byte, nb int) float32

//go:noescape
func dotIQ4_NLAVX2(w, x *byte, nb int) float32

//go:noescape
func dotIQ4_NLVNNI(w, x *byte, nb int) float32

//go:noescape
func dotMXFP4AVX2(w, x *byte, nb int) float32

//go:noescape
func dotMXFP4x4AVX2(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ4_KAVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ2_KAVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ3_KAVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ5_KAVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ6_KAVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ4_Kx4AVX2(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ6_Kx4AVX2(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotIQ4_XSAVX2(w, x *byte, nb int) float32

//go:noescape
func dotF16AVX2(w, x *byte, n int) float32

//go:noescape
func dotF16AVX512(w, x *byte, n int) float32

//go:noescape
func dotBF16AVX2(w, x *byte, n int) float32

//go:noescape
func dotBF16AVX512(w, x *byte, n int) float32

//go:noescape
func dotF32AVX2(w, x *byte, n int) float32

//go:noescape
func dotF32AVX512(w, x *byte, n int) float32

//go:noescape
func prefetchAhead(p *byte, n int)

//go:noescape
func prepQ8_0Pairs(x *byte, npairs, off int, dst *byte)

//go:noescape
func prepQ8_0Quads(x *byte, nb, off int, dst *byte)

//go:noescape
func dotQ4_0RowsAVX512(w *byte, wstride, nrows int, prep *byte, nb int, out *float32)

//go:noescape
func dotQ4_0TileAVX512(w *byte, wstride, nrows int, prep *byte, pstride, nb int, out *float32, ostride int)

//go:noescape
func dotQ5_0RowsAVX512(w *byte, wstride, nrows int, prep *byte, nb int, out *float32)

//go:noescape
func dotQ5_0TileAVX512(w *byte, wstride, nrows int, prep *byte, pstride, nb int, out *float32, ostride int)

//go:noescape
func dotQ8_0AVX512(w, x *byte, nb int) float32

//go:noescape
func dotQ8_0x4AVX512(w, x *byte, stride, nb int, out *float32)

//go:noescape
func dotQ8_0RowsAVX512(w *byte, wstride, nrows int, prep, x *byte, nb int, out *float32)

//go:noescape
func dotQ8_0x4PrepAVX512(w, prep *byte, pstride int, x *byte, xstride, nb int, out *float32)

//go:noescape
func quantQ8_0AVX512(src *float32, nb int, dst *byte) int

//go:noescape
func quantQ8_KAVX512(src *float32, nb int, dst *byte) int

//go:noescape
func quantQ8_0AVX2(src *float32, nb int, dst *byte) int

//go:noescape
func quantQ8_KAVX2(src *float32, nb int, dst *byte) int

//go:noescape
func widenF16(dst *float32, src *byte, n int)

//go:noescape
func dotF16x4AVX512(w *byte, xf *float32, xstride, n int, out *float32)
