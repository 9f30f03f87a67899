package quant

import (
	"encoding/binary"
	"math"
)

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
	act   Type // the activation type: Q8_0 or Q8_K
	n     int  // elements per row
	nActs int
	b     []byte    // [group][32-value block][8][16][4] quants
	d     []float32 // Q8_0: [group][block][16] scales
	// Q8_K: per group and super-block, the 16 rows' scales (float32
	// bits), then the sums of each 32 quants as int16 pairs (sub-blocks
	// 2i and 2i+1 in one dword, four dwords per row, rows in lanes)
	aux []uint32 // [group][super-block][80]
}

// auxPerSuper is the uint32s of PackedActs.aux per group and super-block.
const auxPerSuper = packGroup * 5

// PackedScratch is one worker's room for widened weight rows; the zero
// value is ready to use. Not safe for concurrent use.
type PackedScratch struct {
	a   []byte    // [block][16][32] (K-quants: [super][sub][16][32 or 16]) weight quants
	dw  []float32 // Q4_0, Q8_0: [block][16] weight scales
	sc  []int32   // K-quants: [super][sub][16] sub-block scales
	wk  []uint32  // K-quants: [super][96]: d, dmin (float32 bits), mins as int16 pairs [16][4]
	acc [packGroup * packGroup]float32
	cfg [64]byte // tile configuration
	c   [2 * packGroup * packGroup]int32
}

// wkPerSuper is the uint32s of PackedScratch.wk per super-block.
const wkPerSuper = 96

// PackedKernel reports whether VecDotPacked has a tile kernel for weight
// type w on this machine. Callers pack activations only when it does.
func PackedKernel(w Type) bool { return packedKernel(w) }

// Reset prepares p for nActs rows of n elements in activation type act,
// reusing its buffers. It reports false when no tile kernel takes act or
// n is not a whole number of blocks.
func (p *PackedActs) Reset(act Type, nActs, n int) bool {
	bs := act.BlockSize()
	if (act != Q8_0 && act != Q8_K) || nActs <= 0 || n <= 0 || n%bs != 0 {
		p.nActs = 0
		return false
	}
	nb := n / 32
	groups := (nActs + packGroup - 1) / packGroup
	p.act, p.n, p.nActs = act, n, nActs
	p.b = grow(p.b, groups*nb*512)
	if act == Q8_0 {
		p.d = grow(p.d, groups*nb*packGroup)
	} else {
		p.aux = grow(p.aux, groups*(n/QK_K)*auxPerSuper)
	}
	// Rows past nActs in the last group are never stored, but zeros keep
	// their lanes free of stale NaNs.
	if nActs%packGroup != 0 {
		last := groups - 1
		clear(p.b[last*nb*512:])
		if act == Q8_0 {
			clear(p.d[last*nb*packGroup:])
		} else {
			clear(p.aux[last*(n/QK_K)*auxPerSuper:])
		}
	}
	return true
}

// PackRow lays out activation row i (< the nActs of Reset; len(act) ≥ the
// row size) in p.
func (p *PackedActs) PackRow(i int, act []byte) {
	nb := p.n / 32
	g, j := i/packGroup, i%packGroup
	b := p.b[g*nb*512 : (g+1)*nb*512]
	if p.act == Q8_0 {
		d := p.d[g*nb*packGroup : (g+1)*nb*packGroup]
		act = act[:34*nb]
		for blk := range nb {
			x := act[34*blk : 34*blk+34]
			d[blk*packGroup+j] = fp16(x)
			packQuants(b[blk*512:], j, x[2:34])
		}
		return
	}
	nsb := p.n / QK_K
	aux := p.aux[g*nsb*auxPerSuper : (g+1)*nsb*auxPerSuper]
	act = act[:292*nsb]
	for sb := range nsb {
		dy, qs, bsums := q8K(act[292*sb : 292*sb+292])
		x := aux[sb*auxPerSuper : (sb+1)*auxPerSuper]
		x[j] = math.Float32bits(dy)
		for k := range 4 {
			lo := bsum(bsums, 4*k) + bsum(bsums, 4*k+1)
			hi := bsum(bsums, 4*k+2) + bsum(bsums, 4*k+3)
			x[packGroup*(1+k)+j] = uint32(uint16(int16(lo))) | uint32(uint16(int16(hi)))<<16
		}
		for s := range 8 {
			packQuants(b[(sb*8+s)*512:], j, qs[32*s:32*s+32])
		}
	}
}

// packQuants writes the 32 quants q of activation row j of a group into
// one block's tile layout b: eight rows of 64 bytes, four quants of each
// activation row.
func packQuants(b []byte, j int, q []byte) {
	o := b[4*j : 4*j+7*64+4]
	for k := range 8 {
		binary.LittleEndian.PutUint32(o[64*k:], binary.LittleEndian.Uint32(q[4*k:]))
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

// grow returns b resized to n elements, reusing its array when it is
// large enough (the contents are then stale; callers overwrite them).
func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}
