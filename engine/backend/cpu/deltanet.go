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
	ones    []float32 // SiLU is SwiGLU with up = 1
}

func (t *deltaTask) run(w, lo, hi int) {
	d := t.d
	hd, cd, kd := d.HeadDim, d.ConvDim(), d.KHeads*d.HeadDim
	scale := float32(1 / math.Sqrt(float64(hd)))
	for h := lo; h < hi; h++ {
		j := h % d.KHeads
		S := t.s[h*hd*hd : (h+1)*hd*hd]
		for tok := range t.n {
			row := t.c[tok*cd : (tok+1)*cd]
			q, k, v := row[j*hd:(j+1)*hd], row[kd+j*hd:kd+(j+1)*hd], row[2*kd+h*hd:2*kd+(h+1)*hd]
			deltaRows(S, k, q, v, t.dst[(tok*d.VHeads+h)*hd:(tok*d.VHeads+h+1)*hd],
				t.g[tok*d.VHeads+h], t.beta[tok*d.VHeads+h], scale)
		}
	}
}

// deltaRows is one token of the delta rule on one head's state s, stored
// as ggml stores it (row c of s is column c of S), with decay g and
// strength b: for each row, in order,
//
//	row    *= g
//	sk      = row·k                  (Σ_i S[i][c]·k[i])
//	row    += (v[c] − sk)·b · k
//	out[c]  = (row·q)·scale
//
// Every step reads and writes only its own row, so a row is done whole
// before the next: one sweep of the state per token instead of four. The
// vector kernel rounds as scaleF32, dots and axpy do on a row, and the Go
// twin as their Go twins, so the state and outputs are the bits of those
// four steps over the whole matrix in turn.
func deltaRows(s, k, q, v, out []float32, g, b, scale float32) {
	hd := len(k)
	_, _, _, _ = s[hd*hd-1], q[hd-1], v[hd-1], out[hd-1]
	if useAsm && hd%8 == 0 {
		deltaRowsAsm(&s[0], &k[0], &q[0], &v[0], &out[0], hd, g, b, scale)
		return
	}
	deltaRowsGeneric(s, k, q, v, out, g, b, scale)
}

func deltaRowsGeneric(s, k, q, v, out []float32, g, b, scale float32) {
	hd := len(k)
	for c := range hd {
		row := s[c*hd : (c+1)*hd]
		var sk float32
		for i := range row {
			row[i] *= g
			sk += k[i] * row[i]
		}
		delta := (v[c] - sk) * b
		var o float32
		for i, x := range k {
			row[i] += delta * x
			o += q[i] * row[i]
		}
		out[c] = o * scale
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
	cd, K, H := d.ConvDim(), d.ConvKernel, d.VHeads
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
	if len(t.ones) < cd {
		t.ones = make([]float32, cd)
		for i := range t.ones {
			t.ones[i] = 1
		}
	}
	p := &b.dnPrep
	p.t, p.qkv, p.conv, p.alpha, p.beta, p.d = t, qkv, conv, alpha, beta, d
	b.pool.parallel(p, n, 8)
	p.t, p.qkv, p.conv, p.alpha, p.beta, p.d = nil, nil, nil, nil, nil, nil
	// The state keeps the last K−1 inputs.
	if keep := K - 1; n >= keep {
		copy(conv, qkv[(n-keep)*cd:n*cd])
	} else {
		copy(conv, conv[n*cd:])
		copy(conv[(keep-n)*cd:], qkv[:n*cd])
	}
	t.d, t.n, t.s, t.dst = d, n, S, dst
	b.pool.parallel(t, H, 1)
	t.d, t.s, t.dst = nil, nil, nil
	return nil
}

// deltaPrep makes the recurrence's inputs of tokens [lo, hi), each on
// its own (the convolution reads the state before this pass advances
// it): the convolution, channel ch of token tok summing its last K
// inputs, the state's K−1 then the token's own, oldest first; SiLU, on
// the vector kernel ggml's silu shares with its SwiGLU (times ones); the
// L2 norms of q and k; the decay exp(g) and sigmoid(beta) per value head.
type deltaPrep struct {
	t                      *deltaTask
	d                      *backend.DeltaNet
	qkv, conv, alpha, beta []float32
}

func (p *deltaPrep) run(_, lo, hi int) {
	d, t := p.d, p.t
	cd, hd, K, H := d.ConvDim(), d.HeadDim, d.ConvKernel, d.VHeads
	for tok := lo; tok < hi; tok++ {
		out := t.c[tok*cd : (tok+1)*cd]
		for i := range K {
			src := tok - (K - 1) + i // the input's token, < 0 in the state
			var x []float32
			if src >= 0 {
				x = p.qkv[src*cd : (src+1)*cd]
			} else {
				x = p.conv[(K-1+src)*cd : (K+src)*cd]
			}
			mulAdd(out, x, d.Conv[i*cd:(i+1)*cd], i > 0)
		}
		swiglu(out, out, t.ones[:cd])
		for h := range 2 * d.KHeads {
			l2Norm(out[h*hd:(h+1)*hd], d.Eps)
		}
		for h := range H {
			a := p.alpha[tok*H+h] + d.DTBias[h]
			sp := a
			if a <= 20 {
				sp = float32(math.Log(1 + math.Exp(float64(a))))
			}
			t.g[tok*H+h] = float32(math.Exp(float64(sp * d.A[h])))
			t.beta[tok*H+h] = 1 / (1 + float32(math.Exp(float64(-p.beta[tok*H+h]))))
		}
	}
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
