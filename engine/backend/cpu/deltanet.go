package cpu

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/churon/churon/engine/backend"
)

// deltaTask runs the delta-rule recurrence of one pass, one value head per
// job: each head's state is its own, so heads run in parallel.
type deltaTask struct {
	d       *backend.DeltaNet
	n       int
	c       []float32 // n×ConvDim: the convolved, activated, normalised q|k|v
	g, beta []float32 // n×VHeads: decays exp(g) and sigmoid(beta)
	s       []float32 // the VHeads state matrices
	dst     []float32 // n×ValueDim
	tmp     [][]float32
	ones    []float32 // SiLU is SwiGLU with up = 1
}

func (t *deltaTask) run(w, lo, hi int) {
	d := t.d
	hd, cd, kd := d.HeadDim, d.ConvDim(), d.KHeads*d.HeadDim
	scale := float32(1 / math.Sqrt(float64(hd)))
	sk := t.tmp[w][:hd]
	for h := lo; h < hi; h++ {
		j := h % d.KHeads
		S := t.s[h*hd*hd : (h+1)*hd*hd]
		for tok := range t.n {
			row := t.c[tok*cd : (tok+1)*cd]
			q, k, v := row[j*hd:(j+1)*hd], row[kd+j*hd:kd+(j+1)*hd], row[2*kd+h*hd:2*kd+(h+1)*hd]
			scaleF32(S, t.g[tok*d.VHeads+h])
			// sk[col] = Σ_i S[i][col]·k[i]: row col of the stored matrix
			dots(sk, k, S, hd, 1)
			b := t.beta[tok*d.VHeads+h]
			for col := range hd {
				delta := (v[col] - sk[col]) * b
				axpy(S[col*hd:(col+1)*hd], k, delta)
			}
			dots(t.dst[(tok*d.VHeads+h)*hd:(tok*d.VHeads+h+1)*hd], q, S, hd, scale)
		}
	}
}

// axpy adds a·x to y.
func axpy(y, x []float32, a float32) {
	if useAsm && len(y)%8 == 0 && len(y) > 0 {
		one := [1]float32{a}
		accumAsm(&y[0], &one[0], &x[0], len(y), 1, len(y))
		return
	}
	for i, v := range x {
		y[i] += a * v
	}
}

// stateF32 views a state's bytes as float32 values (host order, which is
// little-endian on every platform Churon builds for).
func stateF32(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

// DeltaNet runs n tokens of one sequence through a Gated DeltaNet layer
// (backend.DeltaNet) with state st, which it advances, as llama.cpp's CPU
// ops do: ggml_ssm_conv's float32 sums, SiLU, the L2 norm as an RMS norm
// with eps/d scaled by 1/√d, and ggml_gated_delta_net's per-token loop.
func (b *Backend) DeltaNet(dst, qkv, alpha, beta []float32, st []byte, n int, d *backend.DeltaNet) error {
	cd, hd, K, H := d.ConvDim(), d.HeadDim, d.ConvKernel, d.VHeads
	if len(st) != d.StateBytes() {
		return fmt.Errorf("cpu: delta net state of %d bytes, want %d", len(st), d.StateBytes())
	}
	if len(qkv) < n*cd || len(alpha) < n*H || len(beta) < n*H || len(dst) < n*d.ValueDim() {
		panic(fmt.Sprintf("cpu: delta net buffers too short for %d tokens", n))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	all := stateF32(st)
	conv, S := all[:d.ConvStateLen()], all[d.ConvStateLen():]
	t := &b.dn
	t.c = growF(t.c, n*cd)
	t.g = growF(t.g, n*H)
	t.beta = growF(t.beta, n*H)
	// The convolution: channel ch of token tok sums its last K inputs,
	// the state's K−1 then the token's own, oldest first; then SiLU, on
	// the vector kernel ggml's silu shares with its SwiGLU (times ones).
	for tok := range n {
		out := t.c[tok*cd : (tok+1)*cd]
		for i := range K {
			src := tok - (K - 1) + i // the input's token, < 0 in the state
			var x []float32
			if src >= 0 {
				x = qkv[src*cd : (src+1)*cd]
			} else {
				x = conv[(K-1+src)*cd : (K+src)*cd]
			}
			w := d.Conv[i*cd : (i+1)*cd]
			x, w = x[:len(out)], w[:len(out)]
			if i == 0 {
				for ch := range out {
					out[ch] = x[ch] * w[ch]
				}
			} else {
				for ch := range out {
					out[ch] += x[ch] * w[ch]
				}
			}
		}
	}
	if len(t.ones) < n*cd {
		t.ones = make([]float32, n*cd)
		for i := range t.ones {
			t.ones[i] = 1
		}
	}
	swiglu(t.c, t.c, t.ones[:n*cd])
	// The state keeps the last K−1 inputs.
	if keep := K - 1; n >= keep {
		copy(conv, qkv[(n-keep)*cd:n*cd])
	} else {
		copy(conv, conv[n*cd:])
		copy(conv[(keep-n)*cd:], qkv[:n*cd])
	}
	for tok := range n {
		row := t.c[tok*cd : (tok+1)*cd]
		for h := range 2 * d.KHeads {
			l2Norm(row[h*hd:(h+1)*hd], d.Eps)
		}
		for h := range H {
			a := alpha[tok*H+h] + d.DTBias[h]
			sp := a
			if a <= 20 {
				sp = float32(math.Log(1 + math.Exp(float64(a))))
			}
			t.g[tok*H+h] = float32(math.Exp(float64(sp * d.A[h])))
			t.beta[tok*H+h] = 1 / (1 + float32(math.Exp(float64(-beta[tok*H+h]))))
		}
	}
	t.d, t.n, t.s, t.dst = d, n, S, dst
	if len(t.tmp) < b.threads {
		t.tmp = make([][]float32, b.threads)
	}
	for w := range t.tmp {
		t.tmp[w] = growF(t.tmp[w], hd)
	}
	b.pool.parallel(t, H, 1)
	t.d, t.s, t.dst = nil, nil, nil
	return nil
}

// l2Norm divides x by √(Σx² + eps) the way llama.cpp computes it: an RMS
// norm with eps/d (the sum in float64), then a scale by 1/√d.
func l2Norm(x []float32, eps float32) {
	d := len(x)
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	mean := float32(sum / float64(d))
	scale := 1 / float32(math.Sqrt(float64(mean+eps/float32(d))))
	post := 1 / float32(math.Sqrt(float64(d)))
	for i, v := range x {
		x[i] = v * scale * post
	}
}
