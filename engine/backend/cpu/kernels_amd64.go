//go:build amd64 && !noasm

package cpu

import "golang.org/x/sys/cpu"

var haveAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C

//go:noescape
func cvtF16Asm(dst *float32, src *uint16, n int)

//go:noescape
func dotsAsm(dst, q, k *float32, d, nk, stride int, scale float32)

//go:noescape
func accumAsm(acc, p, v *float32, d, nk, stride int)

//go:noescape
func readSumAsm(p *byte, n int) uint64

//go:noescape
func roundF16Asm(x *float32, n int)

//go:noescape
func swigluAsm(dst, gate, up *float32, n int)

//go:noescape
func softmaxExpAsm(s *float32, n int, mx float32) float64

//go:noescape
func prefetchAsm(p *byte, n int)

//go:noescape
func maxAsm(x *float32, n int) float32

//go:noescape
func scaleAsm(x *float32, n int, c float32)

//go:noescape
func deltaRowsAsm(s, k, q, v, out *float32, hd int, decay, b, scale float32)

//go:noescape
func mulAddAsm(out, x, w *float32, n int, add bool)
