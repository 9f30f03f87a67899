package gputwin

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/internal/gpucommon"
	"github.com/churon/churon/engine/quant"
)

// Kernels checks every kernel of a GPU backend against its CPU twin (the
// CPU backend), with the same inputs on every backend; only the sizes and
// the bars where a backend's arithmetic is not the CPU's differ:
//
//   - activations are rounded to the CPU's bytes exactly;
//   - matrix products of inputs whose float arithmetic is exact (scales
//     of 1, small integers) equal the CPU's bit for bit — the integer
//     sums are the same — and so do the K-quants' products of any input
//     (their superblocks add up in the CPU's order); products of random
//     inputs of the other types are within 1e-6 (relative L2);
//   - RMSNorm, RoPE, the KV store, the element-wise kernels and the row
//     copies equal the CPU's bit for bit (same operations, same order),
//     but for those a backend holds to NormULP and ExpULP;
//   - attention is within 1e-5, almost every value the CPU's exactly.
type Kernels[D backend.Device] struct {
	// Open opens a device for a test; env are variables set for it (the
	// emulator's).
	Open func(t testing.TB, env ...string) D
	// Check names the device in failures.
	Check Check
	// Round rounds rows×cols values at x into format a on the device and
	// returns the rounded bytes.
	Round func(t *testing.T, d D, a gpucommon.Act, x backend.Buf, rows, cols int) []byte
	// ReverseEnv is the emulator's variable and value that run blocks and
	// threads in reverse order.
	ReverseEnv [2]string

	// The sizes checked: the matrices (rows, cols) and input rows of the
	// products; RMSNorm's widths; the head sizes attended, the context of
	// a decode step and the rows of a prefill; the context attended in
	// chunks; the values of the element-wise kernels; the input rows of
	// the repeatability run.
	MatMulShapes   [][2]int
	MatMulRows     []int
	NormDims       []int
	HeadDims       []int
	DecodeContext  int
	PrefillRows    int
	ChunkContext   int
	ElementwiseLen int
	RepeatRows     int

	// NormULP is RMSNorm's bar in ulps where its sums are not the CPU's
	// (float64 there); 0: bit for bit.
	NormULP int64
	// ExpULP is the bar in ulps of the kernels that call exp or tanh where
	// the device takes them in float (the CPU in float64); 0: bit for bit.
	// Soft-capped attention is then held to its tolerance only.
	ExpULP int64
}

// Run runs every check as a subtest.
func (k *Kernels[D]) Run(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func(*testing.T)
	}{
		{"Quantize", k.quantize}, {"MatMul", k.matMul}, {"MatMulShared", k.matMulShared}, {"RMSNorm", k.rmsNorm},
		{"RoPE", k.rope}, {"StoreKV", k.storeKV}, {"Attend", k.attend}, {"AttendChunks", k.attendChunks},
		{"Elementwise", k.elementwise}, {"Rows", k.rows}, {"WeightSlice", k.weightSlice}, {"Repeatable", k.repeatable},
	} {
		t.Run(c.name, c.f)
	}
}

func (k *Kernels[D]) twin(t *testing.T) *Twin[D] { return New(t, k.Open(t)) }

// mustULP holds a to b within n ulps, or bit for bit when n is 0.
func (k *Kernels[D]) mustULP(t *testing.T, what string, a, b []float32, n int64) {
	t.Helper()
	if n == 0 {
		k.Check.MustEqual(t, what, a, b)
	} else {
		k.Check.MustULP(t, what, a, b, n)
	}
}

// activationInputs are rows that exercise the rounding: random values
// of several magnitudes, a block of zeros, blocks whose largest value is
// negative, ties of magnitude with opposite signs, subnormal scales.
func activationInputs(r *rand.Rand, rows, cols int) []float32 {
	x := Randn(r, rows*cols, 1)
	for i := range x {
		switch i / 256 % 5 {
		case 1:
			x[i] *= 1e-3
		case 2:
			x[i] *= 300
		}
	}
	clear(x[32:64]) // a zero block of 32
	if len(x) >= 768 {
		clear(x[512:768]) // and of 256
	}
	x[64] = -9 // largest magnitude negative
	x[65], x[66] = 7, -7
	x[300], x[301] = -5, 5 // a tie of magnitude: the first wins
	for i := 128; i < 160; i++ {
		x[i] = float32(i-144) * 1e-41 // subnormal
	}
	return x
}

func (k *Kernels[D]) quantize(t *testing.T) {
	d := k.Open(t)
	r := rand.New(rand.NewPCG(1, 2))
	const rows, cols = 5, 1024
	x := activationInputs(r, rows, cols)
	xb, err := d.Alloc(len(x))
	if err != nil {
		t.Fatal(err)
	}
	d.Write(xb, x)
	for a := range gpucommon.NumActs {
		typ := gpucommon.ActTypes[a]
		rb := a.RowBytes(cols)
		got := k.Round(t, d, a, xb, rows, cols)
		want := make([]byte, rows*rb)
		for i := range rows {
			if err := quant.QuantizeActivations(typ, x[i*cols:(i+1)*cols], want[i*rb:(i+1)*rb]); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, want) {
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%v: byte %d (row %d, block %d): %s %#02x, CPU %#02x", typ, i, i/rb, i%rb/typ.TypeSize(), k.Check.Name, got[i], want[i])
					break
				}
			}
		}
	}
}

// matmulTypes are the weight types the devices multiply.
var matmulTypes = []quant.Type{quant.F32, quant.F16, quant.BF16, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1,
	quant.Q8_0, quant.Q4_K, quant.Q5_K, quant.Q6_K}

func kQuant(t quant.Type) bool { return t == quant.Q4_K || t == quant.Q5_K || t == quant.Q6_K }

// exactTensor makes weights whose products with exactActivations are
// exact in float32: every scale 1, integer mins, small quants.
func exactTensor(r *rand.Rand, typ quant.Type, rows, cols int) *backend.Tensor {
	rb, _ := typ.RowSize(cols)
	data := make([]byte, rb*rows)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	one := quant.FP32ToFP16(1)
	put16 := func(b []byte, v uint16) { binary.LittleEndian.PutUint16(b, v) }
	bs, ts := typ.BlockSize(), typ.TypeSize()
	switch typ {
	case quant.F32:
		for i := 0; i < rows*cols; i++ {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(r.IntN(17)-8)))
		}
	case quant.F16:
		for i := 0; i < rows*cols; i++ {
			put16(data[2*i:], quant.FP32ToFP16(float32(r.IntN(17)-8)))
		}
	case quant.BF16:
		for i := 0; i < rows*cols; i++ {
			put16(data[2*i:], quant.FP32ToBF16(float32(r.IntN(17)-8)))
		}
	default:
		for b := 0; b < rows*cols/bs; b++ {
			blk := data[b*ts : (b+1)*ts]
			switch typ {
			case quant.Q4_0, quant.Q5_0:
				put16(blk, one)
			case quant.Q4_1, quant.Q5_1:
				put16(blk, one)
				put16(blk[2:], quant.FP32ToFP16(float32(r.IntN(9)-4)))
			case quant.Q8_0:
				put16(blk, one)
				for j := 2; j < 34; j++ {
					blk[j] = byte(int8(r.IntN(17) - 8))
				}
			case quant.Q4_K, quant.Q5_K:
				put16(blk, one)
				put16(blk[2:], one)
			case quant.Q6_K:
				for j := 192; j < 208; j++ {
					blk[j] = byte(int8(r.IntN(9) - 4))
				}
				put16(blk[208:], one)
			}
		}
	}
	return &backend.Tensor{Name: "w", Type: typ, Ne: [4]int{cols, rows, 1, 1}, Data: data}
}

// exactActivations are small integers with 127 first in every block of
// 32, so that every rounding format's scale is ±1 and its quants the
// values themselves.
func exactActivations(r *rand.Rand, n, cols int) []float32 {
	x := make([]float32, n*cols)
	for i := range x {
		x[i] = float32(r.IntN(15) - 7)
		if i%32 == 0 {
			x[i] = 127
		}
	}
	return x
}

func (k *Kernels[D]) matMul(t *testing.T) {
	tw := k.twin(t)
	r := rand.New(rand.NewPCG(3, 4))
	for _, typ := range matmulTypes {
		for _, sh := range k.MatMulShapes {
			rows, cols := sh[0], sh[1]
			for _, n := range k.MatMulRows {
				for _, exact := range []bool{true, false} {
					name := fmt.Sprintf("%v/%dx%d/n=%d/exact=%v", typ, rows, cols, n, exact)
					var w *backend.Tensor
					var x []float32
					if exact {
						w, x = exactTensor(r, typ, rows, cols), exactActivations(r, n, cols)
					} else {
						w, x = Quantized(t, r, typ, rows, cols), Randn(r, n*cols, 1)
					}
					wp := tw.Weight(w)
					xp, y := tw.Buf(x), tw.Zeros(n*rows)
					tw.Both(func(d backend.Device, s int) { d.MatMul(y.On(s), wp.On(s), xp.On(s), n) })
					g, c := tw.Read(y)
					if exact || kQuant(typ) {
						// The K-quants' superblocks add up in the CPU's order.
						k.Check.MustEqual(t, name, g, c)
					} else {
						k.Check.MustClose(t, name, g, c, 1e-6)
					}
				}
			}
		}
	}
}

// matMulShared: MatMulMulti and MatMulEach give what MatMul gives, with
// weights of several rounding formats on one input.
func (k *Kernels[D]) matMulShared(t *testing.T) {
	d := k.Open(t)
	r := rand.New(rand.NewPCG(5, 6))
	const cols = 512
	types := []quant.Type{quant.Q4_K, quant.Q5_0, quant.Q6_K, quant.Q4_1, quant.F16, quant.F32}
	var ws []backend.Weight
	for _, typ := range types {
		w, err := d.Upload(Quantized(t, r, typ, 40, cols))
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	for _, n := range []int{1, 4, 20} {
		x := Randn(r, n*cols, 1)
		xb, _ := d.Alloc(n * cols)
		d.Write(xb, x)
		one := make([][]float32, len(ws))
		for i, w := range ws {
			y, _ := d.Alloc(n * 40)
			d.MatMul(y, w, xb, n)
			one[i] = make([]float32, n*40)
			d.Read(one[i], y)
		}
		multi := make([]backend.Buf, len(ws))
		for i := range multi {
			multi[i], _ = d.Alloc(n * 40)
		}
		d.MatMulMulti(multi, ws, xb, n)
		each := make([]backend.Buf, len(ws))
		xs := make([]backend.Buf, len(ws))
		ns := make([]int, len(ws))
		for i := range each {
			each[i], _ = d.Alloc(n * 40)
			xs[i], ns[i] = xb, n
		}
		d.MatMulEach(each, ws, xs, ns)
		got := make([][2][]float32, len(ws))
		for i := range ws {
			got[i] = [2][]float32{make([]float32, n*40), make([]float32, n*40)}
			d.Read(got[i][0], multi[i])
			d.Read(got[i][1], each[i])
		}
		if err := d.Sync(); err != nil {
			t.Fatal(err)
		}
		for i := range ws {
			k.Check.MustEqual(t, fmt.Sprintf("MatMulMulti %v n=%d", types[i], n), got[i][0], one[i])
			k.Check.MustEqual(t, fmt.Sprintf("MatMulEach %v n=%d", types[i], n), got[i][1], one[i])
		}
	}
}

func (k *Kernels[D]) rmsNorm(t *testing.T) {
	tw := k.twin(t)
	r := rand.New(rand.NewPCG(7, 8))
	for _, dim := range k.NormDims {
		for _, rows := range []int{1, 3, 17} {
			x := Randn(r, rows*dim, 3)
			w := tw.Weight(Vector("norm", Randn(r, dim, 1)))
			xp, y := tw.Buf(x), tw.Zeros(rows*dim)
			tw.Both(func(d backend.Device, s int) { d.RMSNorm(y.On(s), xp.On(s), w.On(s), 1e-6) })
			g, c := tw.Read(y)
			k.mustULP(t, fmt.Sprintf("rmsnorm %dx%d", rows, dim), g, c, k.NormULP)
			// in place
			tw.Both(func(d backend.Device, s int) { d.RMSNorm(xp.On(s), xp.On(s), w.On(s), 1e-5) })
			g, c = tw.Read(xp)
			k.mustULP(t, fmt.Sprintf("rmsnorm in place %dx%d", rows, dim), g, c, k.NormULP)
		}
	}
}

func (k *Kernels[D]) rope(t *testing.T) {
	tw := k.twin(t)
	r := rand.New(rand.NewPCG(9, 10))
	ff := make([]float32, 32)
	for i := range ff {
		ff[i] = 1 + float32(i)/8
	}
	ropes := map[string]backend.Rope{
		"normal":  {Mode: backend.RopeNormal, Dims: 64, FreqBase: 10000, FreqScale: 1, AttnFactor: 1},
		"neox":    {Mode: backend.RopeNeoX, Dims: 64, FreqBase: 1e6, FreqScale: 1, AttnFactor: 1},
		"partial": {Mode: backend.RopeNeoX, Dims: 32, FreqBase: 10000, FreqScale: 1, AttnFactor: 1},
		"yarn": {Mode: backend.RopeNeoX, Dims: 64, FreqBase: 150000, FreqScale: 0.25, ExtFactor: 1, AttnFactor: 1,
			BetaFast: 32, BetaSlow: 1, OrigContext: 4096},
		"factors": {Mode: backend.RopeNormal, Dims: 64, FreqBase: 500000, FreqScale: 1, AttnFactor: 1, FreqFactors: ff},
	}
	for name, rp := range ropes {
		for _, pos := range [][]int32{{0}, {4095}, {3, 4, 5, 6, 7}, {9, 2, 100, 7}} {
			const heads, hd = 3, 64
			x := Randn(r, len(pos)*heads*hd, 1)
			xp := tw.Buf(x)
			tw.Both(func(d backend.Device, s int) {
				d.RoPE(xp.On(s), pos, heads, hd, &rp)
				d.RoPE(xp.On(s), pos, heads, hd, &rp) // the table again
			})
			g, c := tw.Read(xp)
			k.Check.MustEqual(t, fmt.Sprintf("rope %s %v", name, pos), g, c)
		}
	}
}

// kvRows reads every stored row of both caches.
func kvRows(t *testing.T, kv backend.KV, ctx int) []byte {
	t.Helper()
	k, err := kv.AppendRows(nil, false, 0, ctx)
	if err != nil {
		t.Fatal(err)
	}
	v, err := kv.AppendRows(nil, true, 0, ctx)
	if err != nil {
		t.Fatal(err)
	}
	return append(k, v...)
}

func (k *Kernels[D]) storeKV(t *testing.T) {
	tw := k.twin(t)
	r := rand.New(rand.NewPCG(11, 12))
	for _, typ := range []quant.Type{quant.F16, quant.F32, quant.Q8_0} {
		spec := backend.KVSpec{Type: typ, Context: 40, Dim: 128}
		gk, err := tw.G.NewKV(spec)
		if err != nil {
			t.Fatal(err)
		}
		ck, _ := tw.C.NewKV(spec)
		pos := []int32{0, 1, 2, 39, 20}
		kv, vv := Randn(r, len(pos)*128, 2), Randn(r, len(pos)*128, 0.01)
		kv[3] = 65520 // F16 overflows to infinity
		kv[4] = 1e-7  // an F16 subnormal
		kp, vp := tw.Buf(kv), tw.Buf(vv)
		tw.G.StoreKV(gk, pos, kp.G, vp.G)
		tw.C.StoreKV(ck, pos, kp.C, vp.C)
		if err := tw.G.Sync(); err != nil {
			t.Fatal(err)
		}
		if g, c := kvRows(t, gk, 40), kvRows(t, ck, 40); !bytes.Equal(g, c) {
			t.Errorf("%v: the stored rows differ", typ)
		}
		// rows set from the CPU's bytes read back the same
		rows := kvRows(t, ck, 40)
		rs := spec.RowSize()
		if err := gk.SetRows(false, 0, rows[:40*rs]); err != nil {
			t.Fatal(err)
		}
		if err := gk.SetRows(true, 0, rows[40*rs:]); err != nil {
			t.Fatal(err)
		}
		if g := kvRows(t, gk, 40); !bytes.Equal(g, rows) {
			t.Errorf("%v: SetRows then AppendRows changed the rows", typ)
		}
		gk.Release()
		gk.Release()
	}
}

// seq is the positions p0 … p0+n-1.
func seq(p0, n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(p0 + i)
	}
	return p
}

func (k *Kernels[D]) attend(t *testing.T) {
	tw := k.twin(t)
	r := rand.New(rand.NewPCG(13, 14))
	type tcase struct {
		name string
		a    backend.Attention
		pos  []int32
		ctx  int
	}
	var cases []tcase
	for _, hd := range k.HeadDims {
		a := backend.Attention{Heads: 4, KVHeads: 2, HeadDim: hd, Scale: float32(1 / math.Sqrt(float64(hd)))}
		cases = append(cases,
			tcase{fmt.Sprintf("decode hd=%d", hd), a, []int32{int32(k.DecodeContext - 1)}, k.DecodeContext},
			tcase{fmt.Sprintf("prefill hd=%d", hd), a, seq(0, k.PrefillRows), k.PrefillRows})
	}
	base := backend.Attention{Heads: 8, KVHeads: 2, HeadDim: 64, Scale: 0.125}
	with := func(f func(*backend.Attention)) backend.Attention { a := base; f(&a); return a }
	cases = append(cases,
		tcase{"window", with(func(a *backend.Attention) { a.Window = 16 }), seq(10, 40), 50},
		tcase{"softcap", with(func(a *backend.Attention) { a.SoftCap = 3 }), seq(0, 20), 20},
		tcase{"sinks", with(func(a *backend.Attention) { a.Sinks = true }), seq(5, 9), 14},
		tcase{"gated", with(func(a *backend.Attention) { a.Gated = true }), seq(0, 12), 12},
		tcase{"all", with(func(a *backend.Attention) { a.Window, a.SoftCap, a.Sinks, a.Gated = 8, 30, true, true }), seq(3, 30), 33},
		tcase{"mha", backend.Attention{Heads: 4, KVHeads: 4, HeadDim: 32, Scale: 0.2}, seq(0, 5), 5},
		tcase{"batch out of order", base, []int32{7, 3, 9}, 10},
	)
	for _, typ := range []quant.Type{quant.F16, quant.F32, quant.Q8_0} {
		for _, tc := range cases {
			a := tc.a
			dim := a.KVHeads * a.HeadDim
			spec := backend.KVSpec{Type: typ, Context: tc.ctx, Dim: dim}
			gk, err := tw.G.NewKV(spec)
			if err != nil {
				t.Fatal(err)
			}
			ck, _ := tw.C.NewKV(spec)
			all := seq(0, tc.ctx)
			kp, vp := tw.Buf(Randn(r, tc.ctx*dim, 1)), tw.Buf(Randn(r, tc.ctx*dim, 1))
			tw.G.StoreKV(gk, all, kp.G, vp.G)
			tw.C.StoreKV(ck, all, kp.C, vp.C)
			n := len(tc.pos)
			qd := a.Heads * a.HeadDim
			q, out := tw.Buf(Randn(r, n*qd, 1)), tw.Zeros(n*qd)
			var in [2]backend.AttendInputs
			if a.Gated {
				gp := tw.Buf(Randn(r, n*qd, 2))
				in[0].Gate, in[1].Gate = gp.G, gp.C
			}
			if a.Sinks {
				s := tw.Weight(Vector("sinks", Randn(r, a.Heads, 1)))
				in[0].Sinks, in[1].Sinks = s.G, s.C
			}
			tw.G.Attend(out.G, q.G, gk, tc.pos, &a, in[0])
			tw.C.Attend(out.C, q.C, ck, tc.pos, &a, in[1])
			g, c := tw.Read(out)
			if a.SoftCap > 0 && k.ExpULP > 0 {
				// tanh in float against float64 (the CPU) moves scores by
				// an ulp, which an F32 or Q8_0 cache's probabilities keep:
				// only the tolerance holds.
				k.Check.MustClose(t, fmt.Sprintf("%v %s", typ, tc.name), g, c, 1e-5)
			} else {
				k.mustAttend(t, fmt.Sprintf("%v %s", typ, tc.name), g, c)
			}
			gk.Release()
		}
	}
}

// mustAttend holds attention to the CPU's bits where the device follows
// the CPU's float operations step for step; exp and tanh are each side's
// own, and a softmax's wide sum may be float64 on the CPU and a float pair
// on the device, which leaves the last bit of a probability to differ now
// and then, so the bar is 1e-5 (relative L2) with almost every value the
// CPU's exactly.
func (k *Kernels[D]) mustAttend(t *testing.T, what string, g, c []float32) {
	t.Helper()
	k.Check.MustClose(t, what, g, c, 1e-5)
	same, _ := Identical(g, c)
	t.Logf("%s: %d of %d values bit-identical", what, same, len(c))
	if same < len(c)*99/100 {
		t.Errorf("%s: only %d of %d values equal the CPU's bit for bit", what, same, len(c))
	}
}

// attendChunks: a prompt whose scores exceed the budget is attended in
// chunks of rows, with the same result.
func (k *Kernels[D]) attendChunks(t *testing.T) {
	tw := k.twin(t)
	r := rand.New(rand.NewPCG(15, 16))
	a := backend.Attention{Heads: 16, KVHeads: 4, HeadDim: 64, Scale: 0.125}
	ctx := k.ChunkContext
	dim := a.KVHeads * a.HeadDim
	spec := backend.KVSpec{Type: quant.F16, Context: ctx, Dim: dim}
	gk, _ := tw.G.NewKV(spec)
	ck, _ := tw.C.NewKV(spec)
	pos := seq(0, ctx)
	kp, vp := tw.Buf(Randn(r, ctx*dim, 1)), tw.Buf(Randn(r, ctx*dim, 1))
	tw.G.StoreKV(gk, pos, kp.G, vp.G)
	tw.C.StoreKV(ck, pos, kp.C, vp.C)
	q, out := tw.Buf(Randn(r, ctx*a.Heads*a.HeadDim, 1)), tw.Zeros(ctx*a.Heads*a.HeadDim)
	defer func(b int) { gpucommon.ScoreBudget = b }(gpucommon.ScoreBudget)
	gpucommon.ScoreBudget = a.Heads * ctx * 4 * 7 // seven rows a launch
	tw.G.Attend(out.G, q.G, gk, pos, &a, backend.AttendInputs{})
	tw.C.Attend(out.C, q.C, ck, pos, &a, backend.AttendInputs{})
	g, c := tw.Read(out)
	k.mustAttend(t, "chunked prefill", g, c)
}

func (k *Kernels[D]) elementwise(t *testing.T) {
	tw := k.twin(t)
	r := rand.New(rand.NewPCG(17, 18))
	n := k.ElementwiseLen
	gate := Randn(r, n, 4)
	gate[0], gate[1], gate[2] = -10, 10, -100 // GELU's ends
	up := Randn(r, n, 1)
	bias := Randn(r, 77, 1)
	ops := []struct {
		name string
		exp  bool // calls exp or tanh
		f    func(d backend.Device, dst, g, u backend.Buf, b backend.Weight)
	}{
		{"swiglu", false, func(d backend.Device, dst, g, u backend.Buf, _ backend.Weight) { d.SwiGLU(dst, g, u) }},
		{"geglu", false, func(d backend.Device, dst, g, u backend.Buf, _ backend.Weight) { d.GeGLU(dst, g, u) }},
		{"swiglu clamped", true, func(d backend.Device, dst, g, u backend.Buf, _ backend.Weight) { d.SwiGLUClamped(dst, g, u, 1.702, 7) }},
		{"add", false, func(d backend.Device, dst, g, u backend.Buf, _ backend.Weight) {
			d.CopyRows(dst, n, g, n, 1, n)
			d.Add(dst, u)
		}},
		{"add bias", false, func(d backend.Device, dst, g, u backend.Buf, b backend.Weight) {
			d.CopyRows(dst, n, g, n, 1, n)
			d.AddBias(dst.Slice(0, n-n%77), b)
		}},
		{"scale", false, func(d backend.Device, dst, g, u backend.Buf, _ backend.Weight) {
			d.CopyRows(dst, n, g, n, 1, n)
			d.Scale(dst, 0.37)
		}},
		{"softcap", true, func(d backend.Device, dst, g, u backend.Buf, _ backend.Weight) {
			d.CopyRows(dst, n, g, n, 1, n)
			d.SoftCap(dst, 30)
		}},
	}
	for _, op := range ops {
		gp, upp, dst := tw.Buf(gate), tw.Buf(up), tw.Zeros(n)
		b := tw.Weight(Vector("bias", bias))
		tw.Both(func(d backend.Device, s int) { op.f(d, dst.On(s), gp.On(s), upp.On(s), b.On(s)) })
		g, c := tw.Read(dst)
		if op.exp {
			k.mustULP(t, op.name, g, c, k.ExpULP)
		} else {
			k.Check.MustEqual(t, op.name, g, c)
		}
	}
}

func (k *Kernels[D]) rows(t *testing.T) {
	tw := k.twin(t)
	r := rand.New(rand.NewPCG(19, 20))
	const cols = 96
	src := tw.Buf(Randn(r, 10*cols, 1))
	// strided copies: a column block of a fused projection
	dst := tw.Zeros(10 * 40)
	tw.Both(func(d backend.Device, s int) { d.CopyRows(dst.On(s), 40, src.On(s).Slice(17, 10*cols), cols, 10, 40) })
	g, c := tw.Read(dst)
	k.Check.MustEqual(t, "copy rows", g, c)
	rows := []int32{3, 3, 9, 0, 5}
	gd := tw.Zeros(len(rows) * cols)
	tw.Both(func(d backend.Device, s int) { d.GatherRows(gd.On(s), src.On(s), cols, rows) })
	g, c = tw.Read(gd)
	k.Check.MustEqual(t, "gather rows", g, c)
	for _, scale := range [][]float32{nil, {0.5, -1, 2, 0.25, 3}} {
		acc := tw.Buf(Randn(r, 10*cols, 1))
		tw.Both(func(d backend.Device, s int) { d.ScatterAddRows(acc.On(s), gd.On(s), cols, rows, scale) })
		g, c = tw.Read(acc)
		k.Check.MustEqual(t, fmt.Sprintf("scatter add rows (scale %v)", scale), g, c)
	}
	// an embedding row of every matrix type, widened on the host
	for _, typ := range matmulTypes {
		table := Quantized(t, r, typ, 20, 256)
		w := tw.Weight(table)
		out := tw.Zeros(3 * 256)
		tw.Both(func(d backend.Device, s int) { d.Embed(out.On(s), w.On(s), []int32{19, 0, 7}) })
		g, c = tw.Read(out)
		k.Check.MustEqual(t, fmt.Sprintf("embed %v", typ), g, c)
	}
}

// weightSlice: an expert's matrix and bias row from 3-D and 2-D tensors
// multiply and add as the CPU's.
func (k *Kernels[D]) weightSlice(t *testing.T) {
	tw := k.twin(t)
	r := rand.New(rand.NewPCG(21, 22))
	const experts, rows, cols = 4, 24, 256
	w3 := Quantized(t, r, quant.Q4_K, experts*rows, cols)
	w3.Ne = [4]int{cols, rows, experts, 1}
	b2 := &backend.Tensor{Name: "b", Type: quant.F16, Ne: [4]int{rows, experts, 1, 1}, Data: make([]byte, 2*rows*experts)}
	for i := range rows * experts {
		binary.LittleEndian.PutUint16(b2.Data[2*i:], quant.FP32ToFP16(float32(r.NormFloat64())))
	}
	wp, bp := tw.Weight(w3), tw.Weight(b2)
	x := tw.Buf(Randn(r, 2*cols, 1))
	for e := range experts {
		y := tw.Zeros(2 * rows)
		tw.Both(func(d backend.Device, s int) {
			we, err := d.WeightSlice(wp.On(s), e)
			if err != nil {
				t.Fatal(err)
			}
			be, err := d.WeightSlice(bp.On(s), e)
			if err != nil {
				t.Fatal(err)
			}
			d.MatMul(y.On(s), we, x.On(s), 2)
			d.AddBias(y.On(s), be)
		})
		g, c := tw.Read(y)
		k.Check.MustClose(t, fmt.Sprintf("expert %d", e), g, c, 1e-6)
	}
}

// repeatable: the same inputs give the same bits twice; on the emulator
// the second run executes blocks (threadgroups) and threads in reverse
// order, which changes the result of any kernel that reads what another
// thread writes without a barrier.
func (k *Kernels[D]) repeatable(t *testing.T) {
	run := func(env ...string) [][]float32 {
		d := k.Open(t, env...)
		defer d.Close()
		r := rand.New(rand.NewPCG(23, 24))
		var out [][]float32
		read := func(b backend.Buf) {
			v := make([]float32, b.Len())
			d.Read(v, b)
			out = append(out, v)
		}
		nx := k.RepeatRows
		x, _ := d.Alloc(nx * 512)
		d.Write(x, Randn(r, nx*512, 1))
		for _, typ := range matmulTypes {
			w, err := d.Upload(Quantized(t, r, typ, 33, 512))
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{1, nx} {
				y, _ := d.Alloc(n * 33)
				d.MatMul(y, w, x, n)
				read(y)
			}
		}
		a := backend.Attention{Heads: 4, KVHeads: 2, HeadDim: 64, Scale: 0.125, Sinks: true, SoftCap: 20}
		kv, _ := d.NewKV(backend.KVSpec{Type: quant.F16, Context: 64, Dim: 128})
		pos := seq(0, 64)
		kb, _ := d.Alloc(64 * 128)
		d.Write(kb, Randn(r, 64*128, 1))
		d.StoreKV(kv, pos, kb, kb)
		sinks, _ := d.Upload(Vector("s", Randn(r, 4, 1)))
		q, _ := d.Alloc(64 * 256)
		d.Write(q, Randn(r, 64*256, 1))
		o, _ := d.Alloc(64 * 256)
		d.Attend(o, q, kv, pos, &a, backend.AttendInputs{Sinks: sinks})
		read(o)
		nw, _ := d.Upload(Vector("n", Randn(r, 512, 1)))
		d.RMSNorm(x, x, nw, 1e-5)
		read(x)
		if err := d.Sync(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	a := run()
	b := run(k.ReverseEnv[:]...)
	for i := range a {
		k.Check.MustEqual(t, fmt.Sprintf("result %d", i), b[i], a[i])
	}
}
