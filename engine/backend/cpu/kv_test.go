package cpu

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

func filledKV(t *testing.T, typ quant.Type, seed uint64) *KV {
	t.Helper()
	c, err := NewKV(backend.KVSpec{Type: typ, Context: 10, Dim: 64})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	k, v := make([]float32, 10*64), make([]float32, 10*64)
	for i := range k {
		k[i], v[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	c.Store([]int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, k, v)
	return c
}

// TestRowsRoundTrip: AppendRows then SetRows copies a cache bit for bit,
// through the byte-copy path and the portable one, which write the same
// bytes.
func TestRowsRoundTrip(t *testing.T) {
	defer func() { littleEndian = true }()
	for _, typ := range []quant.Type{quant.F16, quant.F32, quant.Q8_0} {
		src := filledKV(t, typ, 1)
		rs := src.Spec().RowSize()
		if got, want := rs*10*2, int(src.Spec().Bytes()); got != want {
			t.Errorf("%v: RowSize says %d bytes in all, Bytes %d", typ, got, want)
		}
		var encs [][]byte
		for _, le := range []bool{true, false} {
			littleEndian = le
			var enc []byte
			dst, _ := NewKV(src.Spec())
			for _, values := range []bool{false, true} {
				b, err := src.AppendRows(nil, values, 3, 9)
				if err != nil {
					t.Fatal(err)
				}
				if len(b) != 6*rs {
					t.Fatalf("%v: %d bytes for 6 rows of %d", typ, len(b), rs)
				}
				enc = append(enc, b...)
				if err := dst.SetRows(values, 3, b); err != nil {
					t.Fatal(err)
				}
				again, _ := dst.AppendRows(nil, values, 3, 9)
				if !bytes.Equal(again, b) {
					t.Fatalf("%v values %v: rows differ after SetRows", typ, values)
				}
				if empty, _ := dst.AppendRows(nil, values, 0, 3); !bytes.Equal(empty, make([]byte, 3*rs)) {
					t.Fatalf("%v: SetRows wrote outside its rows", typ)
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
	c := filledKV(t, quant.F16, 2)
	rs := c.Spec().RowSize()
	for _, r := range [][2]int{{-1, 1}, {5, 4}, {0, 11}} {
		if _, err := c.AppendRows(nil, false, r[0], r[1]); err == nil {
			t.Errorf("AppendRows%v accepted", r)
		}
	}
	if err := c.SetRows(false, 0, make([]byte, 5)); err == nil {
		t.Error("a partial row accepted")
	}
	if err := c.SetRows(false, 9, make([]byte, 2*rs)); err == nil {
		t.Error("rows past the context accepted")
	}
	for _, s := range []backend.KVSpec{
		{Type: quant.Q8_0, Context: 4, Dim: 48},
		{Type: quant.Q4_0, Context: 4, Dim: 64},
		{Type: quant.F16, Context: 0, Dim: 64},
	} {
		if _, err := NewKV(s); err == nil {
			t.Errorf("a cache %+v made", s)
		}
	}
}

// TestQ8Store: a Q8_0 cache holds exactly quant.Quantize's blocks.
func TestQ8Store(t *testing.T) {
	c, _ := NewKV(backend.KVSpec{Type: quant.Q8_0, Context: 4, Dim: 64})
	k := make([]float32, 64)
	for i := range k {
		k[i] = float32(i) - 20.5
	}
	c.Store([]int32{2}, k, k)
	rs := c.Spec().RowSize()
	want := make([]byte, rs)
	if err := quant.Quantize(quant.Q8_0, k, want); err != nil {
		t.Fatal(err)
	}
	ks, vs := c.Q8()
	if !bytes.Equal(ks[2*rs:3*rs], want) || !bytes.Equal(vs[2*rs:3*rs], want) {
		t.Fatal("stored blocks differ from Quantize's")
	}
	if k16, _ := c.F16(); k16 != nil {
		t.Error("F16 view of a Q8_0 cache")
	}
}

// TestState: a state reads back what was set, and refuses a wrong size.
func TestState(t *testing.T) {
	s := NewState(5)
	if err := s.Set([]byte{1, 2, 3, 4, 5}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.AppendTo([]byte{9})
	if !bytes.Equal(got, []byte{9, 1, 2, 3, 4, 5}) {
		t.Fatalf("AppendTo = %v", got)
	}
	if err := s.Set([]byte{1}); err == nil {
		t.Error("a state of 1 byte set into 5")
	}
}
