//go:build amd64 && !purego

package quant

//go:generate go run ./internal/genpacked

import (
	"os"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useAMX: the tile kernels need AMX-TILE and AMX-INT8, the avx512 level
// (their epilogues are 512-bit), and the operating system's leave to use
// tile data (requestAMX). CHURON_NOAMX=1 turns them off alone.
var useAMX = useAVX512 && cpu.X86.HasAMXTile && cpu.X86.HasAMXInt8 &&
	os.Getenv("CHURON_NOAMX") != "1" && requestAMX() == nil

// AMX reports whether the tile kernels are in use on this machine.
func AMX() bool { return useAMX }

func packedKernel(w Type) bool {
	return useAMX && (w == Q4_0 || w == Q8_0)
}

// vecDotPacked runs the tile kernel on checked inputs: weight rows
// sixteen at a time (Q4_0 widened to int8 in s first; Q8_0's quants are
// loaded where they lie), each group against every packed group of
// activation rows.
func vecDotPacked(w Type, rows []byte, rowStride, nRows int, p *PackedActs, out []float32, outStride int, s *PackedScratch) {
	nb := p.n / 32
	s.dw = growFloats(s.dw, nb*packGroup)
	if w == Q4_0 {
		s.a = growBytes(s.a, nb*512)
	}
	groups := (p.nActs + packGroup - 1) / packGroup
	for r0 := 0; r0 < nRows; r0 += packGroup {
		nr := min(packGroup, nRows-r0)
		wp := &rows[r0*rowStride]
		var a *byte
		var aStride, aStep int
		if w == Q4_0 {
			amxWidenQ4_0(wp, rowStride, nr, nb, &s.a[0], &s.dw[0])
			a, aStride, aStep = &s.a[0], 32, 512
		} else {
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
func amxScalesQ8_0(rows *byte, rowStride, nr, nb int, dw *float32)

//go:noescape
func amxTileQ4_0(k *tileArgs)

//go:noescape
func amxTileQ8_0(k *tileArgs)
