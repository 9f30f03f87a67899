package quant

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// mxfp4Ref is ggml's own output on generated inputs, written by
// tools/mxfp4ref/gen.sh from llama.cpp v0.5.0's ggml-quants.c.
type mxfp4Ref struct {
	Dequantize []struct {
		Block  string   `json:"block"`
		Values []uint32 `json:"values"`
	} `json:"dequantize"`
	Quantize []struct {
		X     []uint32 `json:"x"`
		Block string   `json:"block"`
	} `json:"quantize"`
}

func loadMXFP4Ref(t *testing.T) mxfp4Ref {
	t.Helper()
	raw, err := os.ReadFile("testdata/mxfp4_ggml.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref mxfp4Ref
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Dequantize) != 256 || len(ref.Quantize) == 0 {
		t.Fatalf("reference has %d dequantize and %d quantize cases", len(ref.Dequantize), len(ref.Quantize))
	}
	return ref
}

// TestMXFP4DequantizeGGML checks every scale byte and every nibble
// against ggml's dequantize_row_mxfp4, bit for bit.
func TestMXFP4DequantizeGGML(t *testing.T) {
	ref := loadMXFP4Ref(t)
	var all []byte
	var want []uint32
	for _, c := range ref.Dequantize {
		b, err := hex.DecodeString(c.Block)
		if err != nil || len(b) != 17 {
			t.Fatalf("block %q: %v", c.Block, err)
		}
		all = append(all, b...)
		want = append(want, c.Values...)
	}
	got := mustDequantize(t, MXFP4, all, len(want))
	for i, w := range want {
		if g := math.Float32bits(got[i]); g != w {
			t.Fatalf("block %d (e=%d) element %d: got %08x (%g), ggml %08x (%g)",
				i/32, all[i/32*17], i%32, g, got[i], w, math.Float32frombits(w))
		}
	}
}

// TestMXFP4QuantizeGGML checks Quantize against ggml's
// quantize_row_mxfp4_ref, byte for byte, on magnitudes from 2^−120 to
// 2^120, codebook points and ties, zeros, and maxima at and just below
// powers of two.
func TestMXFP4QuantizeGGML(t *testing.T) {
	ref := loadMXFP4Ref(t)
	for i, c := range ref.Quantize {
		x := make([]float32, len(c.X))
		for j, u := range c.X {
			x[j] = math.Float32frombits(u)
		}
		got := hex.EncodeToString(mustQuantize(t, MXFP4, x))
		if got != c.Block {
			t.Errorf("case %d: got %s, ggml %s (x=%v)", i, got, c.Block, x)
		}
	}
}

// TestMXFP4Traits pins the format numbers GGUF files carry.
func TestMXFP4Traits(t *testing.T) {
	if MXFP4 != 39 || MXFP4.BlockSize() != 32 || MXFP4.TypeSize() != 17 || MXFP4.String() != "MXFP4" {
		t.Fatalf("MXFP4 = %d, %d elements in %d bytes, %q", uint32(MXFP4), MXFP4.BlockSize(), MXFP4.TypeSize(), MXFP4)
	}
	if typ, err := ParseType("mxfp4"); err != nil || typ != MXFP4 {
		t.Fatalf("ParseType(mxfp4) = %v, %v", typ, err)
	}
	if VecDotType(MXFP4) != Q8_0 || !VecDotSupported(MXFP4) {
		t.Fatal("MXFP4 multiplies against Q8_0 activations")
	}
}

// TestMXFP4DotExact: with exact float arithmetic (small power-of-two
// scales) the dot product equals the dot of the dequantized operands.
func TestMXFP4DotExact(t *testing.T) {
	r := rand.New(rand.NewPCG(39, 1))
	const n = 32 * 12
	w := make([]byte, n/32*17)
	a := make([]byte, n/32*34)
	for i := range w {
		w[i] = byte(r.Uint32())
	}
	for b := 0; b < n/32; b++ {
		w[17*b] = byte(124 + r.IntN(4)) // 2^-4 … 2^-1
		for j := range 34 {
			a[34*b+j] = byte(r.Uint32())
		}
		a[34*b], a[34*b+1] = 0x00, byte(0x3c+4*r.IntN(3)) // halves 1, 2, 4
	}
	wd, ad := mustDequantize(t, MXFP4, w, n), mustDequantize(t, Q8_0, a, n)
	want, _ := dot64(wd, ad)
	if got := vecDotGeneric(MXFP4, w, a, n); float64(got) != want {
		t.Fatalf("generic %g, exact %g", got, want)
	}
	forLevels(t, func(t *testing.T, level string) {
		if got := VecDot(MXFP4, w, a, n); float64(got) != want {
			t.Fatalf("%s: %g, exact %g", level, got, want)
		}
	})
}
