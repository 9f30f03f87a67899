// Package gdnref is the float64 oracle of a Gated DeltaNet layer's
// recurrence and short convolution (backend.DeltaNet), written from its
// definition, one token and one value at a time: what the CPU kernel,
// the fake device and the architecture's tests are checked against.
package gdnref

import (
	"math"

	"github.com/churon/churon/engine/backend"
)

// State is one sequence's state of a layer, in float64: the last
// ConvKernel−1 convolution inputs (oldest first, ConvDim each) and the
// VHeads matrices S, S_h[i][j] at h·d·d + j·d + i (the device layout).
type State struct {
	Conv []float64
	S    []float64
}

// NewState is a zero state for layer d.
func NewState(d *backend.DeltaNet) *State {
	return &State{Conv: make([]float64, d.ConvStateLen()), S: make([]float64, d.VHeads*d.HeadDim*d.HeadDim)}
}

// FromBytes reads a device state (backend.DeltaNet.StateBytes bytes of
// little-endian float32).
func FromBytes(d *backend.DeltaNet, b []byte) *State {
	st := NewState(d)
	f := func(i int) float64 {
		return float64(math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24))
	}
	for i := range st.Conv {
		st.Conv[i] = f(i)
	}
	for i := range st.S {
		st.S[i] = f(len(st.Conv) + i)
	}
	return st
}

// Run feeds n tokens (qkv n×ConvDim, alpha and beta n×VHeads) through
// layer d from state st, which it advances, and returns the n×ValueDim
// outputs.
func Run(d *backend.DeltaNet, st *State, qkv, alpha, beta []float32, n int) []float64 {
	cd, hd, K := d.ConvDim(), d.HeadDim, d.ConvKernel
	kd := d.KHeads * hd
	out := make([]float64, n*d.ValueDim())
	c := make([]float64, cd)
	for t := range n {
		x := qkv[t*cd : (t+1)*cd]
		// the causal convolution over the last K inputs, then SiLU
		for ch := range cd {
			s := float64(d.Conv[(K-1)*cd+ch]) * float64(x[ch])
			for i := 0; i < K-1; i++ {
				s += float64(d.Conv[i*cd+ch]) * st.Conv[i*cd+ch]
			}
			c[ch] = s / (1 + math.Exp(-s))
		}
		copy(st.Conv, st.Conv[cd:])
		for ch := range cd {
			st.Conv[(K-2)*cd+ch] = float64(x[ch])
		}
		q, k, v := c[:kd], c[kd:2*kd], c[2*kd:]
		for h := range d.KHeads {
			l2(q[h*hd:(h+1)*hd], d.Eps)
			l2(k[h*hd:(h+1)*hd], d.Eps)
		}
		for h := range d.VHeads {
			j := h % d.KHeads
			qh, kh, vh := q[j*hd:(j+1)*hd], k[j*hd:(j+1)*hd], v[h*hd:(h+1)*hd]
			a := float64(alpha[t*d.VHeads+h]) + float64(d.DTBias[h])
			sp := math.Log1p(math.Exp(a))
			if a > 20 {
				sp = a
			}
			decay := math.Exp(sp * float64(d.A[h]))
			b := 1 / (1 + math.Exp(-float64(beta[t*d.VHeads+h])))
			S := st.S[h*hd*hd : (h+1)*hd*hd]
			for i := range S {
				S[i] *= decay
			}
			o := out[(t*d.VHeads+h)*hd : (t*d.VHeads+h+1)*hd]
			for col := range hd { // column col of S: S[i][col] = S[col*hd+i]
				m := S[col*hd : (col+1)*hd]
				var sk float64
				for i := range hd {
					sk += m[i] * kh[i]
				}
				delta := b * (vh[col] - sk)
				var sq float64
				for i := range hd {
					m[i] += kh[i] * delta
					sq += m[i] * qh[i]
				}
				o[col] = sq / math.Sqrt(float64(hd))
			}
		}
	}
	return out
}

// l2 divides x by √(Σx² + eps), as llama.cpp's build_gdn_l2_norm does.
func l2(x []float64, eps float32) {
	var s float64
	for _, v := range x {
		s += v * v
	}
	r := 1 / math.Sqrt(s+float64(eps))
	for i := range x {
		x[i] *= r
	}
}
