package cpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// withImpl runs f with the assembly kernels and, where they exist, with
// the generic ones.
func withImpl(t *testing.T, f func(t *testing.T)) {
	t.Run("impl=go", func(t *testing.T) {
		saved := useAsm
		useAsm = false
		defer func() { useAsm = saved }()
		f(t)
	})
	if haveAsm {
		t.Run("impl=asm", f)
	}
}

func randFloats(r *rand.Rand, n int, scale float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64() * scale)
	}
	return out
}

func TestCvtAndRoundF16(t *testing.T) {
	if !haveAsm {
		t.Skip("no assembly kernels on this CPU or build")
	}
	// Every half, through the widening kernel.
	src := make([]uint16, 1<<16)
	for i := range src {
		src[i] = uint16(i)
	}
	got, want := make([]float32, len(src)), make([]float32, len(src))
	cvtF16(got, src)
	cvtF16Generic(want, src)
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
			t.Fatalf("half %#04x: asm %v, go %v", i, got[i], want[i])
		}
	}
	// Odd lengths take the scalar tail.
	for _, n := range []int{1, 7, 9, 33} {
		g, w := make([]float32, n), make([]float32, n)
		cvtF16(g, src[1000:1000+n])
		cvtF16Generic(w, src[1000:1000+n])
		for i := range g {
			if g[i] != w[i] {
				t.Fatalf("n=%d: element %d: %v vs %v", n, i, g[i], w[i])
			}
		}
	}
	// Rounding to F16: random values, ties, overflow, subnormals.
	r := rand.New(rand.NewPCG(1, 2))
	vals := randFloats(r, 10000, 3)
	vals = append(vals, 65504, 65520, 65519.99, 1e6, -1e6, 6e-8, 3e-8, 2.98e-8, 1e-10, 0, float32(math.Copysign(0, -1)),
		1+1.0/2048, 1+3.0/2048, -(1 + 1.0/2048), 2049, 2051, 4097)
	for len(vals)%8 != 3 {
		vals = append(vals, r.Float32())
	}
	a := append([]float32(nil), vals...)
	b := append([]float32(nil), vals...)
	roundF16(a)
	roundF16Generic(b)
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("round %v: asm %v, go %v", vals[i], a[i], b[i])
		}
	}
}

func TestDotsAndAccum(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, d := range []int{8, 16, 24, 64, 72, 128, 5} {
		for _, nk := range []int{1, 2, 7, 8, 9, 17, 63, 64} {
			stride := d + 8
			q := randFloats(r, d, 1)
			k := randFloats(r, nk*stride, 1)
			p := randFloats(r, nk, 0.1)
			acc0 := randFloats(r, d, 1)
			withImpl(t, func(t *testing.T) {
				got := make([]float32, nk)
				dots(got, q, k, stride, 0.5)
				acc := append([]float32(nil), acc0...)
				accum(acc, p, k, stride)
				for i := range got {
					var want float64
					for j := range d {
						want += float64(q[j]) * float64(k[i*stride+j])
					}
					want *= 0.5
					if math.Abs(float64(got[i])-want) > 1e-5*(1+math.Abs(want))*float64(d)/8 {
						t.Fatalf("d=%d nk=%d: dot %d = %v, want %v", d, nk, i, got[i], want)
					}
				}
				for j := range d {
					want := float64(acc0[j])
					for i := range nk {
						want += float64(p[i]) * float64(k[i*stride+j])
					}
					if math.Abs(float64(acc[j])-want) > 1e-5*(1+math.Abs(want)) {
						t.Fatalf("d=%d nk=%d: acc %d = %v, want %v", d, nk, j, acc[j], want)
					}
				}
			})
		}
	}
}

func ulps(a, b float32) int64 {
	ia, ib := int64(math.Float32bits(a)), int64(math.Float32bits(b))
	if ia > ib {
		return ia - ib
	}
	return ib - ia
}

func TestExpf(t *testing.T) {
	worst := int64(0)
	for x := float32(-103.9); x < 88.7; x += 0.00731 {
		want := float32(math.Exp(float64(x)))
		if want < 1.2e-38 {
			continue // subnormal results: checked below with an absolute bound
		}
		if u := ulps(expf(x), want); u > worst {
			worst = u
		}
	}
	if worst > 2 {
		t.Errorf("expf: worst error %d ulp", worst)
	}
	for _, x := range []float32{-100, -103.9, -90} {
		if d := math.Abs(float64(expf(x)) - math.Exp(float64(x))); d > 1e-44 {
			t.Errorf("expf(%v) = %v, want %v", x, expf(x), math.Exp(float64(x)))
		}
	}
	for _, x := range []float32{88.72, 88.5, -87.3} {
		if u := ulps(expf(x), float32(math.Exp(float64(x)))); u > 2 {
			t.Errorf("expf(%v) = %v: %d ulp from %v", x, expf(x), u, math.Exp(float64(x)))
		}
	}
	for x, want := range map[float32]float32{0: 1, -200: 0, 89: float32(math.Inf(1)), negInf: 0} {
		if got := expf(x); got != want {
			t.Errorf("expf(%v) = %v, want %v", x, got, want)
		}
	}
	if nan := float32(math.NaN()); expf(nan) == expf(nan) {
		t.Error("expf(NaN) is not NaN")
	}
}

// countTask records how often each job ran.
type countTask struct{ hits []atomic.Int32 }

func (c *countTask) run(_, lo, hi int) {
	for i := lo; i < hi; i++ {
		c.hits[i].Add(1)
	}
}

func TestPool(t *testing.T) {
	for _, workers := range []int{1, 2, 5} {
		p := newPool(workers)
		for _, n := range []int{1, 2, 7, 100, 1000} {
			for _, chunk := range []int{1, 3, 64} {
				c := &countTask{hits: make([]atomic.Int32, n)}
				for range 20 {
					p.parallel(c, n, chunk)
				}
				for i := range c.hits {
					if h := c.hits[i].Load(); h != 20 {
						t.Fatalf("workers %d n %d chunk %d: job %d ran %d times in 20 loops", workers, n, chunk, i, h)
					}
				}
			}
		}
		// Loops from several goroutines at once are serialised, not mixed.
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := &countTask{hits: make([]atomic.Int32, 50+g)}
				for range 200 {
					p.parallel(c, len(c.hits), 2)
				}
				for i := range c.hits {
					if h := c.hits[i].Load(); h != 200 {
						t.Errorf("concurrent loops: job %d ran %d times", i, h)
						return
					}
				}
			}()
		}
		wg.Wait()
		p.close()
		p.close()
	}
	if DefaultThreads() < 1 {
		t.Errorf("DefaultThreads = %d", DefaultThreads())
	}
}

// quantTensor makes a rows×cols tensor of type typ from random weights.
func quantTensor(t *testing.T, r *rand.Rand, typ quant.Type, cols, rows int) *backend.Tensor {
	t.Helper()
	size, ok := typ.RowSize(cols)
	if !ok {
		t.Fatalf("%v: %d columns", typ, cols)
	}
	data := make([]byte, size*rows)
	for i := range rows {
		if err := quant.Quantize(typ, randFloats(r, cols, 0.5), data[i*size:(i+1)*size]); err != nil {
			t.Fatal(err)
		}
	}
	return &backend.Tensor{Name: typ.String(), Type: typ, Ne: [4]int{cols, rows, 1, 1}, Data: data}
}

// TestMatMul pins the tiled product to VecDot on the same rounded
// activations, element for element, for every tile shape.
func TestMatMul(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, typ := range []quant.Type{quant.F32, quant.F16, quant.Q8_0, quant.Q4_0, quant.Q5_0, quant.Q4_K, quant.Q6_K} {
		cols := 512
		w := quantTensor(t, r, typ, cols, 77)
		w2 := quantTensor(t, r, typ, cols, 30)
		for _, n := range []int{1, 2, 5, 40} {
			x := randFloats(r, n*cols, 1)
			at := quant.VecDotType(typ)
			arow, _ := at.RowSize(cols)
			wrow, _ := typ.RowSize(cols)
			act := make([]byte, arow)
			want := func(w *backend.Tensor, i, row int) float32 {
				if err := quant.QuantizeActivations(at, x[i*cols:(i+1)*cols], act); err != nil {
					t.Fatal(err)
				}
				return quant.VecDot(typ, w.Data[row*wrow:(row+1)*wrow], act, cols)
			}
			if n >= packedMinRows && quant.PackedKernel(typ) {
				// A prompt-sized input runs through the tile kernel, which
				// quant pins to the generic twin (not to VecDot's lanes).
				want = packedWant(t, typ, x, n, cols)
			} else if n >= packedMinRows {
				// quant's prompt tiles (K-quants, and Q4_0 and Q8_0 at
				// the avx512 level) round as the generic twin, which
				// quant pins; here the whole tile is the reference.
				want = tileWant(t, typ, x, n, cols)
			}
			for _, threads := range []int{1, 3} {
				b := New(threads)
				dst := make([]float32, n*w.Rows())
				b.MatMul(dst, w, x, n)
				d1, d2 := make([]float32, n*w.Rows()), make([]float32, n*w2.Rows())
				b.MatMulMulti([][]float32{d1, d2}, []*backend.Tensor{w, w2}, x, n)
				b.Close()
				for i := range n {
					for row := range w.Rows() {
						v := want(w, i, row)
						if dst[i*w.Rows()+row] != v || d1[i*w.Rows()+row] != v {
							t.Fatalf("%v n=%d threads=%d: [%d,%d] = %v / multi %v, VecDot %v", typ, n, threads, i, row, dst[i*w.Rows()+row], d1[i*w.Rows()+row], v)
						}
					}
					for row := range w2.Rows() {
						if v := want(w2, i, row); d2[i*w2.Rows()+row] != v {
							t.Fatalf("%v n=%d: second output [%d,%d] = %v, want %v", typ, n, i, row, d2[i*w2.Rows()+row], v)
						}
					}
				}
			}
		}
	}
}

// packedWant returns the tile kernel's result for input row i and
// weight row row, as want in TestMatMul.
func packedWant(t *testing.T, typ quant.Type, x []float32, n, cols int) func(w *backend.Tensor, i, row int) float32 {
	at := quant.VecDotType(typ)
	arow, _ := at.RowSize(cols)
	wrow, _ := typ.RowSize(cols)
	act := make([]byte, n*arow)
	var p quant.PackedActs
	if !p.Reset(at, n, cols) {
		t.Fatalf("%v: tile kernel but no packing for %v", typ, at)
	}
	for i := range n {
		if err := quant.QuantizeActivations(at, x[i*cols:(i+1)*cols], act[i*arow:(i+1)*arow]); err != nil {
			t.Fatal(err)
		}
		p.PackRow(i, act[i*arow:])
	}
	var s quant.PackedScratch
	out := make([]float32, n)
	return func(w *backend.Tensor, i, row int) float32 {
		quant.VecDotPacked(typ, w.Data[row*wrow:(row+1)*wrow], wrow, 1, &p, out, 1, &s)
		return out[i]
	}
}

// tileWant returns quant.VecDotTile's result for input row i and weight
// row row, over all n input rows, as want in TestMatMul.
func tileWant(t *testing.T, typ quant.Type, x []float32, n, cols int) func(w *backend.Tensor, i, row int) float32 {
	at := quant.VecDotType(typ)
	arow, _ := at.RowSize(cols)
	wrow, _ := typ.RowSize(cols)
	act := make([]byte, n*arow)
	for i := range n {
		if err := quant.QuantizeActivations(at, x[i*cols:(i+1)*cols], act[i*arow:(i+1)*arow]); err != nil {
			t.Fatal(err)
		}
	}
	tiles := map[*backend.Tensor][]float32{}
	return func(w *backend.Tensor, i, row int) float32 {
		out, ok := tiles[w]
		if !ok {
			out = make([]float32, n*w.Rows())
			quant.VecDotTile(typ, w.Data, wrow, w.Rows(), act, arow, n, cols, out, w.Rows())
			tiles[w] = out
		}
		return out[i*w.Rows()+row]
	}
}

// naiveAttend is ggml's non-flash attention in float64: softmax over the
// positions a query sees, probabilities rounded to F16 for an F16 cache,
// with the optional window, soft-cap, sinks and gate of a.
func naiveAttend(q, gate []float32, kv *KV, pos []int32, a backend.Attention, sinks []float32) []float64 {
	hd, g := a.HeadDim, a.Heads/a.KVHeads
	k16, v16 := kv.F16()
	k32, v32 := kv.F32()
	dim := kv.Spec().Dim
	key := func(t, kvh, j int) float64 {
		if k16 != nil {
			return float64(quant.FP16ToFP32(k16[t*dim+kvh*hd+j]))
		}
		return float64(k32[t*dim+kvh*hd+j])
	}
	val := func(t, kvh, j int) float64 {
		if v16 != nil {
			return float64(quant.FP16ToFP32(v16[t*dim+kvh*hd+j]))
		}
		return float64(v32[t*dim+kvh*hd+j])
	}
	out := make([]float64, len(pos)*a.Heads*hd)
	for i, p := range pos {
		lo := 0
		if a.Window > 0 {
			lo = max(0, int(p)-a.Window+1)
		}
		for h := range a.Heads {
			kvh := h / g
			qv := q[(i*a.Heads+h)*hd : (i*a.Heads+h+1)*hd]
			s := make([]float64, p+1)
			mx := math.Inf(-1)
			for t := lo; t < len(s); t++ {
				for j, v := range qv {
					if k16 != nil {
						v = quant.FP16ToFP32(quant.FP32ToFP16(v))
					}
					s[t] += float64(v) * key(t, kvh, j)
				}
				s[t] *= float64(a.Scale)
				if a.SoftCap > 0 {
					s[t] = float64(a.SoftCap) * math.Tanh(s[t]/float64(a.SoftCap))
				}
				mx = math.Max(mx, s[t])
			}
			if sinks != nil {
				mx = math.Max(mx, float64(sinks[h]))
			}
			var sum float64
			for t := lo; t < len(s); t++ {
				s[t] = math.Exp(s[t] - mx)
				sum += s[t]
			}
			if sinks != nil {
				sum += math.Exp(float64(sinks[h]) - mx)
			}
			o := out[(i*a.Heads+h)*hd:][:hd]
			for t := lo; t < len(s); t++ {
				pr := s[t] / sum
				if v16 != nil {
					pr = float64(quant.FP16ToFP32(quant.FP32ToFP16(float32(pr))))
				}
				for j := range hd {
					o[j] += pr * val(t, kvh, j)
				}
			}
			if a.Gated {
				gv := gate[(i*a.Heads+h)*hd:][:hd]
				for j := range o {
					o[j] /= 1 + math.Exp(-float64(gv[j]))
				}
			}
		}
	}
	return out
}

// attnVariants are the optional parts of Attention, alone and together.
var attnVariants = []struct {
	name    string
	window  int
	softCap float32
	sinks   bool
	gated   bool
}{
	{name: "plain"},
	{name: "window7", window: 7},
	{name: "window100", window: 100},
	{name: "softcap", softCap: 0.7},
	{name: "sinks", sinks: true},
	{name: "gated", gated: true},
	{name: "all", window: 33, softCap: 1.5, sinks: true, gated: true},
}

func TestAttend(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		heads, kvHeads, hd int
		ctx, start, n      int
	}{
		{4, 2, 16, 64, 0, 9},      // a short prompt
		{14, 2, 64, 300, 0, 150},  // prompt over several key and query blocks
		{14, 2, 64, 300, 150, 1},  // decode after it (heads split across jobs)
		{8, 8, 24, 200, 100, 3},   // MHA, head size not a multiple of 8 (generic kernels)
		{8, 2, 32, 6000, 5995, 5}, // long context: the query block shrinks
		{6, 3, 32, 100, 97, 3},    // rows reaching the end of the cache
	} {
		for _, typ := range []quant.Type{quant.F16, quant.F32} {
			for _, va := range attnVariants {
				if va.name != "plain" && tc.ctx > 1000 {
					continue // the long case is about block sizes, not variants
				}
				name := fmt.Sprintf("%v/h%d-kv%d-d%d/at%d+%d/%s", typ, tc.heads, tc.kvHeads, tc.hd, tc.start, tc.n, va.name)
				t.Run(name, func(t *testing.T) {
					a := backend.Attention{Heads: tc.heads, KVHeads: tc.kvHeads, HeadDim: tc.hd, Scale: float32(1 / math.Sqrt(float64(tc.hd))),
						Window: va.window, SoftCap: va.softCap, Gated: va.gated}
					dim := tc.kvHeads * tc.hd
					kv, err := NewKV(backend.KVSpec{Type: typ, Context: tc.ctx, Dim: dim})
					if err != nil {
						t.Fatal(err)
					}
					end := tc.start + tc.n
					all := make([]int32, end)
					for i := range all {
						all[i] = int32(i)
					}
					kv.Store(all, randFloats(r, end*dim, 1), randFloats(r, end*dim, 1))
					pos := all[tc.start:]
					q := randFloats(r, tc.n*tc.heads*tc.hd, 1)
					var gate, sinks []float32
					if va.gated {
						gate = randFloats(r, len(q), 2)
					}
					if va.sinks {
						sinks = randFloats(r, tc.heads, 2)
					}
					want := naiveAttend(q, gate, kv, pos, a, sinks)
					// Probabilities rounded to F16 flip where float32 and float64
					// land on either side of a rounding boundary.
					tol := 2e-5
					if typ == quant.F16 {
						tol = 3e-4
						if va.window > 0 && va.window < 16 {
							// Few keys: each flipped probability weighs more.
							tol = 8e-4
						}
					}
					withImpl(t, func(t *testing.T) {
						var first []float32
						for _, threads := range []int{1, 2, 7} {
							b := New(threads)
							got := make([]float32, len(q))
							b.Attend(got, q, gate, kv, pos, &a, sinks)
							// Each row alone gives the same bits as in the batch.
							row := make([]float32, tc.heads*tc.hd)
							var lastGate []float32
							if gate != nil {
								lastGate = gate[len(gate)-len(row):]
							}
							b.Attend(row, q[len(q)-len(row):], lastGate, kv, pos[len(pos)-1:], &a, sinks)
							b.Close()
							for i := range got {
								if d := math.Abs(float64(got[i]) - want[i]); d > tol*(1+math.Abs(want[i])) {
									t.Fatalf("threads %d: element %d = %v, want %v", threads, i, got[i], want[i])
								}
							}
							for i, v := range row {
								if v != got[len(got)-len(row)+i] {
									t.Fatalf("threads %d: last row alone differs at %d: %v vs %v", threads, i, v, got[len(got)-len(row)+i])
								}
							}
							if first == nil {
								first = got
							} else {
								for i := range got {
									if got[i] != first[i] {
										t.Fatalf("threads %d: element %d = %v, with 1 thread %v", threads, i, got[i], first[i])
									}
								}
							}
						}
					})
				})
			}
		}
	}
}

func TestRoPETableReuse(t *testing.T) {
	b := New(1)
	defer b.Close()
	r := &backend.Rope{Mode: backend.RopeNeoX, Dims: 16, FreqBase: 10000, FreqScale: 1, AttnFactor: 1}
	rng := rand.New(rand.NewPCG(9, 10))
	x := randFloats(rng, 3*2*16, 1)
	rotate := func(b *Backend, pos []int32, r *backend.Rope) []float32 {
		y := append([]float32(nil), x...)
		b.RoPE(y, pos, 2, 16, r)
		return y
	}
	fresh := func(pos []int32, r *backend.Rope) []float32 {
		nb := New(1)
		defer nb.Close()
		return rotate(nb, pos, r)
	}
	seqs := [][]int32{{0, 1, 2}, {0, 1, 2}, {5, 6, 7}, {0, 1, 2}}
	for _, pos := range seqs {
		got, want := rotate(b, pos, r), fresh(pos, r)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("pos %v: element %d = %v, fresh table %v", pos, i, got[i], want[i])
			}
		}
	}
	r2 := *r
	r2.FreqBase = 500000
	if got, want := rotate(b, seqs[0], &r2), fresh(seqs[0], &r2); got[5] != want[5] {
		t.Fatalf("changed base: %v, want %v", got[5], want[5])
	}
}

func TestReadBandwidth(t *testing.T) {
	rate, err := ReadBandwidth(context.Background(), 8<<20, 2, 2)
	if err != nil || rate <= 0 {
		t.Fatalf("rate %v, err %v", rate, err)
	}
	b := make([]byte, 4096)
	for i := range b {
		b[i] = byte(i * 7)
	}
	if readSum(b) != readSumGeneric(b) {
		t.Errorf("readSum %d, generic %d", readSum(b), readSumGeneric(b))
	}
	if _, err := ReadBandwidth(context.Background(), 10, 1, 1); err == nil {
		t.Error("tiny buffer accepted")
	}
}

func TestSwiGLUAndSoftmaxExp(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	gate := randFloats(r, 1000, 4)
	gate = append(gate, 0, -0.0, 90, -90, 200, -200, 1e-30, 88.5, -87.5, 20, -20)
	up := randFloats(r, len(gate), 1)
	want := make([]float32, len(gate))
	for i, g := range gate {
		want[i] = float32(float64(g) / (1 + math.Exp(-float64(g))) * float64(up[i]))
	}
	scores := randFloats(r, 333, 5)
	mx := float32(7)
	withImpl(t, func(t *testing.T) {
		got := make([]float32, len(gate))
		swiglu(got, gate, up)
		for i := range got {
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-6*math.Abs(float64(want[i]))+1e-30 { // the vector exp clamps its input, so gate < -87 gives ~1e-37, not 1e-38
				t.Fatalf("swiglu(%v, %v) = %v, want %v", gate[i], up[i], got[i], want[i])
			}
		}
		s := append([]float32(nil), scores...)
		sum := softmaxExp(s, mx)
		var wantSum float64
		for i, v := range scores {
			e := math.Exp(float64(v - mx))
			wantSum += e
			if d := math.Abs(float64(s[i]) - e); d > 1e-6*e {
				t.Fatalf("exp(%v-%v) = %v, want %v", v, mx, s[i], e)
			}
		}
		if math.Abs(sum-wantSum) > 1e-6*wantSum {
			t.Fatalf("sum %v, want %v", sum, wantSum)
		}
	})
}

// BenchmarkAttendDecode is one decode step's attention for one layer of
// a Qwen2.5-0.5B shape at depth 2048.
func BenchmarkAttendDecode(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			a := backend.Attention{Heads: 14, KVHeads: 2, HeadDim: 64, Scale: 0.125}
			const depth = 2048
			dim := a.KVHeads * a.HeadDim
			kv, _ := NewKV(backend.KVSpec{Type: quant.F16, Context: depth + 1, Dim: dim})
			pos := make([]int32, depth+1)
			for i := range pos {
				pos[i] = int32(i)
			}
			kv.Store(pos, randFloats(r, len(pos)*dim, 1), randFloats(r, len(pos)*dim, 1))
			q := randFloats(r, a.Heads*a.HeadDim, 1)
			dst := make([]float32, len(q))
			be := New(threads)
			defer be.Close()
			b.ReportAllocs()
			for range b.N {
				be.Attend(dst, q, nil, kv, pos[depth:], &a, nil)
			}
		})
	}
}
