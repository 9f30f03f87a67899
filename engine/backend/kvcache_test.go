package backend

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/churon/churon/engine/quant"
)

func filled(t *testing.T, typ quant.Type, seed uint64) *KVCache {
	t.Helper()
	c, err := NewKVCache(typ, 2, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	k, v := make([]float32, 10*64), make([]float32, 10*64)
	for i := range k {
		k[i], v[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	pos := []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	for l := range 2 {
		c.Store(l, pos, k, v)
	}
	return c
}

// TestRowsRoundTrip: AppendRows then SetRows copies a cache bit for bit,
// through the byte-copy path and the portable one, which write the same
// bytes.
func TestRowsRoundTrip(t *testing.T) {
	for _, typ := range []quant.Type{quant.F16, quant.F32, quant.Q8_0} {
		src := filled(t, typ, 1)
		if got, want := src.RowSize()*src.Context*src.Layers*2, int(src.Bytes()); got != want {
			t.Errorf("%v: RowSize says %d bytes in all, Bytes %d", typ, got, want)
		}
		var encs [][]byte
		for _, le := range []bool{true, false} {
			littleEndian = le
			var enc []byte
			dst, _ := NewKVCache(typ, 2, 10, 64)
			for l := range 2 {
				for _, values := range []bool{false, true} {
					b, err := src.AppendRows(nil, l, values, 3, 9)
					if err != nil {
						t.Fatal(err)
					}
					if len(b) != 6*src.RowSize() {
						t.Fatalf("%v: %d bytes for 6 rows of %d", typ, len(b), src.RowSize())
					}
					enc = append(enc, b...)
					if err := dst.SetRows(l, values, 3, b); err != nil {
						t.Fatal(err)
					}
					again, _ := dst.AppendRows(nil, l, values, 3, 9)
					if !bytes.Equal(again, b) {
						t.Fatalf("%v layer %d values %v: rows differ after SetRows", typ, l, values)
					}
					if empty, _ := dst.AppendRows(nil, l, values, 0, 3); !bytes.Equal(empty, make([]byte, 3*src.RowSize())) {
						t.Fatalf("%v: SetRows wrote outside its rows", typ)
					}
				}
			}
			encs = append(encs, enc)
		}
		littleEndian = true
		if !bytes.Equal(encs[0], encs[1]) {
			t.Errorf("%v: the byte-copy and portable encodings differ", typ)
		}
	}
}

func TestRowsErrors(t *testing.T) {
	c := filled(t, quant.F16, 2)
	for _, r := range [][3]int{{2, 0, 1}, {-1, 0, 1}, {0, -1, 1}, {0, 5, 4}, {0, 0, 11}} {
		if _, err := c.AppendRows(nil, r[0], false, r[1], r[2]); err == nil {
			t.Errorf("AppendRows%v accepted", r)
		}
	}
	if err := c.SetRows(0, false, 0, make([]byte, 5)); err == nil {
		t.Error("a partial row accepted")
	}
	if err := c.SetRows(0, false, 9, make([]byte, 2*c.RowSize())); err == nil {
		t.Error("rows past the context accepted")
	}
	if err := c.SetRows(3, true, 0, nil); err == nil {
		t.Error("layer 3 accepted")
	}
	if _, err := NewKVCache(quant.Q8_0, 1, 4, 48); err == nil {
		t.Error("a Q8_0 cache of width 48 made")
	}
	if _, err := NewKVCache(quant.Q4_0, 1, 4, 64); err == nil {
		t.Error("a Q4_0 cache made")
	}
}

// TestQ8Store: a Q8_0 cache holds exactly quant.Quantize's blocks.
func TestQ8Store(t *testing.T) {
	c, _ := NewKVCache(quant.Q8_0, 1, 4, 64)
	k := make([]float32, 64)
	for i := range k {
		k[i] = float32(i) - 20.5
	}
	c.Store(0, []int32{2}, k, k)
	want := make([]byte, c.RowSize())
	if err := quant.Quantize(quant.Q8_0, k, want); err != nil {
		t.Fatal(err)
	}
	ks, vs := c.Q8(0)
	rs := c.RowSize()
	if !bytes.Equal(ks[2*rs:3*rs], want) || !bytes.Equal(vs[2*rs:3*rs], want) {
		t.Fatal("stored blocks differ from Quantize's")
	}
	if k16, _ := c.F16(0); k16 != nil {
		t.Error("F16 view of a Q8_0 cache")
	}
}
