package quant

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// quantTypes are the types Quantize supports.
var quantTypes = []Type{F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q8_K,
	Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, MXFP4}

// maxRelRMS bounds RMS(dequant(quant(x)) − x) / RMS(x) for normal data;
// each is about 1.3× what the format achieves.
var maxRelRMS = map[Type]float64{
	F32: 0, F16: 3e-4, BF16: 2.2e-3,
	Q8_0: 0.0072, Q8_1: 0.0072, Q8_K: 0.0095,
	Q6_K: 0.023, Q5_0: 0.055, Q5_1: 0.05, Q5_K: 0.048,
	Q4_0: 0.115, Q4_1: 0.1, Q4_K: 0.095, IQ4_NL: 0.1, IQ4_XS: 0.1,
	Q3_K: 0.195, Q2_K: 0.39, MXFP4: 0.15,
}

func normalData(r *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * scale)
	}
	return x
}

func roundTrip(t *testing.T, typ Type, x []float32) []float32 {
	t.Helper()
	size, ok := typ.RowSize(len(x))
	if !ok {
		t.Fatalf("%v: bad length %d", typ, len(x))
	}
	q := make([]byte, size)
	if err := Quantize(typ, x, q); err != nil {
		t.Fatalf("%v: %v", typ, err)
	}
	y := make([]float32, len(x))
	if err := Dequantize(typ, q, y); err != nil {
		t.Fatalf("%v: %v", typ, err)
	}
	return y
}

func relRMS(x, y []float32) float64 {
	var se, sx float64
	for i := range x {
		d := float64(y[i]) - float64(x[i])
		se += d * d
		sx += float64(x[i]) * float64(x[i])
	}
	return math.Sqrt(se / sx)
}

func TestQuantizeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range quantTypes {
		for _, scale := range []float64{0.05, 30} { // scales well inside half-float range
			x := normalData(r, 4096, scale)
			got := relRMS(x, roundTrip(t, typ, x))
			if got > maxRelRMS[typ] {
				t.Errorf("%v (σ=%g): relative RMS error %.4g > %.4g", typ, scale, got, maxRelRMS[typ])
			}
			if scale == 0.05 {
				t.Logf("%-6v relative RMS error %.4g", typ, got)
			}
		}
	}
}

// TestQuantizeSpecialBlocks: blocks that stress the scale searches (all
// zero, constant, one spike, one sign, tiny values) round-trip sensibly,
// and garbage (NaN, Inf, huge values) never panics.
func TestQuantizeSpecialBlocks(t *testing.T) {
	const n = 512
	fill := func(f func(i int) float32) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = f(i)
		}
		return x
	}
	r := rand.New(rand.NewPCG(3, 4))
	sane := map[string][]float32{
		"zero":     fill(func(int) float32 { return 0 }),
		"constant": fill(func(int) float32 { return 0.75 }),
		"negative": fill(func(i int) float32 { return -0.01 - float32(i%7)*0.003 }),
		"spike":    fill(func(i int) float32 { return map[bool]float32{true: 4, false: 0.001}[i%37 == 0] }),
		"small":    fill(func(i int) float32 { return float32(r.NormFloat64() * 1e-3) }),
	}
	for _, typ := range quantTypes {
		for name, x := range sane {
			y := roundTrip(t, typ, x)
			if name == "zero" {
				for i, v := range y {
					if v != 0 {
						t.Errorf("%v %s: element %d = %g", typ, name, i, v)
						break
					}
				}
				continue
			}
			// The largest element of each block is always representable to
			// within the format's step, so the error stays below the
			// block's maximum (a generous bound that catches sign and
			// layout mistakes).
			bs := max(typ.BlockSize(), 32)
			for b := 0; b < n/bs; b++ {
				var amax, emax float64
				for i := b * bs; i < (b+1)*bs; i++ {
					amax = max(amax, math.Abs(float64(x[i])))
					emax = max(emax, math.Abs(float64(y[i]-x[i])))
				}
				limit := amax * 0.5
				if typ == Q2_K || typ == Q3_K {
					limit = amax // 2-3 bits with a shared min can miss by a full step
				}
				if emax > limit {
					t.Errorf("%v %s block %d: max error %g for max |x| %g", typ, name, b, emax, amax)
				}
			}
		}
		garbage := fill(func(i int) float32 {
			switch i % 5 {
			case 0:
				return float32(math.NaN())
			case 1:
				return float32(math.Inf(1 - 2*(i%2)))
			case 2:
				return math.MaxFloat32
			}
			return float32(r.NormFloat64())
		})
		roundTrip(t, typ, garbage) // must not panic
	}
}

func TestSizeErrors(t *testing.T) {
	for _, typ := range quantTypes {
		bs, ts := typ.BlockSize(), typ.TypeSize()
		n := 2 * max(bs, 32)
		good, _ := typ.RowSize(n)
		cases := []struct {
			name   string
			n, len int
		}{
			{"short", n, good - 1},
			{"long", n, good + 1},
			{"empty bytes", n, 0},
		}
		if bs > 1 {
			cases = append(cases, struct {
				name   string
				n, len int
			}{"partial block", n - 1, good - ts})
		}
		for _, c := range cases {
			x := make([]float32, c.n)
			b := make([]byte, c.len)
			if err := Quantize(typ, x, b); !errors.Is(err, ErrSize) {
				t.Errorf("Quantize %v %s: err = %v, want ErrSize", typ, c.name, err)
			}
			if err := Dequantize(typ, b, x); !errors.Is(err, ErrSize) {
				t.Errorf("Dequantize %v %s: err = %v, want ErrSize", typ, c.name, err)
			}
		}
		// Zero elements is a valid, empty row.
		if err := Quantize(typ, nil, nil); err != nil {
			t.Errorf("Quantize %v of nothing: %v", typ, err)
		}
	}
	for _, typ := range []Type{IQ2_XXS, IQ1_M, TQ1_0, I8, F64, Type(4), Type(999)} {
		bs := max(typ.BlockSize(), 1)
		x := make([]float32, bs)
		size, _ := typ.RowSize(bs)
		if err := Quantize(typ, x, make([]byte, size)); !errors.Is(err, ErrUnsupported) {
			t.Errorf("Quantize %v: err = %v, want ErrUnsupported", typ, err)
		}
		if err := Dequantize(typ, make([]byte, size), x); !errors.Is(err, ErrUnsupported) {
			t.Errorf("Dequantize %v: err = %v, want ErrUnsupported", typ, err)
		}
	}
}

// TestNearestInt pins ggml's rounding: ties go to even, unlike math.Round.
func TestNearestInt(t *testing.T) {
	tests := []struct {
		in   float32
		want int
	}{{0, 0}, {0.5, 0}, {1.5, 2}, {2.5, 2}, {-0.5, 0}, {-1.5, -2}, {-2.49, -2},
		{7.5, 8}, {127.4, 127}, {-128.5, -128}, {4194303, 4194303}, {-4194303, -4194303}}
	for _, tt := range tests {
		if got := nearestInt(tt.in); got != tt.want {
			t.Errorf("nearestInt(%g) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestQ8KBlock checks the activation block's invariants: bsums are the
// sums of their 16 quants, the largest magnitude maps to ±127.
func TestQ8KBlock(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	x := normalData(r, QK_K, 2)
	b := make([]byte, 292)
	if err := Quantize(Q8_K, x, b); err != nil {
		t.Fatal(err)
	}
	_, qs, bsums := q8K(b)
	hit127 := false
	for j := 0; j < 16; j++ {
		s := 0
		for _, q := range qs[16*j : 16*j+16] {
			s += int(int8(q))
			hit127 = hit127 || int8(q) == 127 || int8(q) == -127
		}
		if s != bsum(bsums, j) {
			t.Errorf("bsums[%d] = %d, want %d", j, bsum(bsums, j), s)
		}
	}
	if !hit127 {
		t.Error("no quant reached ±127")
	}
}

// FuzzDequantize: arbitrary bytes decode without panicking, and each type
// gives finite values whenever its scales are finite (not checked: the
// bytes are arbitrary), so only the absence of panics is asserted.
func FuzzDequantize(f *testing.F) {
	f.Add(uint8(Q4_K), []byte{1, 2, 3})
	f.Add(uint8(Q6_K), make([]byte, 210))
	f.Add(uint8(IQ4_XS), make([]byte, 136))
	f.Fuzz(func(t *testing.T, typ uint8, data []byte) {
		tp := Type(typ)
		bs, ts := tp.BlockSize(), tp.TypeSize()
		if bs == 0 || ts == 0 {
			if err := Dequantize(tp, data, make([]float32, 32)); err == nil {
				t.Fatalf("%v accepted", tp)
			}
			return
		}
		n := len(data) / ts * bs
		_ = Dequantize(tp, data, make([]float32, n))
		_ = Dequantize(tp, data, make([]float32, n+1))
	})
}

// FuzzQuantize: any float32 bit patterns (NaN, Inf, subnormals, extremes)
// quantize without panicking, for every type.
func FuzzQuantize(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x7f, 0, 0, 0xc0, 0x7f, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		x := make([]float32, QK_K)
		for i := range x {
			if j := 4 * (i % (len(data)/4 + 1)); j+4 <= len(data) {
				x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[j:]))
			}
		}
		for _, typ := range quantTypes {
			size, _ := typ.RowSize(len(x))
			q := make([]byte, size)
			if err := Quantize(typ, x, q); err != nil {
				t.Fatalf("%v: %v", typ, err)
			}
			if err := Dequantize(typ, q, make([]float32, len(x))); err != nil {
				t.Fatalf("%v: %v", typ, err)
			}
		}
	})
}
