package quant

import "encoding/binary"

// Packed activations for matrix-tile kernels (Intel AMX on amd64).
//
// A tile instruction multiplies a 16×32 block of weight quants by 32×16
// activation quants in one go, with every block's integer sum exact, but
// it wants the activations in its own order: for each group of 16 rows
// and each 32-value block, eight 64-byte rows holding four consecutive
// quants of each of the 16 activation rows. That order is laid out once
// per matrix product (PackedActs) and shared by every weight row and
// thread, while each worker widens its weight rows into its own
// PackedScratch.
//
// The tile kernels add each block's exact integer sum into a float32
// running sum in block order, with the scale products rounded as the
// generic twins round them, so their results are bit-identical to
// vecDotGeneric. They differ in rounding from the avx512 kernels (which
// keep partial sums in lanes), so a product through a tile and the same
// product through VecDot may differ in the last bits.

// packGroup is the number of activation rows a tile holds.
const packGroup = 16

// PackedActs holds activation rows, each in VecDotType of a weight type,
// in the tile kernels' order. The zero value is ready for Reset. It is
// safe to fill different rows from different goroutines.
type PackedActs struct {
	act   Type // the activation type (Q8_0)
	n     int  // elements per row
	nActs int
	b     []byte    // [group][block][8][16][4] quants
	d     []float32 // [group][block][16] scales
}

// PackedScratch is one worker's room for widened weight rows; the zero
// value is ready to use. Not safe for concurrent use.
type PackedScratch struct {
	a   []byte    // [block][16][32] weight quants
	dw  []float32 // [block][16] weight scales
	cfg [64]byte  // tile configuration
	c   [2 * packGroup * packGroup]int32
}

// PackedKernel reports whether VecDotPacked has a tile kernel for weight
// type w on this machine. Callers pack activations only when it does.
func PackedKernel(w Type) bool { return packedKernel(w) }

// Reset prepares p for nActs rows of n elements in activation type act,
// reusing its buffers. It reports false when no tile kernel takes act or
// n is not a whole number of blocks.
func (p *PackedActs) Reset(act Type, nActs, n int) bool {
	if act != Q8_0 || nActs <= 0 || n <= 0 || n%32 != 0 {
		p.nActs = 0
		return false
	}
	nb := n / 32
	groups := (nActs + packGroup - 1) / packGroup
	p.act, p.n, p.nActs = act, n, nActs
	p.b = growBytes(p.b, groups*nb*512)
	p.d = growFloats(p.d, groups*nb*packGroup)
	// Rows past nActs in the last group are never stored, but zeros keep
	// their lanes free of stale NaNs.
	if rem := nActs % packGroup; rem != 0 {
		last := groups - 1
		clear(p.b[last*nb*512:])
		clear(p.d[last*nb*packGroup:])
	}
	return true
}

// PackRow lays out activation row i (< the nActs of Reset; len(act) ≥ the
// row size) in p.
func (p *PackedActs) PackRow(i int, act []byte) {
	nb := p.n / 32
	g, j := i/packGroup, i%packGroup
	b := p.b[g*nb*512 : (g+1)*nb*512]
	d := p.d[g*nb*packGroup : (g+1)*nb*packGroup]
	act = act[:34*nb]
	for blk := range nb {
		x := act[34*blk : 34*blk+34]
		d[blk*packGroup+j] = fp16(x)
		o := b[blk*512+4*j : blk*512+4*j+7*64+4]
		for k := range 8 {
			binary.LittleEndian.PutUint32(o[64*k:], binary.LittleEndian.Uint32(x[2+4*k:]))
		}
	}
}

// VecDotPacked computes the tile out[a*outStride+r] = VecDot(w,
// rows[r*rowStride:], act_a, n) for r < nRows and every activation row a
// packed in p, like VecDotTile, through w's tile kernel: each result is
// bit-identical to the generic twin's (see above). s must not be shared
// with a concurrent call. On bad input (no tile kernel for w, p not
// packed for VecDotType(w), short buffers) every element of out is set
// to NaN; it never panics. It does not allocate once s has grown to the
// row width.
func VecDotPacked(w Type, rows []byte, rowStride, nRows int, p *PackedActs, out []float32, outStride int, s *PackedScratch) {
	if nRows <= 0 || p.nActs <= 0 {
		return
	}
	wrow, ok := w.RowSize(p.n)
	if !packedKernel(w) || !ok || VecDotType(w) != p.act || rowStride < wrow || outStride < nRows ||
		!spans(len(rows), rowStride, nRows, wrow) || !spans(len(out), outStride, p.nActs, nRows) {
		fillNaN(out)
		return
	}
	vecDotPacked(w, rows, rowStride, nRows, p, out, outStride, s)
}

func growBytes(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

func growFloats(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}
