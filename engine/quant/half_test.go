package quant

import (
	"math"
	"os"
	"testing"
)

// fp16Oracle is an independent float32→binary16 conversion: the
// scale-and-add method of the FP16 library, which ggml's portable
// GGML_COMPUTE_FP32_TO_FP16 uses. The float unit does the rounding, so it
// shares no logic with the integer rounding of FP32ToFP16.
func fp16Oracle(f float32) uint16 {
	scaleToInf := math.Float32frombits(0x77800000)  // 2¹¹²
	scaleToZero := math.Float32frombits(0x08800000) // 2⁻¹¹⁰
	base := float32(abs32(f)*scaleToInf) * scaleToZero
	w := math.Float32bits(f)
	shl1 := w + w
	sign := w & 0x80000000
	bias := shl1 & 0xff000000
	if bias < 0x71000000 {
		bias = 0x71000000
	}
	base = math.Float32frombits(bias>>1+0x07800000) + base
	bits := math.Float32bits(base)
	nonsign := (bits>>13)&0x7c00 + bits&0x0fff
	if shl1 > 0xff000000 {
		return uint16(sign>>16) | 0x7e00
	}
	return uint16(sign>>16 | nonsign)
}

func TestFP16ToFP32AllValues(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		got := FP16ToFP32(uint16(h))
		if math.Float32bits(fp16Table[h]) != math.Float32bits(got) {
			t.Errorf("%04x: table %08x, FP16ToFP32 %08x", h, math.Float32bits(fp16Table[h]), math.Float32bits(got))
		}
		sign := 1.0
		if h&0x8000 != 0 {
			sign = -1
		}
		e, m := h>>10&0x1f, h&0x3ff
		switch {
		case e == 0x1f && m != 0:
			b := math.Float32bits(got)
			if !math.IsNaN(float64(got)) || b>>31 != uint32(h>>15) || b&0x3fffff != uint32(m)<<13&0x3fffff {
				t.Errorf("%04x: NaN became %08x", h, b)
			}
			continue
		case e == 0x1f:
			if !math.IsInf(float64(got), int(sign)) {
				t.Errorf("%04x: got %g, want %vInf", h, got, sign)
			}
			continue
		}
		var want float64
		if e == 0 {
			want = sign * math.Ldexp(float64(m), -24)
		} else {
			want = sign * math.Ldexp(float64(m|0x400), e-25)
		}
		if float64(got) != want || math.Signbit(float64(got)) != (sign < 0) {
			t.Errorf("%04x: got %g, want %g", h, got, want)
		}
		// Every non-NaN half survives a round trip.
		if back := FP32ToFP16(got); back != uint16(h) {
			t.Errorf("%04x: round trip gave %04x", h, back)
		}
	}
}

// fp16Cases yields float32 bit patterns that matter for rounding: every
// pattern near a half-precision tie for every exponent, all of the
// subnormal-half range (sparsely unless exhaustive), and a strided sweep.
func fp16Cases(yield func(uint32) bool) {
	if os.Getenv("CHURON_EXHAUSTIVE") != "" {
		for b := uint64(0); b < 1<<32; b++ {
			if !yield(uint32(b)) {
				return
			}
		}
		return
	}
	for hi := uint32(0); hi < 1<<19; hi++ { // sign, exponent, top 10 mantissa bits
		for _, lo := range []uint32{0, 1, 0xfff, 0x1000, 0x1001, 0x1fff} {
			if !yield(hi<<13 | lo) {
				return
			}
		}
	}
	// Exponents 101..113 map to half subnormals, where the tie bit moves.
	for b := uint32(101 << 23); b < 114<<23; b += 13 {
		if !yield(b) || !yield(b|1<<31) {
			return
		}
	}
	for b := uint64(0); b < 1<<32; b += 251 {
		if !yield(uint32(b)) {
			return
		}
	}
}

func TestFP32ToFP16MatchesGGML(t *testing.T) {
	bad := 0
	for b := range fp16Cases {
		f := math.Float32frombits(b)
		if got, want := FP32ToFP16(f), fp16Oracle(f); got != want {
			if bad < 10 {
				t.Errorf("%08x (%g): got %04x, ggml %04x", b, f, got, want)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d mismatches", bad)
	}
}

func TestFP32ToFP16Cases(t *testing.T) {
	tests := []struct {
		in   float32
		want uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{65504, 0x7bff},
		{65519.996, 0x7bff},
		{65520, 0x7c00}, // tie with an odd mantissa: to infinity
		{1e10, 0x7c00},
		{float32(math.Inf(-1)), 0xfc00},
		{float32(math.NaN()), 0x7e00},
		{math.Float32frombits(0xffc00001), 0xfe00},
		{6.103515625e-05, 0x0400},                               // 2⁻¹⁴, smallest normal
		{5.9604645e-08, 0x0001},                                 // 2⁻²⁴, smallest subnormal
		{2.9802322e-08, 0x0000},                                 // 2⁻²⁵: tie, to even zero
		{math.Float32frombits(0x33000001), 0x0001},              // just above 2⁻²⁵
		{8.940697e-08, 0x0002},                                  // 1.5·2⁻²⁴: tie, to even 2
		{1.0009765625, 0x3c01},                                  // 1+2⁻¹⁰
		{1 + 1.0/2048, 0x3c00},                                  // tie, to even
		{1 + 3.0/2048, 0x3c02},                                  // tie, to even
		{math.Float32frombits(0x387fe000), 0x0400},              // rounds up into the normals
		{math.Float32frombits(0x387fdfff), 0x03ff},              // largest subnormal
		{math.Float32frombits(0x477fefff), 0x7bff},              // just below the inf tie
		{math.Float32frombits(0x477ff000 | 0x80000000), 0xfc00}, // -65520
		{math.Float32frombits(0x3f800000 | 0x1000 | 0x80000000), 0xbc00}, // -(1+2⁻¹¹)
	}
	for _, tt := range tests {
		if got := FP32ToFP16(tt.in); got != tt.want {
			t.Errorf("FP32ToFP16(%g [%08x]) = %04x, want %04x", tt.in, math.Float32bits(tt.in), got, tt.want)
		}
	}
}

// bf16Oracle rounds through float64 arithmetic: the nearest bfloat16 with
// ties to even, NaN quieted with its top bits kept (ggml's rule).
func bf16Oracle(f float32) uint16 {
	b := math.Float32bits(f)
	if math.IsNaN(float64(f)) {
		return uint16(b>>16) | 0x40
	}
	lo, hi := b&0xffff0000, b&0xffff0000+0x10000
	dlo := math.Abs(float64(f) - float64(math.Float32frombits(lo)))
	var dhi float64
	if hi>>23&0xff == 0xff && hi&0x7fffff == 0 && (hi>>31) == (b>>31) {
		// hi is ±Inf: measure to 2¹²⁸, the value the rounding sees.
		dhi = math.Abs(math.Ldexp(1, 128) - math.Abs(float64(f)))
	} else {
		dhi = math.Abs(float64(math.Float32frombits(hi)) - float64(f))
	}
	switch {
	case dlo < dhi:
		return uint16(lo >> 16)
	case dhi < dlo:
		return uint16(hi >> 16)
	case (lo>>16)&1 == 0:
		return uint16(lo >> 16)
	}
	return uint16(hi >> 16)
}

func TestFP32ToBF16(t *testing.T) {
	bad := 0
	check := func(b uint32) {
		f := math.Float32frombits(b)
		if got, want := FP32ToBF16(f), bf16Oracle(f); got != want {
			if bad < 10 {
				t.Errorf("%08x (%g): got %04x, want %04x", b, f, got, want)
			}
			bad++
		}
	}
	for hi := uint32(0); hi < 1<<16; hi++ {
		for _, lo := range []uint32{0, 1, 0x7fff, 0x8000, 0x8001, 0xffff} {
			check(hi<<16 | lo)
		}
	}
	for b := uint64(0); b < 1<<32; b += 4093 {
		check(uint32(b))
	}
	if bad > 0 {
		t.Errorf("%d mismatches", bad)
	}
	// Every non-NaN bfloat16 round-trips; NaNs come back quiet.
	for h := 0; h < 1<<16; h++ {
		f := BF16ToFP32(uint16(h))
		got := FP32ToBF16(f)
		if math.IsNaN(float64(f)) {
			if got != uint16(h)|0x40 {
				t.Errorf("NaN %04x became %04x", h, got)
			}
		} else if got != uint16(h) {
			t.Errorf("%04x: round trip gave %04x", h, got)
		}
	}
}

func TestHalfSlices(t *testing.T) {
	src := []float32{1, -2.5, 65504, float32(math.Inf(1)), 1e-7}
	for _, c := range []struct {
		name       string
		toSlice    func([]float32, []uint16) error
		fromSlice  func([]uint16, []float32) error
		to         func(float32) uint16
		from       func(uint16) float32
		badH, badF int // destination lengths that do not match src
	}{
		{"fp16", FP32ToFP16Slice, FP16ToFP32Slice, FP32ToFP16, FP16ToFP32, 2, 1},
		{"bf16", FP32ToBF16Slice, BF16ToFP32Slice, FP32ToBF16, BF16ToFP32, 1, 3},
	} {
		h := make([]uint16, len(src))
		back := make([]float32, len(src))
		if err := c.toSlice(src, h); err != nil {
			t.Fatal(err)
		}
		if err := c.fromSlice(h, back); err != nil {
			t.Fatal(err)
		}
		for i := range src {
			if h[i] != c.to(src[i]) || back[i] != c.from(h[i]) {
				t.Errorf("%s slice element %d differs from the scalar conversion", c.name, i)
			}
		}
		if c.toSlice(src, h[:c.badH]) == nil || c.fromSlice(h, back[:c.badF]) == nil {
			t.Errorf("%s: length mismatch accepted", c.name)
		}
	}
}
