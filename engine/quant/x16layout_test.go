package quant

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// x16Layout is one 16-row interleave (Q4_0, Q8_0, Q4_K, Q6_K) as its tests
// see it: its functions, its Go twin, and how to make raw rows and an
// activation row for it, so that one test body holds every interleave to
// the same checks.
type x16Layout struct {
	typ     Type
	size    func(nRows, n int) int
	repack  func(dst, rows []byte, stride, nRows, n int) error
	product func(packed []byte, nRows int, act []byte, n int, out []float32) error
	unpack  func(dst, packed []byte, nRows, n int) error
	// twin is the Go product over nb blocks of typ.
	twin func(packed []byte, nRows int, act []byte, nb int, out []float32)
	// variants runs f once per kernel variant at level (the avx2
	// level's AVX-VNNI and VPMADDUBSW kernels).
	variants func(t *testing.T, level string, f func(t *testing.T))
	// raw is nRows rows of n elements, every quant value occurring;
	// extreme puts some blocks' values at their bounds.
	raw func(r *rand.Rand, nRows, n int, extreme bool) []byte
	// act is one activation row of n elements, as raw.
	act func(r *rand.Rand, n int, extreme bool) []byte
}

// noVariants runs f once: the layout has one kernel per level.
func noVariants(t *testing.T, _ string, f func(t *testing.T)) { f(t) }

var (
	q4_0X16Layout = x16Layout{
		typ: Q4_0, size: Q4_0X16Size, repack: RepackQ4_0X16, product: VecDotRowsQ4_0X16,
		unpack: UnpackQ4_0X16, twin: q4x16Generic, variants: forQ4X16Variants,
		raw: rawQ4_0Rows, act: rawQ8_0Row,
	}
	q8_0X16Layout = x16Layout{
		typ: Q8_0, size: Q8_0X16Size, repack: RepackQ8_0X16, product: VecDotRowsQ8_0X16,
		unpack: UnpackQ8_0X16, twin: q8x16Generic, variants: forQ4X16Variants,
		raw: rawQ8_0Rows, act: rawQ8_0Row,
	}
	q4_KX16Layout = x16Layout{
		typ: Q4_K, size: KX16Size, repack: RepackQ4_KX16, product: VecDotRowsQ4_KX16,
		unpack: UnpackQ4_KX16, twin: kx16Generic, variants: noVariants,
		raw: func(r *rand.Rand, nRows, n int, _ bool) []byte { return rawKRows(r, Q4_K, nRows, n) },
		act: func(r *rand.Rand, n int, _ bool) []byte { return rawQ8KRows(r, 1, n) },
	}
	q6_KX16Layout = x16Layout{
		typ: Q6_K, size: Q6KX16Size, repack: RepackQ6_KX16, product: VecDotRowsQ6_KX16,
		unpack: UnpackQ6_KX16, twin: q6x16Generic, variants: forQ6X16Variants,
		raw: func(r *rand.Rand, nRows, n int, extreme bool) []byte {
			raw := rawKRows(r, Q6_K, nRows, n)
			if extreme {
				q6x16Extremes(r, raw)
			}
			return raw
		},
		act: q6x16Acts,
	}
)

// x16Case is one product check: nRows rows of n elements, pad bytes past
// each row, extreme values or not.
type x16Case struct {
	n, nRows, pad int
	extreme       bool
}

// checkX16Product repacks raw rows (padded strides, partial groups of 16)
// and runs the interleave product at every level and kernel variant and
// through the Go twin: every result bit-identical to the generic product
// of the original row and VecDot as its rounding rule promises
// (sameAsVecDot), nothing written past the results; then unpacks the
// interleave back to the rows' bytes. r is seeded afresh at each level.
func checkX16Product(t *testing.T, l x16Layout, seed1, seed2 uint64, cases []x16Case) {
	forLevels(t, func(t *testing.T, level string) {
		l.variants(t, level, func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed1, seed2))
			for _, c := range cases {
				checkX16Case(t, l, r, c)
			}
		})
	})
}

func checkX16Case(t *testing.T, l x16Layout, r *rand.Rand, c x16Case) {
	t.Helper()
	size, _ := l.typ.RowSize(c.n)
	stride := size + c.pad
	raw := l.raw(r, c.nRows, c.n, c.extreme)
	rows := make([]byte, c.nRows*stride)
	for i := range c.nRows {
		copy(rows[i*stride:], raw[i*size:(i+1)*size])
	}
	act := l.act(r, c.n, c.extreme)
	packed := make([]byte, l.size(c.nRows, c.n))
	if err := l.repack(packed, rows, stride, c.nRows, c.n); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, c.nRows+1)
	out[c.nRows] = 42
	if err := l.product(packed, c.nRows, act, c.n, out[:c.nRows]); err != nil {
		t.Fatal(err)
	}
	twin := make([]float32, c.nRows)
	l.twin(packed, c.nRows, act, c.n/l.typ.BlockSize(), twin)
	for i := range c.nRows {
		row := rows[i*stride : i*stride+size]
		want := vecDotGeneric(l.typ, row, act, c.n)
		vd := VecDot(l.typ, row, act, c.n)
		if b := math.Float32bits(want); math.Float32bits(out[i]) != b ||
			math.Float32bits(twin[i]) != b || !sameAsVecDot(l.typ, vd, want) {
			t.Errorf("n=%d rows=%d: row %d = %g (twin %g, VecDot %g), generic %g",
				c.n, c.nRows, i, out[i], twin[i], vd, want)
		}
	}
	if out[c.nRows] != 42 {
		t.Errorf("n=%d rows=%d: wrote past the results", c.n, c.nRows)
	}
	back := make([]byte, c.nRows*size)
	if err := l.unpack(back, packed, c.nRows, c.n); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back, raw) {
		t.Errorf("n=%d rows=%d: unpacked rows differ from the originals", c.n, c.nRows)
	}
}

// sameAsVecDot reports whether VecDot's result vd matches the generic
// product want as the one rounding rule promises: bit for bit for the
// bit-exact types, and for Q4_0/Q8_0 on amd64, where every path gives
// the generic order's bits. The NEON Q4_0/Q8_0 kernels keep partial sums
// in lanes, so there VecDot may differ in the last bits; the interleave
// has no kernel there and the device does not hold weights in it.
func sameAsVecDot(typ Type, vd, want float32) bool {
	if bitExactTypes[typ] || runtime.GOARCH == "amd64" {
		return math.Float32bits(vd) == math.Float32bits(want)
	}
	return math.Abs(float64(vd-want)) <= 1e-4*(1+math.Abs(float64(want)))
}

// checkX16Errors checks the refusals of the layout's repack, product and
// unpack: widths that are not whole blocks (and zero), too little room,
// too few row bytes, a stride shorter than a row, short packed data,
// activations and results, and (in all three) a negative row count.
func checkX16Errors(t *testing.T, l x16Layout) {
	bs := l.typ.BlockSize()
	row := l.typ.TypeSize()                 // one block's row bytes
	act, _ := VecDotType(l.typ).RowSize(bs) // one block's activation bytes
	rows := make([]byte, 2*row)
	for _, c := range []struct {
		name          string
		dst           int
		n, nRows, str int
	}{
		{"width", 4096, bs + bs/2, 1, row},
		{"zero width", 4096, 0, 1, row},
		{"room", l.size(2, bs) - 1, bs, 2, row},
		{"rows", l.size(3, bs), bs, 3, row},
		{"stride", l.size(2, bs), bs, 2, row - 1},
		{"negative rows", 4096, bs, -1, row},
	} {
		if err := l.repack(make([]byte, c.dst), rows, c.str, c.nRows, c.n); err == nil {
			t.Errorf("repack, %s: no error", c.name)
		}
	}
	packed := make([]byte, l.size(1, bs))
	for _, c := range []struct {
		name                     string
		packed, nRows, n, act, m int
	}{
		{"width", len(packed), 1, bs + bs/2, act, 1},
		{"packed", len(packed) - 1, 1, bs, act, 1},
		{"activation", len(packed), 1, bs, act - 1, 1},
		{"results", len(packed), 1, bs, act, 0},
		{"negative rows", len(packed), -1, bs, act, 1},
	} {
		if err := l.product(packed[:c.packed], c.nRows, make([]byte, c.act), c.n, make([]float32, c.m)); err == nil {
			t.Errorf("product, %s: no error", c.name)
		}
	}
	for _, c := range []struct {
		name                  string
		dst, packed, nRows, n int
	}{
		{"width", row, len(packed), 1, bs + bs/2},
		{"packed", row, len(packed) - 1, 1, bs},
		{"room", row - 1, len(packed), 1, bs},
		{"negative rows", row, len(packed), -1, bs},
	} {
		if err := l.unpack(make([]byte, c.dst), packed[:c.packed], c.nRows, c.n); err == nil {
			t.Errorf("unpack, %s: no error", c.name)
		}
	}
}

// benchX16Repack measures the load-time copy of nRows rows of n into the
// layout's interleave and back (bytes: the file's).
func benchX16Repack(b *testing.B, l x16Layout, r *rand.Rand, n, nRows int) {
	size, _ := l.typ.RowSize(n)
	rows := l.raw(r, nRows, n, false)
	packed := make([]byte, l.size(nRows, n))
	if err := l.repack(packed, rows, size, nRows, n); err != nil { // for unpack run alone
		b.Fatal(err)
	}
	b.Run("repack", func(b *testing.B) {
		b.SetBytes(int64(len(rows)))
		for b.Loop() {
			if err := l.repack(packed, rows, size, nRows, n); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unpack", func(b *testing.B) {
		b.SetBytes(int64(len(rows)))
		for b.Loop() {
			if err := l.unpack(rows, packed, nRows, n); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchX16VsFile measures a decode step's product over rows in the
// file's layout (VecDotRows: the four-row kernel) and interleaved (the
// layout's product, sub-benchmarks named name), A and B alternated in
// one run; bytes are the file's, for both.
func benchX16VsFile(b *testing.B, l x16Layout, r *rand.Rand, name string, shapes []struct{ n, nRows int }) {
	for _, s := range shapes {
		size, _ := l.typ.RowSize(s.n)
		rows := l.raw(r, s.nRows, s.n, false)
		act := l.act(r, s.n, false)
		packed := make([]byte, l.size(s.nRows, s.n))
		if err := l.repack(packed, rows, size, s.nRows, s.n); err != nil {
			b.Fatal(err)
		}
		out := make([]float32, s.nRows)
		for round := range 2 {
			b.Run(fmt.Sprintf("n=%d/rows=%d/file/%d", s.n, s.nRows, round), func(b *testing.B) {
				b.SetBytes(int64(len(rows)))
				for b.Loop() {
					VecDotRows(l.typ, rows, size, s.nRows, act, s.n, out)
				}
			})
			b.Run(fmt.Sprintf("n=%d/rows=%d/%s/%d", s.n, s.nRows, name, round), func(b *testing.B) {
				b.SetBytes(int64(len(rows)))
				for b.Loop() {
					if err := l.product(packed, s.nRows, act, s.n, out); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
