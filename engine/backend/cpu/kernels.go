package cpu

import "github.com/churon/churon/engine/quant"

// Small float kernels for attention and the element-wise steps. Each has
// a plain-Go twin (the *Generic functions), which is what runs when the
// CPU lacks AVX2/FMA/F16C, on other architectures, and with the noasm
// build tag; tests pin the assembly to them.

// useAsm says whether the assembly kernels run. Tests flip it.
var useAsm = haveAsm

// cvtF16 widens n halves to float32.
func cvtF16(dst []float32, src []uint16) {
	n := len(src)
	_ = dst[n-1]
	if useAsm && n >= 8 {
		cvtF16Asm(&dst[0], &src[0], n)
		return
	}
	cvtF16Generic(dst, src)
}

func cvtF16Generic(dst []float32, src []uint16) {
	for i, h := range src {
		dst[i] = quant.FP16ToFP32(h)
	}
}

// dots sets dst[t] = scale·(q · k[t*stride : t*stride+len(q)]) for
// t < len(dst): the product rounded to float32, then scaled, as ggml
// scales attention scores after the product.
func dots(dst, q, k []float32, stride int, scale float32) {
	nk, d := len(dst), len(q)
	if nk == 0 {
		return
	}
	_ = k[(nk-1)*stride+d-1]
	if useAsm && d%8 == 0 && d > 0 {
		dotsAsm(&dst[0], &q[0], &k[0], d, nk, stride, scale)
		return
	}
	dotsGeneric(dst, q, k, stride, scale)
}

func dotsGeneric(dst, q, k []float32, stride int, scale float32) {
	for t := range dst {
		row := k[t*stride : t*stride+len(q)]
		var s float32
		for j, v := range q {
			s += v * row[j]
		}
		dst[t] = s * scale
	}
}

// maxF32 is the largest value of a non-empty slice without NaNs.
func maxF32(x []float32) float32 {
	m := x[0]
	if useAsm && len(x) >= 8 {
		k := len(x) &^ 7
		m = maxAsm(&x[0], k)
		x = x[k:]
	}
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

// scaleF32 multiplies every value by c.
func scaleF32(x []float32, c float32) {
	if useAsm && len(x) >= 8 {
		k := len(x) &^ 7
		scaleAsm(&x[0], k, c)
		x = x[k:]
	}
	for i := range x {
		x[i] *= c
	}
}

// accum adds Σ_t p[t]·v[t*stride : t*stride+len(acc)] to acc.
func accum(acc, p, v []float32, stride int) {
	nk, d := len(p), len(acc)
	if nk == 0 {
		return
	}
	_ = v[(nk-1)*stride+d-1]
	if useAsm && d%8 == 0 && d > 0 {
		accumAsm(&acc[0], &p[0], &v[0], d, nk, stride)
		return
	}
	accumGeneric(acc, p, v, stride)
}

func accumGeneric(acc, p, v []float32, stride int) {
	for t, w := range p {
		row := v[t*stride : t*stride+len(acc)]
		for j := range acc {
			acc[j] += w * row[j]
		}
	}
}

// roundF16 rounds each value to the nearest half (ties to even), as
// storing it in F16 and reading it back would.
func roundF16(x []float32) {
	n := len(x)
	if useAsm && n >= 8 {
		m := n &^ 7
		roundF16Asm(&x[0], m)
		x = x[m:]
	}
	roundF16Generic(x)
}

func roundF16Generic(x []float32) {
	for i, v := range x {
		x[i] = quant.FP16ToFP32(quant.FP32ToFP16(v))
	}
}

// swiglu sets dst = silu(gate)·up = gate/(1+e^-gate)·up.
//
// With the vector kernel, a tail of fewer than eight values goes through
// it too, padded, rather than through the Go twin: the two exps may differ
// in the last bit, and a batch of rows × FF values puts a given element in
// the tail or not depending on how many rows the batch has — feeding the
// same tokens in other batch splits must give the same bits.
func swiglu(dst, gate, up []float32) {
	n := len(gate)
	if !useAsm {
		swigluGeneric(dst, gate, up)
		return
	}
	m := n &^ 7
	if m > 0 {
		_, _ = dst[m-1], up[m-1]
		swigluAsm(&dst[0], &gate[0], &up[0], m)
	}
	if m < n {
		var g, u, d [8]float32
		copy(g[:], gate[m:n])
		copy(u[:], up[m:n])
		swigluAsm(&d[0], &g[0], &u[0], 8)
		copy(dst[m:n], d[:n-m])
	}
}

func swigluGeneric(dst, gate, up []float32) {
	for i, g := range gate {
		dst[i] = g / (1 + expf(-g)) * up[i]
	}
}

// softmaxExp sets s[j] = e^(s[j]-mx) and returns their sum in float64,
// as ggml's soft_max accumulates it.
func softmaxExp(s []float32, mx float32) float64 {
	var sum float64
	if useAsm && len(s) >= 8 {
		m := len(s) &^ 7
		sum = softmaxExpAsm(&s[0], m, mx)
		s = s[m:]
	}
	return sum + softmaxExpGeneric(s, mx)
}

func softmaxExpGeneric(s []float32, mx float32) float64 {
	var sum float64
	for j, v := range s {
		e := expf(v - mx)
		s[j] = e
		sum += float64(e)
	}
	return sum
}

// mulAdd sets out[i] = x[i]·w[i], or adds that to out[i] when add: the
// product rounded, then the sum (no fused multiply-add, so both ways give
// the same bits).
func mulAdd(out, x, w []float32, add bool) {
	n := len(out)
	_, _ = x[n-1], w[n-1]
	if useAsm && n >= 8 {
		m := n &^ 7
		mulAddAsm(&out[0], &x[0], &w[0], m, add)
		out, x, w = out[m:], x[m:n], w[m:n]
	}
	mulAddGeneric(out, x, w, add)
}

func mulAddGeneric(out, x, w []float32, add bool) {
	for i := range out {
		p := float32(x[i] * w[i]) // the conversion keeps the product rounded on its own
		if add {
			p += out[i]
		}
		out[i] = p
	}
}
