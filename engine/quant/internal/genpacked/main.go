// Command genpacked writes packed_amd64.s, the AMX tile kernels of
// package quant (see packed.go there): go generate ./engine/quant.
//
// The kernels repeat one step per weight row of a 16-row tile, and the
// transpose at their end is 64 shuffles, so they are written out by this
// program rather than by hand.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/churon/churon/engine/quant/internal/asmdata"
)

func main() {
	var b strings.Builder
	b.WriteString(header)
	widen("Q4_0", "q−8", 18, q40Setup, q40Decode).write(&b)
	b.WriteString(q50Data)
	widen("Q5_0", "q−16 (q: nibble + its qh bit·16)", 22, q50Setup, q50Decode).write(&b)
	scalesQ8_0.write(&b)
	b.WriteString(tilesComment)
	b.WriteString(storeMacros())
	tileKernel(&b, "amxTileQ4_0", scaleThenAct)
	tileKernel(&b, "amxTileQ8_0", scaleProduct)
	widenQ4_K.write(&b)
	b.WriteString(q6KHalf)
	widenQ6_K.write(&b)
	b.WriteString("// The K-quant tile kernels, func(k *kTileArgs): see kTileKernel in\n// internal/genpacked.\n\n")
	kTileKernel(&b, "amxTileQ4_K", 8, true)
	kTileKernel(&b, "amxTileQ6_K", 16, false)
	if err := os.WriteFile("packed_amd64.s", []byte(b.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "genpacked:", err)
		os.Exit(1)
	}
}

// How a block's integer sums i are scaled, as the generic twin does.
const (
	scaleThenAct = iota // (float(i)·dw)·dx: Q4_0
	scaleProduct        // float(i)·(dw·dx): Q8_0
)

// tileOps issues one block's tile work into buffer 0 (tmm0-2, sums at
// 0(DX)) or buffer 1 (tmm3-5, at 1024(DX)) and advances the tile
// pointers.
func tileOps(buf int) string {
	if buf == 0 {
		return "\tTILEZERO_0\n\tTILELOADD_1_SI_BX\n\tTILELOADD_2_DI_AX\n\tTDPBSSD_0_1_2\n\tTILESTORED_DX_AX_0\n\tADDQ R8, SI\n\tADDQ $512, DI\n"
	}
	return "\tTILEZERO_3\n\tTILELOADD_4_SI_BX\n\tTILELOADD_5_DI_AX\n\tTDPBSSD_3_4_5\n\tTILESTORED_DX1024_AX_3\n\tADDQ R8, SI\n\tADDQ $512, DI\n"
}

// epilogue scales buffer buf's sums and adds them to Z0-Z15, then
// advances the scale pointers.
func epilogue(mode, buf int) string {
	var b strings.Builder
	base := 1024 * buf
	b.WriteString("\tVMOVUPS (R10), Z16\n")
	for m := range 16 {
		t := 17 + m%4
		switch mode {
		case scaleThenAct:
			fmt.Fprintf(&b, "\tVCVTDQ2PS   %d(DX), Z%d\n", base+m*64, t)
			fmt.Fprintf(&b, "\tVMULPS.BCST %d(R9), Z%d, Z%d\n", m*4, t, t)
			fmt.Fprintf(&b, "\tVMULPS      Z16, Z%d, Z%d\n", t, t)
		case scaleProduct:
			s := 21 + m%4
			fmt.Fprintf(&b, "\tVMULPS.BCST %d(R9), Z16, Z%d\n", m*4, s)
			fmt.Fprintf(&b, "\tVCVTDQ2PS   %d(DX), Z%d\n", base+m*64, t)
			fmt.Fprintf(&b, "\tVMULPS      Z%d, Z%d, Z%d\n", s, t, t)
		}
		fmt.Fprintf(&b, "\tVADDPS      Z%d, Z%d, Z%d\n", t, m, m)
	}
	b.WriteString("\tADDQ $64, R9\n\tADDQ $64, R10\n")
	return b.String()
}

// tileKernel writes one kernel. It is software-pipelined: block i+1's
// tile work is issued before block i's epilogue, so the tile store has
// landed by the time the epilogue reads it.
func tileKernel(b *strings.Builder, name string, mode int) {
	fmt.Fprintf(b, "// func %[1]s(k *tileArgs)\nTEXT ·%[1]s(SB), NOSPLIT, $0-8\n", name)
	// a, aStride, aStep, dw, b, dx, nb, c
	loadArgs(b, "AX", "SI", "BX", "R8", "R9", "DI", "R10", "CX", "DX")
	b.WriteString("\tMOVQ $64, AX\n")
	for m := range 16 {
		fmt.Fprintf(b, "\tVPXORD Z%d, Z%d, Z%d\n", m, m, m)
	}
	b.WriteString("\n\t// block 0 into buffer 0\n")
	b.WriteString(tileOps(0))
	fmt.Fprintf(b, "\n%sloop:\n\tCMPQ CX, $1\n\tJEQ  %slast0\n", name, name)
	b.WriteString(tileOps(1))
	b.WriteString(epilogue(mode, 0))
	fmt.Fprintf(b, "\tDECQ CX\n\tCMPQ CX, $1\n\tJEQ  %slast1\n", name)
	b.WriteString(tileOps(0))
	b.WriteString(epilogue(mode, 1))
	fmt.Fprintf(b, "\tDECQ CX\n\tJMP  %sloop\n\n%slast0:\n", name, name)
	b.WriteString(epilogue(mode, 0))
	fmt.Fprintf(b, "\tJMP  %sdone\n\n%slast1:\n", name, name)
	b.WriteString(epilogue(mode, 1))
	fmt.Fprintf(b, `
%sdone:
	TILERELEASE
	MOVQ k+0(FP), AX
	MOVQ 72(AX), R11
	MOVQ 80(AX), R12
	MOVQ 88(AX), R13
	MOVQ 96(AX), R8
	TRANSPOSE_STORE
	VZEROUPPER
	RET

`, name)
}

// loadArgs loads a kernel's argument struct (k, into base): its tile
// config (word 0) into the tiles, then words 1, 2, … into regs.
func loadArgs(b *strings.Builder, base string, regs ...string) {
	fmt.Fprintf(b, "\tMOVQ k+0(FP), %[1]s\n\tMOVQ 0(%[1]s), DI\n\tLDTILECFG_DI\n", base)
	for i, r := range regs {
		fmt.Fprintf(b, "\tMOVQ %d(%s), %s\n", 8*(i+1), base, r)
	}
}

// kTileKernel writes a K-quant kernel, func(k *kTileArgs): sub
// sub-blocks per 256-value super-block (Q4_K: 8 of 32 values; Q6_K: 16 of
// 16), each a tile product whose exact sums are multiplied by the
// sub-block's integer scale and added to the super-block's integer sum
// in Z0-Z15 (VPMULLD, VPADDD). After each super-block its float
// epilogue (kFloat) adds the super-block's term to the running sums at
// k.acc, in the generic twin's order. Pipelined as tileKernel.
func kTileKernel(b *strings.Builder, name string, sub int, mins bool) {
	step := 512
	if sub == 16 {
		step = 256
	}
	fmt.Fprintf(b, "// func %[1]s(k *kTileArgs)\nTEXT ·%[1]s(SB), NOSPLIT, $0-8\n", name)
	// a, aStride, sc, wk, b, aux, steps, c, acc
	loadArgs(b, "R11", "SI", "BX", "R9", "R12", "DI", "R13", "CX", "DX", "R8")
	fmt.Fprintf(b, "\tMOVQ $%d, R10\n\tMOVQ $64, AX\n\tVPXORD Z16, Z16, Z16\n", sub/2)
	for m := range 16 {
		fmt.Fprintf(b, "\tVPXORD Z%d, Z%d, Z%d\n\tVMOVUPS Z16, %d(R8)\n", m, m, m, m*64)
	}
	ops := func(buf int) string {
		return strings.Replace(tileOps(buf), "ADDQ R8, SI\n\tADDQ $512, DI", fmt.Sprintf("ADDQ $%d, SI\n\tADDQ $%d, DI", step, step), 1)
	}
	b.WriteString("\n\t// step 0 into buffer 0\n")
	b.WriteString(ops(0))
	// Two steps per pass: the step count is even, so an odd step always
	// follows; R10 counts the passes left in the super-block.
	fmt.Fprintf(b, "\n%sloop:\n", name)
	b.WriteString(ops(1))
	b.WriteString(kInt(0))
	fmt.Fprintf(b, "\tCMPQ CX, $2\n\tJEQ  %slast\n", name)
	b.WriteString(ops(0))
	fmt.Fprintf(b, "\n%slast:\n", name)
	b.WriteString(kInt(1))
	fmt.Fprintf(b, "\tDECQ R10\n\tJNZ  %snext\n", name)
	b.WriteString(kFloat(mins))
	fmt.Fprintf(b, "\tMOVQ $%d, R10\n\n%snext:\n\tSUBQ $2, CX\n\tJNZ  %sloop\n\n\tTILERELEASE\n", sub/2, name, name)
	for m := range 16 {
		fmt.Fprintf(b, "\tVMOVUPS %d(R8), Z%d\n", m*64, m)
	}
	b.WriteString(`	MOVQ k+0(FP), R11
	MOVQ 88(R11), R12
	MOVQ 96(R11), R13
	MOVQ 104(R11), R8
	MOVQ 80(R11), R11
	TRANSPOSE_STORE
	VZEROUPPER
	RET

`)
}

// kInt multiplies buffer buf's sums by the step's sub-block scales (at
// R9, 16 int32) and adds them to Z0-Z15.
func kInt(buf int) string {
	var b strings.Builder
	for m := range 16 {
		t := 17 + m%4
		fmt.Fprintf(&b, "\tVMOVDQU32   %d(DX), Z%d\n", 1024*buf+m*64, t)
		fmt.Fprintf(&b, "\tVPMULLD.BCST %d(R9), Z%d, Z%d\n", m*4, t, t)
		fmt.Fprintf(&b, "\tVPADDD      Z%d, Z%d, Z%d\n", t, m, m)
	}
	b.WriteString("\tADDQ $64, R9\n")
	return b.String()
}

// kFloat ends a super-block: per weight row m, with isum in Zm, the
// weight's d (and dmin, mins) at R12 and the activations' d (and
// sub-block sums) at R13,
//
//	Q4_K: acc += float(d·float(isum)) − float(dmin·float(summs)),
//	      summs = Σ mins·sums by VPDPWSSD, d = dw·dy, dmin = dminw·dy
//	Q6_K: acc += (dw·dy)·float(isum)
//
// then zeroes isum and moves to the next super-block's data.
func kFloat(mins bool) string {
	var b strings.Builder
	b.WriteString("\tVMOVUPS (R13), Z20\n")
	if mins {
		for i := range 4 {
			fmt.Fprintf(&b, "\tVMOVDQU32 %d(R13), Z%d\n", 64*(i+1), 16+i)
		}
	}
	for m := range 16 {
		fmt.Fprintf(&b, "\tVCVTDQ2PS   Z%d, Z22\n", m)
		fmt.Fprintf(&b, "\tVMULPS.BCST %d(R12), Z20, Z23\n", 4*m)
		b.WriteString("\tVMULPS      Z23, Z22, Z22\n")
		if mins {
			b.WriteString("\tVPXORD      Z21, Z21, Z21\n")
			for i := range 4 {
				fmt.Fprintf(&b, "\tVPDPWSSD.BCST %d(R12), Z%d, Z21\n", 128+16*m+4*i, 16+i)
			}
			b.WriteString("\tVCVTDQ2PS   Z21, Z24\n")
			fmt.Fprintf(&b, "\tVMULPS.BCST %d(R12), Z20, Z25\n", 64+4*m)
			b.WriteString("\tVMULPS      Z25, Z24, Z24\n")
			b.WriteString("\tVSUBPS      Z24, Z22, Z22\n")
		}
		fmt.Fprintf(&b, "\tVADDPS      %d(R8), Z22, Z22\n", 64*m)
		fmt.Fprintf(&b, "\tVMOVUPS     Z22, %d(R8)\n", 64*m)
		fmt.Fprintf(&b, "\tVPXORD      Z%d, Z%d, Z%d\n", m, m, m)
	}
	fmt.Fprintf(&b, "\tADDQ $%d, R12\n\tADDQ $%d, R13\n", 4*96, 4*80)
	return b.String()
}

// storeMacros defines STCOL and TRANSPOSE_STORE: Z0-Z15 (weight rows,
// activation rows in lanes) turned into columns by 32-bit and 64-bit
// interleaves and two rounds of 128-bit lane shuffles, each column
// stored with STCOL.
func storeMacros() string {
	var t []string
	for r := 0; r < 16; r += 2 {
		t = append(t, fmt.Sprintf("VUNPCKLPS Z%d, Z%d, Z%d", r+1, r, 16+r),
			fmt.Sprintf("VUNPCKHPS Z%d, Z%d, Z%d", r+1, r, 17+r))
	}
	for r := 0; r < 16; r += 4 {
		T := func(i int) string { return fmt.Sprintf("Z%d", 16+r+i) }
		t = append(t,
			fmt.Sprintf("VUNPCKLPD %s, %s, Z%d", T(2), T(0), r),
			fmt.Sprintf("VUNPCKHPD %s, %s, Z%d", T(2), T(0), r+1),
			fmt.Sprintf("VUNPCKLPD %s, %s, Z%d", T(3), T(1), r+2),
			fmt.Sprintf("VUNPCKHPD %s, %s, Z%d", T(3), T(1), r+3))
	}
	for k := range 4 {
		t = append(t,
			fmt.Sprintf("VSHUFF32X4 $0x44, Z%d, Z%d, Z16", 4+k, k),
			fmt.Sprintf("VSHUFF32X4 $0xEE, Z%d, Z%d, Z17", 4+k, k),
			fmt.Sprintf("VSHUFF32X4 $0x44, Z%d, Z%d, Z18", 12+k, 8+k),
			fmt.Sprintf("VSHUFF32X4 $0xEE, Z%d, Z%d, Z19", 12+k, 8+k),
			"VSHUFF32X4 $0x88, Z18, Z16, Z20",
			"VSHUFF32X4 $0xDD, Z18, Z16, Z21",
			"VSHUFF32X4 $0x88, Z19, Z17, Z22",
			"VSHUFF32X4 $0xDD, Z19, Z17, Z23")
		for i, c := range []int{k, 4 + k, 8 + k, 12 + k} {
			t = append(t, fmt.Sprintf("STCOL(%d, Z%d)", c, 20+i))
		}
	}
	return `// STCOL stores z, the outputs of activation row c (< 16), at
// out + c·outStride (R11, R12) under the row mask (R8), or nothing when
// c ≥ nTok (R13).
#define STCOL(c, z) \
	XORL    BX, BX;     \
	CMPQ    R13, $c;    \
	CMOVQGT R8, BX;     \
	KMOVW   BX, K2;     \
	IMUL3Q  $c, R12, SI; \
	VMOVUPS z, K2, (R11)(SI*1)

// TRANSPOSE_STORE turns Z0-Z15 (weight rows, activation rows in lanes)
// into columns (32-bit, then 64-bit interleaves, then two rounds of
// 128-bit lane shuffles) and stores each with STCOL.
#define TRANSPOSE_STORE \
	` + strings.Join(t, "; \\\n\t") + "\n\n"
}

const header = `// Code generated by go run ./internal/genpacked; DO NOT EDIT.

//go:build amd64 && !noasm

#include "textflag.h"

// Intel AMX tile kernels (see packed.go). The Go assembler does not know
// the AMX instructions, so they are spelled out as VEX bytes: C4, then
// E2 (no register extensions, map 0F38), then W0·vvvv·L0·pp, opcode,
// ModRM and SIB. Tile memory operands must use SIB addressing; the
// index register holds the stride between tile rows.

// LDTILECFG (DI)
#define LDTILECFG_DI BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0x07
// TILERELEASE
#define TILERELEASE BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0xC0
// TILEZERO tmm0
#define TILEZERO_0 BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x49; BYTE $0xC0
// TILELOADD tmm1, (SI)(BX*1): the weights, rows BX bytes apart
#define TILELOADD_1_SI_BX BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x0C; BYTE $0x1E
// TILELOADD tmm2, (DI)(AX*1): the activations, rows 64 bytes apart
#define TILELOADD_2_DI_AX BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x14; BYTE $0x07
// TILESTORED (DX)(AX*1), tmm0
#define TILESTORED_DX_AX_0 BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $0x04; BYTE $0x02
// The same for the second buffer: tmm3 += tmm4 · tmm5, stored at 1024(DX).
#define TILEZERO_3 BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x49; BYTE $0xD8
#define TILELOADD_4_SI_BX BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x24; BYTE $0x1E
#define TILELOADD_5_DI_AX BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x2C; BYTE $0x07
#define TDPBSSD_3_4_5 BYTE $0xC4; BYTE $0xE2; BYTE $0x53; BYTE $0x5E; BYTE $0xDC
#define TILESTORED_DX1024_AX_3 BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $0x9C; BYTE $0x02; BYTE $0x00; BYTE $0x04; BYTE $0x00; BYTE $0x00
// TDPBSSD tmm0, tmm1, tmm2: tmm0 += tmm1 (weights) · tmm2 (activations), signed bytes
#define TDPBSSD_0_1_2 BYTE $0xC4; BYTE $0xE2; BYTE $0x6B; BYTE $0x5E; BYTE $0xC1

`

// rowLoop is a routine, func(rows *byte, rowStride, nr, <count> int,
// [a *byte,] [dw *float32]), that runs body on each of the count blocks
// (size bytes, at R9) of nr rows rowStride bytes apart (SI, BX; the
// row's blocks left in R12). a (DI; R10 in the row) steps aBlock bytes
// a block and aRow bytes a row; dw (R8; R11 in the row), the scales'
// [count][16] float32, 64 bytes a block and 4 a row. setup loads the
// constants body needs.
type rowLoop struct {
	name, doc    string // doc: the comment lines after the signature
	count        string // the block count's name: nb or nsb
	a, dw        bool
	size         int
	aBlock, aRow int
	setup, body  string
}

func (r rowLoop) write(b *strings.Builder) {
	sig, args, frame := "", "", 32
	if r.a {
		sig += ", a *byte"
		args += fmt.Sprintf("\tMOVQ         a+%d(FP), DI\n", frame)
		frame += 8
	}
	if r.dw {
		sig += ", dw *float32"
		args += fmt.Sprintf("\tMOVQ         dw+%d(FP), R8\n", frame)
		frame += 8
	}
	fmt.Fprintf(b, "// func %s(rows *byte, rowStride, nr, %s int%s)\n%s", r.name, r.count, sig, r.doc)
	fmt.Fprintf(b, "TEXT ·%s(SB), NOSPLIT, $0-%d\n", r.name, frame)
	fmt.Fprintf(b, "\tMOVQ         rows+0(FP), SI\n\tMOVQ         rowStride+8(FP), BX\n\tMOVQ         nr+16(FP), CX\n\tMOVQ         %s+24(FP), DX\n", r.count)
	fmt.Fprintf(b, "%s%s\n%srow:\n\tMOVQ SI, R9\n", args, r.setup, r.name)
	if r.a {
		b.WriteString("\tMOVQ DI, R10\n")
	}
	if r.dw {
		b.WriteString("\tMOVQ R8, R11\n")
	}
	fmt.Fprintf(b, "\tMOVQ DX, R12\n\n%sblk:\n%s\tADDQ         $%d, R9\n", r.name, r.body, r.size)
	if r.a {
		fmt.Fprintf(b, "\tADDQ         $%d, R10\n", r.aBlock)
	}
	if r.dw {
		b.WriteString("\tADDQ         $64, R11\n")
	}
	fmt.Fprintf(b, "\tDECQ         R12\n\tJNZ          %sblk\n\n\tADDQ BX, SI\n", r.name)
	if r.a {
		fmt.Fprintf(b, "\tADDQ $%d, DI\n", r.aRow)
	}
	if r.dw {
		b.WriteString("\tADDQ $4, R8\n")
	}
	fmt.Fprintf(b, "\tDECQ CX\n\tJNZ  %srow\n\tVZEROUPPER\n\tRET\n\n", r.name)
}

// nibbleMask is the setup of the routines that split nibbles.
const nibbleMask = `	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Y15
`

// scaleStore converts the block's fp16 scale (its first two bytes) into
// its row's dw entry.
const scaleStore = `	MOVWLZX      (R9), AX
	VMOVD        AX, X2
	VCVTPH2PS    X2, X2
	VMOVSS       X2, (R11)
`

var scalesQ8_0 = rowLoop{
	name: "amxScalesQ8_0", doc: "// Gathers the scales of nr Q8_0 rows into dw [nb][16].\n",
	count: "nb", dw: true, size: 34, body: scaleStore,
}

// tilesComment introduces the Q4_0/Q8_0 tile kernels.
const tilesComment = `// The tile kernels, func(k *tileArgs): per block, tmm0 = the exact sums
// of up to 16 weight rows × 16 activation rows, stored to k.c; then each
// weight row's sums (activation rows in lanes) are scaled and added to
// its float32 running sum, Z0-Z15, in the generic twin's order:
//   Q4_0: sum += (float(i)·dw)·dx      Q8_0: sum += float(i)·(dw·dx)
// with Z16 the block's 16 activation scales. At the end the sums are
// transposed to one row of outputs per activation row and stored under
// the row mask, activation rows past k.nTok not at all.
`

// widen is the routine that widens nr rows of nb 32-value blocks of
// type typ, size bytes, to a [nb][16][32] int8 (in the activations'
// order: the 16 low nibbles, then the 16 high) of what, and their fp16
// scales to dw [nb][16]. decode leaves a block's values in Y0; setup
// loads its constants.
func widen(typ, what string, size int, setup, decode string) rowLoop {
	return rowLoop{
		name:  "amxWiden" + typ,
		doc:   fmt.Sprintf("// Widens nr %s rows to a [nb][16][32] of %s and their scales to\n// dw [nb][16].\n", typ, what),
		count: "nb", a: true, dw: true, size: size, aBlock: 512, aRow: 32,
		setup: nibbleMask + setup,
		body:  decode + "\tVMOVDQU      Y0, (R10)\n" + scaleStore,
	}
}

// nibbles (at byte off of the block) to Y0: low ones, then high ones.
func nibbles(off int) string {
	return fmt.Sprintf(`	VMOVDQU      %d(R9), X0
	VPSRLW       $4, X0, X1
	VPAND        X15, X0, X0
	VPAND        X15, X1, X1
	VINSERTI128  $1, X1, Y0, Y0
`, off)
}

const q40Setup = `	MOVL         $0x08080808, AX
	VPBROADCASTD AX, Y14
`

var q40Decode = nibbles(2) + `	VPSUBB       Y14, Y0, Y0
`

const q50Setup = `	MOVL         $0x10101010, AX
	VPBROADCASTD AX, Y14
	VMOVDQU      amxBitsel<>(SB), Y12
	VMOVDQU      amxBitmask<>(SB), Y11
`

var q50Decode = nibbles(6) + `	VPBROADCASTD 2(R9), Y2
	VPSHUFB      Y12, Y2, Y2
	VPAND        Y11, Y2, Y2
	VPCMPEQB     Y11, Y2, Y2
	VPAND        Y14, Y2, Y2
	VPOR         Y2, Y0, Y0
	VPSUBB       Y14, Y0, Y0
`

// q50Data holds Q5_0's tables for the fifth bits: byte j of amxBitsel
// is qh's byte j/8, which holds value j's bit; byte j of amxBitmask is
// that bit, 1<<(j%8).
var q50Data = `// Q5_0's fifth bits: VPSHUFB spreads qh's bytes over the 32 values
// (amxBitsel), amxBitmask picks each value's bit.
` + asmdata.Table("amxBitsel", 0, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303) +
	asmdata.Table("amxBitmask", 0x8040201008040201, 0x8040201008040201, 0x8040201008040201, 0x8040201008040201) + "\n"

// widenQ4_K splits each 32-byte run of a super-block's quants into its
// low nibbles (sub-block 2j) and high ones (2j+1).
var widenQ4_K = rowLoop{
	name: "amxWidenQ4_K",
	doc: `// Widens the quants of nr Q4_K rows to a [nsb][8][16][32] (int8 0..15:
// sub-block 2j is the low nibbles of qs[32j:32j+32], 2j+1 the high ones).
`,
	count: "nsb", a: true, size: 144, aBlock: 4096, aRow: 32, setup: nibbleMask,
	body: func() string {
		var b strings.Builder
		for j := range 4 {
			fmt.Fprintf(&b, "\tVMOVDQU %d(R9), Y%d\n", 16+32*j, 2*j)
		}
		for j := range 4 {
			fmt.Fprintf(&b, "\tVPSRLW  $4, Y%d, Y%d\n", 2*j, 2*j+1)
		}
		for t := range 8 {
			fmt.Fprintf(&b, "\tVPAND   Y15, Y%d, Y%d\n", t, t)
		}
		for t := range 8 {
			fmt.Fprintf(&b, "\tVMOVDQU Y%d, %d(R10)\n", t, 512*t)
		}
		return b.String()
	}(),
}

// q6KHalf defines Q6KHALF, which widens one 128-value half of a Q6_K
// row: ql's 64 bytes give four 32-value runs of low four bits (Y0, Y1
// the low nibbles, Y3, Y4 the high), run i ORed with bits 2i and 2i+1 of
// qh's 32 bytes moved to bits 4 and 5, then less 32.
var q6KHalf = func() string {
	t := []string{
		"VMOVDQU     lo(R9), Y0", "VMOVDQU     lo+32(R9), Y1", "VMOVDQU     ho(R9), Y2",
		"VPSRLW      $4, Y0, Y3", "VPSRLW      $4, Y1, Y4",
	}
	runs := []int{0, 1, 3, 4}
	for _, y := range runs {
		t = append(t, fmt.Sprintf("VPAND       Y15, Y%d, Y%d", y, y))
	}
	for i, y := range runs {
		switch sh := 4 - 2*i; {
		case sh > 0:
			t = append(t, fmt.Sprintf("VPSLLW      $%d, Y2, Y5", sh), "VPAND       Y14, Y5, Y5")
		case sh < 0:
			t = append(t, fmt.Sprintf("VPSRLW      $%d, Y2, Y5", -sh), "VPAND       Y14, Y5, Y5")
		default:
			t = append(t, "VPAND       Y14, Y2, Y5")
		}
		t = append(t, fmt.Sprintf("VPOR        Y5, Y%d, Y%d", y, y))
	}
	for _, y := range runs {
		t = append(t, fmt.Sprintf("VPSUBB      Y13, Y%d, Y%d", y, y))
	}
	for i, y := range runs {
		t = append(t, fmt.Sprintf("VMOVDQU     X%d, (t*256+%d)(R10)", y, 512*i),
			fmt.Sprintf("VEXTRACTI128 $1, Y%d, (t*256+%d)(R10)", y, 512*i+256))
	}
	return `// Q6KHALF widens one 128-value half of a Q6_K row (ql at lo(R9), qh at
// ho(R9)) to sub-blocks t..t+7, 16 bytes each at 256-byte steps from
// R10, as q−32.
#define Q6KHALF(lo, ho, t) \
	` + strings.Join(t, "; \\\n\t") + "\n\n"
}()

var widenQ6_K = rowLoop{
	name: "amxWidenQ6_K",
	doc: `// Widens the quants of nr Q6_K rows to a [nsb][16][16][16] (int8 q−32,
// sub-block t holding values 16t..16t+15).
`,
	count: "nsb", a: true, size: 210, aBlock: 4096, aRow: 16,
	setup: nibbleMask + `	MOVL         $0x30303030, AX
	VPBROADCASTD AX, Y14
	MOVL         $0x20202020, AX
	VPBROADCASTD AX, Y13
`,
	body: "\tQ6KHALF(0, 128, 0)\n\tQ6KHALF(64, 160, 8)\n",
}
