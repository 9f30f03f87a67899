//go:build !amd64 || noasm

package cpu

const haveAsm = false

func cvtF16Asm(dst *float32, src *uint16, n int)                   { panic("cpu: no assembly kernels") }
func dotsAsm(dst, q, k *float32, d, nk, stride int, scale float32) { panic("cpu: no assembly kernels") }
func accumAsm(acc, p, v *float32, d, nk, stride int)               { panic("cpu: no assembly kernels") }
func readSumAsm(p *byte, n int) uint64                             { panic("cpu: no assembly kernels") }
func roundF16Asm(x *float32, n int)                                { panic("cpu: no assembly kernels") }
func swigluAsm(dst, gate, up *float32, n int)                      { panic("cpu: no assembly kernels") }
func softmaxExpAsm(s *float32, n int, mx float32) float64          { panic("cpu: no assembly kernels") }
func prefetchAsm(p *byte, n int)                                   {}
func maxAsm(x *float32, n int) float32                             { panic("cpu: no assembly kernels") }
func scaleAsm(x *float32, n int, c float32)                        { panic("cpu: no assembly kernels") }
func deltaRowsAsm(s, k, q, v, out *float32, hd int, decay, b, scale float32) {
	panic("cpu: no assembly kernels")
}
func mulAddAsm(out, x, w *float32, n int, add bool) { panic("cpu: no assembly kernels") }
