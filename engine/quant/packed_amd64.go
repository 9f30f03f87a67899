//go:build amd64 && !noasm

package quant

//go:generate go run ./internal/genpacked

import (
	"math"
	"os"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useAMX: the tile kernels need AMX-TILE and AMX-INT8, the avx512 level
// (their epilogues are 512-bit), and the operating system's leave to use
// tile data (requestAMX). CHURON_NOAMX=1 turns them off alone, as does
// CHURON_CPU below amx.
var useAMX = useAVX512 && cpuCap == "amx" && cpu.X86.HasAMXTile && cpu.X86.HasAMXInt8 &&
	os.Getenv("CHURON_NOAMX") != "1" && requestAMX() == nil

// AMX reports whether the tile kernels are in use on this machine.
func AMX() bool { return useAMX }

func packedKernel(w Type) bool {
	return useAMX && (w == Q4_0 || w == Q5_0 || w == Q8_0 || w == Q4_K || w == Q6_K)
}

// vecDotPacked runs the tile kernel on checked inputs: weight rows
// sixteen at a time (Q4_0 and Q5_0 widened to int8 in s first; Q8_0's
// quants are loaded where they lie), each group against every packed
// group of activation rows.
func vecDotPacked(w Type, rows []byte, rowStride, nRows int, p *PackedActs, out []float32, outStride int, s *PackedScratch) {
	if w == Q4_K || w == Q6_K {
		vecDotPackedK(w, rows, rowStride, nRows, p, out, outStride, s)
		return
	}
	nb := p.n / 32
	s.dw = grow(s.dw, nb*packGroup)
	if w != Q8_0 {
		s.a = grow(s.a, nb*512)
	}
	groups := (p.nActs + packGroup - 1) / packGroup
	for r0 := 0; r0 < nRows; r0 += packGroup {
		nr := min(packGroup, nRows-r0)
		wp := &rows[r0*rowStride]
		var a *byte
		var aStride, aStep int
		switch w {
		case Q4_0:
			amxWidenQ4_0(wp, rowStride, nr, nb, &s.a[0], &s.dw[0])
			a, aStride, aStep = &s.a[0], 32, 512
		case Q5_0:
			amxWidenQ5_0(wp, rowStride, nr, nb, &s.a[0], &s.dw[0])
			a, aStride, aStep = &s.a[0], 32, 512
		default:
			amxScalesQ8_0(wp, rowStride, nr, nb, &s.dw[0])
			a, aStride, aStep = (*byte)(unsafe.Add(unsafe.Pointer(wp), 2)), rowStride, 34
		}
		tileConfig(&s.cfg, nr)
		mask := 1<<nr - 1
		for g := range groups {
			k := &tileArgs{
				cfg: &s.cfg[0], a: a, aStride: aStride, aStep: aStep, dw: &s.dw[0],
				b: &p.b[g*nb*512], dx: &p.d[g*nb*packGroup], nb: nb, c: &s.c[0],
				out: &out[g*packGroup*outStride+r0], outStride: 4 * outStride,
				nTok: min(packGroup, p.nActs-g*packGroup), rowMask: mask,
			}
			if w == Q4_0 {
				amxTileQ4_0(k)
			} else {
				// Q5_0 scales as Q8_0 does: float(i)·(dw·dx)
				amxTileQ8_0(k)
			}
		}
	}
}

// tileArgs are the tile kernels' arguments (one pointer keeps the
// assembly's frame simple).
type tileArgs struct {
	cfg            *byte
	a              *byte // first block of weight row 0
	aStride, aStep int   // bytes between weight rows, and between blocks
	dw             *float32
	b              *byte // packed activation quants of one group
	dx             *float32
	nb             int
	c              *int32 // 16×16 int32 room for one block's sums
	out            *float32
	outStride      int // in bytes
	nTok, rowMask  int
}

// vecDotPackedK is vecDotPacked for Q4_K and Q6_K: the quants widened in
// assembly, the scales (and Q4_K's mins) unpacked here, then each group
// of 16 weight rows against every group of activation rows.
func vecDotPackedK(w Type, rows []byte, rowStride, nRows int, p *PackedActs, out []float32, outStride int, s *PackedScratch) {
	nsb := p.n / QK_K
	sub, kdim := 8, 32
	if w == Q6_K {
		sub, kdim = 16, 16
	}
	s.a = grow(s.a, nsb*4096)
	s.sc = grow(s.sc, nsb*sub*packGroup)
	s.wk = grow(s.wk, nsb*wkPerSuper)
	groups := (p.nActs + packGroup - 1) / packGroup
	for r0 := 0; r0 < nRows; r0 += packGroup {
		nr := min(packGroup, nRows-r0)
		wp := &rows[r0*rowStride]
		if w == Q4_K {
			amxWidenQ4_K(wp, rowStride, nr, nsb, &s.a[0])
		} else {
			amxWidenQ6_K(wp, rowStride, nr, nsb, &s.a[0])
		}
		for m := range nr {
			row := rows[(r0+m)*rowStride:]
			for sb := range nsb {
				if w == Q4_K {
					q4KScales(row[144*sb:144*sb+144], m, s.sc[sb*8*packGroup:], s.wk[sb*wkPerSuper:])
				} else {
					q6KScales(row[210*sb:210*sb+210], m, s.sc[sb*16*packGroup:], s.wk[sb*wkPerSuper:])
				}
			}
		}
		tileConfigK(&s.cfg, nr, kdim)
		for g := range groups {
			k := &kTileArgs{
				cfg: &s.cfg[0], a: &s.a[0], aStride: kdim, sc: &s.sc[0], wk: &s.wk[0],
				b: &p.b[g*nsb*8*512], aux: &p.aux[g*nsb*auxPerSuper], steps: nsb * sub,
				c: &s.c[0], acc: &s.acc[0],
				out: &out[g*packGroup*outStride+r0], outStride: 4 * outStride,
				nTok: min(packGroup, p.nActs-g*packGroup), rowMask: 1<<nr - 1,
			}
			if w == Q4_K {
				amxTileQ4_K(k)
			} else {
				amxTileQ6_K(k)
			}
		}
	}
}

// q4KScales unpacks weight row m's sub-block scales of one Q4_K
// super-block b into sc [8][16], and its d, dmin and mins (as int16
// pairs) into wk.
func q4KScales(b []byte, m int, sc []int32, wk []uint32) {
	wk[m] = math.Float32bits(fp16(b))
	wk[packGroup+m] = math.Float32bits(fp16(b[2:]))
	for k := range 4 {
		s1, m1 := scaleMinK4(2*k, b[4:16])
		s2, m2 := scaleMinK4(2*k+1, b[4:16])
		sc[(2*k)*packGroup+m] = int32(s1)
		sc[(2*k+1)*packGroup+m] = int32(s2)
		wk[2*packGroup+4*m+k] = uint32(m1) | uint32(m2)<<16
	}
}

// q6KScales unpacks weight row m's 16 signed sub-block scales of one
// Q6_K super-block b into sc [16][16], and its d into wk.
func q6KScales(b []byte, m int, sc []int32, wk []uint32) {
	for t := range 16 {
		sc[t*packGroup+m] = int32(int8(b[192+t]))
	}
	wk[m] = math.Float32bits(fp16(b[208:]))
}

// kTileArgs are the K-quant kernels' arguments.
type kTileArgs struct {
	cfg     *byte
	a       *byte // widened quants, [super][sub][16][aStride]
	aStride int
	sc      *int32  // [super][sub][16]
	wk      *uint32 // [super][96]
	b       *byte   // packed activation quants of one group
	aux     *uint32 // the group's PackedActs.aux
	steps   int     // super-blocks × sub-blocks
	c       *int32  // 2×16×16 int32 for two steps' sums
	acc     *float32
	out     *float32
	// in bytes
	outStride     int
	nTok, rowMask int
}

// tileConfigK is tileConfig for sub-blocks of kdim (32 or 16) values.
func tileConfigK(cfg *[64]byte, nr, kdim int) {
	tileConfig(cfg, nr)
	cfg[18], cfg[24] = byte(kdim), byte(kdim)
	cfg[50], cfg[53] = byte(kdim/4), byte(kdim/4)
}

// tileConfig writes the configuration of the kernels' three tiles for
// nr weight rows: tmm0 the sums (nr × 16 int32), tmm1 the weights (nr ×
// 32 int8), tmm2 the activations (8 rows of 16 × 4 int8).
func tileConfig(cfg *[64]byte, nr int) {
	*cfg = [64]byte{}
	cfg[0] = 1 // palette
	cfg[16], cfg[48] = 64, byte(nr)
	cfg[18], cfg[49] = 32, byte(nr)
	cfg[20], cfg[50] = 64, 8
	// tmm3-5: the same for the second buffer of the pipeline
	cfg[22], cfg[51] = 64, byte(nr)
	cfg[24], cfg[52] = 32, byte(nr)
	cfg[26], cfg[53] = 64, 8
}

// Kernels in packed_amd64.s.

//go:noescape
func amxWidenQ4_0(rows *byte, rowStride, nr, nb int, a *byte, dw *float32)

//go:noescape
func amxWidenQ5_0(rows *byte, rowStride, nr, nb int, a *byte, dw *float32)

//go:noescape
func amxScalesQ8_0(rows *byte, rowStride, nr, nb int, dw *float32)

//go:noescape
func amxTileQ4_0(k *tileArgs)

//go:noescape
func amxTileQ8_0(k *tileArgs)

//go:noescape
func amxWidenQ4_K(rows *byte, rowStride, nr, nsb int, a *byte)

//go:noescape
func amxWidenQ6_K(rows *byte, rowStride, nr, nsb int, a *byte)

//go:noescape
func amxTileQ4_K(k *kTileArgs)

//go:noescape
func amxTileQ6_K(k *kTileArgs)
