package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// vecDotTypes are the weight types VecDot supports.
var vecDotTypes = []Type{F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4,
	Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS}

func mustQuantize(t testing.TB, typ Type, x []float32) []byte {
	t.Helper()
	size, _ := typ.RowSize(len(x))
	b := make([]byte, size)
	if err := Quantize(typ, x, b); err != nil {
		t.Fatalf("quantize %v: %v", typ, err)
	}
	return b
}

// weightRows returns count random rows of n weights of typ, pad zero
// bytes after each: the rows start stride bytes apart.
func weightRows(tb testing.TB, r *rand.Rand, typ Type, n, count, pad int) (rows []byte, rowSize, stride int) {
	rowSize, _ = typ.RowSize(n)
	stride = rowSize + pad
	rows = make([]byte, count*stride)
	for i := range count {
		copy(rows[i*stride:], mustQuantize(tb, typ, normalData(r, n, 0.05)))
	}
	return rows, rowSize, stride
}

// streamRows is total bytes' worth of typ rows of n values (64 distinct
// rows, repeated), for benchmarks that read weights from memory or a
// cache level: the rows, the row size and how many rows there are.
func streamRows(tb testing.TB, r *rand.Rand, typ Type, n, total int) (rows []byte, wrow, nRows int) {
	distinct, wrow, _ := weightRows(tb, r, typ, n, 64, 0)
	nRows = total / wrow
	rows = make([]byte, nRows*wrow)
	for i := 0; i < len(rows); i += len(distinct) {
		copy(rows[i:], distinct)
	}
	return rows, wrow, nRows
}

// actRows returns count random rows of n activations quantized to at as
// the backend quantizes them (QuantizeActivations), pad zero bytes after
// each: the rows start stride bytes apart.
func actRows(tb testing.TB, r *rand.Rand, at Type, n, count, pad int) (acts []byte, rowSize, stride int) {
	rowSize, _ = at.RowSize(n)
	stride = rowSize + pad
	acts = make([]byte, count*stride)
	for i := range count {
		if err := QuantizeActivations(at, normalData(r, n, 1), acts[i*stride:i*stride+rowSize]); err != nil {
			tb.Fatal(err)
		}
	}
	return acts, rowSize, stride
}

func mustDequantize(t testing.TB, typ Type, b []byte, n int) []float32 {
	t.Helper()
	y := make([]float32, n)
	if err := Dequantize(typ, b, y); err != nil {
		t.Fatalf("dequantize %v: %v", typ, err)
	}
	return y
}

// dot64 returns Σ a·b and Σ|a·b| in float64.
func dot64(a, b []float32) (dot, mag float64) {
	for i := range a {
		p := float64(a[i]) * float64(b[i])
		dot += p
		mag += math.Abs(p)
	}
	return dot, mag
}

// q81Correction accounts for Q8_1's s field: ggml takes a block's min
// term as m·s, with s = d·Σq rounded to a half float when the activations
// were quantized, rather than m·Σ(dequantized activations). It returns
// Σ m·(s − Σ ad) over the blocks (0 for other activation types).
func q81Correction(w Type, wq, aq []byte, ad []float32) float64 {
	if VecDotType(w) != Q8_1 {
		return 0
	}
	var c float64
	for b := 0; b < len(ad)/32; b++ {
		m := float64(fp16(wq[b*w.TypeSize()+2:]))
		s := float64(fp16(aq[36*b+2:]))
		var sum float64
		for _, v := range ad[32*b : 32*b+32] {
			sum += float64(v)
		}
		c += m * (s - sum)
	}
	return c
}

// TestVecDot compares VecDot on quantized rows with two float references:
// the exact dot of the dequantized weights and dequantized activations
// (VecDot must agree to float rounding: its integer block sums are exact;
// for Q8_1 the half-float block sums s are taken as stored, as ggml does),
// and the dot with the original float activations (looser: it shows the
// error of rounding the activations to 8 bits).
func TestVecDot(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, typ := range vecDotTypes {
		at := VecDotType(typ)
		var worstAct float64
		for _, n := range []int{256, 512, 4096} {
			for trial := 0; trial < 8; trial++ {
				w := normalData(r, n, 0.05)
				x := normalData(r, n, 1)
				if trial%2 == 1 { // an offset exercises the min/sum terms
					for i := range x {
						x[i] += 0.7
					}
				}
				wq, aq := mustQuantize(t, typ, w), mustQuantize(t, at, x)
				wd, ad := mustDequantize(t, typ, wq, n), mustDequantize(t, at, aq, n)
				got := float64(VecDot(typ, wq, aq, n))

				exact, mag := dot64(wd, ad)
				exact += q81Correction(typ, wq, aq, ad)
				if d := math.Abs(got - exact); d > 1e-6*mag {
					t.Errorf("%v n=%d trial %d: VecDot %g, dequantized dot %g (|diff| %.3g, %.3g of Σ|w·x|)",
						typ, n, trial, got, exact, d, d/mag)
				}
				float, fmag := dot64(wd, x)
				rel := math.Abs(got-float) / fmag
				worstAct = max(worstAct, rel)
				if rel > 0.01 {
					t.Errorf("%v n=%d trial %d: VecDot %g, float-activation dot %g (%.3g of Σ|w·x|)",
						typ, n, trial, got, float, rel)
				}
			}
		}
		t.Logf("%-6v × %-4v: worst activation-rounding error %.3g of Σ|w·x|", typ, at, worstAct)
	}
}

// TestVecDotEdgeBlocks uses weights and activations at the ends of their
// ranges, where an int8 or int16 overflow or a sign slip would show.
func TestVecDotEdgeBlocks(t *testing.T) {
	const n = 512
	for _, typ := range vecDotTypes {
		at := VecDotType(typ)
		for _, c := range []struct {
			name string
			w, x func(i int) float32
		}{
			{"max·max", func(int) float32 { return 1 }, func(int) float32 { return 1 }},
			{"max·min", func(int) float32 { return 1 }, func(int) float32 { return -1 }},
			{"alternating", func(i int) float32 { return float32(1 - 2*(i%2)) }, func(i int) float32 { return float32(1 - 2*(i%2)) }},
			{"ramp", func(i int) float32 { return float32(i%64) - 31.5 }, func(i int) float32 { return float32(i%17) - 3 }},
			{"zero weights", func(int) float32 { return 0 }, func(i int) float32 { return float32(i) }},
		} {
			w, x := make([]float32, n), make([]float32, n)
			for i := range w {
				w[i], x[i] = c.w(i), c.x(i)
			}
			wq, aq := mustQuantize(t, typ, w), mustQuantize(t, at, x)
			ad := mustDequantize(t, at, aq, n)
			exact, mag := dot64(mustDequantize(t, typ, wq, n), ad)
			exact += q81Correction(typ, wq, aq, ad)
			got := float64(VecDot(typ, wq, aq, n))
			if math.Abs(got-exact) > 1e-6*mag || (mag == 0 && got != 0) {
				t.Errorf("%v %s: VecDot %g, dequantized dot %g", typ, c.name, got, exact)
			}
		}
	}
}

func TestVecDotBadInput(t *testing.T) {
	for _, typ := range vecDotTypes {
		n := 512
		at := VecDotType(typ)
		ws, _ := typ.RowSize(n)
		as, _ := at.RowSize(n)
		w, a := make([]byte, ws), make([]byte, as)
		if v := VecDot(typ, w, a, n); v != 0 {
			t.Errorf("%v: zero blocks gave %g", typ, v)
		}
		for _, c := range []struct {
			name string
			w, a []byte
			n    int
		}{
			{"short weights", w[:ws-1], a, n},
			{"short activations", w, a[:as-1], n},
			{"negative n", w, a, -32},
			{"partial block", w, a, n - 1},
			{"nil", nil, nil, n},
			{"overflowing n", w, a, math.MaxInt / 32 * 32},
		} {
			if c.name == "partial block" && typ.BlockSize() == 1 {
				continue // any n is whole for plain floats
			}
			if v := VecDot(typ, c.w, c.a, c.n); !math.IsNaN(float64(v)) {
				t.Errorf("%v %s: got %g, want NaN", typ, c.name, v)
			}
		}
		// Longer buffers are fine: only the first n elements count.
		if v := VecDot(typ, append(w, 1, 2, 3), append(a, 4, 5), n); v != 0 {
			t.Errorf("%v: long buffers gave %g", typ, v)
		}
	}
	for _, typ := range []Type{Q8_1, Q8_K, IQ2_XXS, TQ2_0, Type(77)} {
		if VecDotSupported(typ) {
			t.Errorf("%v reported as supported", typ)
		}
		if v := VecDot(typ, make([]byte, 4096), make([]byte, 4096), 256); !math.IsNaN(float64(v)) {
			t.Errorf("%v: got %g, want NaN", typ, v)
		}
	}
	if v := VecDotF32([]float32{1, 2}, []float32{3}); !math.IsNaN(float64(v)) {
		t.Errorf("VecDotF32 length mismatch: got %g", v)
	}
}

func TestVecDotTypes(t *testing.T) {
	want := map[Type]Type{
		F32: F32, F16: F16, BF16: BF16,
		Q4_0: Q8_0, Q5_0: Q8_0, Q8_0: Q8_0, IQ4_NL: Q8_0, MXFP4: Q8_0,
		Q4_1: Q8_1, Q5_1: Q8_1,
		Q2_K: Q8_K, Q3_K: Q8_K, Q4_K: Q8_K, Q5_K: Q8_K, Q6_K: Q8_K, IQ4_XS: Q8_K,
	}
	for w, a := range want {
		if got := VecDotType(w); got != a {
			t.Errorf("VecDotType(%v) = %v, want %v", w, got, a)
		}
	}
}

// TestVecDotF32 checks the typed fast path against the byte path.
func TestVecDotF32(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	w, x := normalData(r, 1000, 1), normalData(r, 1000, 1)
	wb, xb := make([]byte, 4000), make([]byte, 4000)
	for i := range w {
		binary.LittleEndian.PutUint32(wb[4*i:], math.Float32bits(w[i]))
		binary.LittleEndian.PutUint32(xb[4*i:], math.Float32bits(x[i]))
	}
	a, b := VecDotF32(w, x), VecDot(F32, wb, xb, 1000)
	exact, mag := dot64(w, x)
	if a != b || math.Abs(float64(a)-exact) > 1e-6*mag {
		t.Errorf("VecDotF32 %g, VecDot(F32) %g, exact %g", a, b, exact)
	}
}

func TestVecDotNoAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const n = 1024
	for _, typ := range vecDotTypes {
		wq := mustQuantize(t, typ, normalData(r, n, 0.05))
		aq := mustQuantize(t, VecDotType(typ), normalData(r, n, 1))
		if a := testing.AllocsPerRun(50, func() { VecDot(typ, wq, aq, n) }); a != 0 {
			t.Errorf("%v: %v allocations per call", typ, a)
		}
	}
	w, x := normalData(r, n, 1), normalData(r, n, 1)
	if a := testing.AllocsPerRun(50, func() { VecDotF32(w, x) }); a != 0 {
		t.Errorf("VecDotF32: %v allocations per call", a)
	}
}

func BenchmarkDequantize(b *testing.B) {
	r := rand.New(rand.NewPCG(15, 16))
	const n = 4096
	y := make([]float32, n)
	for _, typ := range quantTypes {
		q := mustQuantize(b, typ, normalData(r, n, 0.05))
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(int64(len(q)))
			for b.Loop() {
				if err := Dequantize(typ, q, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
