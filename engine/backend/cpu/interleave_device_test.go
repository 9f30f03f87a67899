package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// TestDeviceInterleave uploads Q4_K, Q6_K and Q8_0 matrices: the first
// two are held interleaved exactly where the level has their kernel (the
// token embeddings only from their first product on), the device's name
// says so for the types it holds and only for those, and every product —
// one input row (the interleave kernel), three (the kernel once per row),
// twenty (the rows unpacked for the tile kernels) — equals the file
// layout's bit for bit, over a last partial group of 16 rows and over
// the experts of a 3-D tensor sliced from its interleave.
func TestDeviceInterleave(t *testing.T) {
	t.Setenv("CHURON_REPACK", "1")
	const cols = 512
	r := rand.New(rand.NewPCG(38, 22))
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q6_K, quant.Q8_0} {
		l := layoutOf(typ)
		held := l != nil && l.fast()
		for _, c := range []struct {
			name string
			ne   [4]int
		}{
			{"w", [4]int{cols, 333, 1, 1}},       // 20 groups and 13 rows
			{lazyTable, [4]int{cols, 333, 1, 1}}, // a tied output
			{"experts", [4]int{cols, 48, 3, 1}},  // three experts of 3 groups
		} {
			t.Run(fmt.Sprintf("%v/%s", typ, c.name), func(t *testing.T) {
				tn := &backend.Tensor{Name: c.name, Type: typ, Ne: c.ne, Data: quantizedRows(t, r, typ, c.ne)}
				d := NewDevice(2)
				defer d.Close()
				w, err := d.Upload(tn)
				if err != nil {
					t.Fatal(err)
				}
				cw := weight(w)
				lazy := c.name == lazyTable
				if (cw.il != nil) != (held && !lazy) || (cw.lazy != nil) != (held && lazy) {
					t.Fatalf("interleaved %v, at its first product %v; want %v (level %s)", cw.il != nil, cw.lazy != nil, held, quant.SIMDLevel())
				}
				name := d.Name()
				if strings.Contains(name, "interleaved") != held || (held && !strings.Contains(name, typ.String()+" interleaved")) {
					t.Errorf("device %q holding %v (interleaved: %v)", name, typ, held)
				}
				ws := []backend.Weight{w}
				if c.ne[2] > 1 {
					ws = ws[:0]
					for e := range c.ne[2] {
						sw, err := d.WeightSlice(w, e)
						if err != nil {
							t.Fatal(err)
						}
						if (weight(sw).il != nil) != held {
							t.Fatalf("expert %d: interleaved %v", e, weight(sw).il != nil)
						}
						ws = append(ws, sw)
					}
				}
				for _, n := range []int{1, 3, 20} {
					x, err := d.Alloc(n * cols)
					if err != nil {
						t.Fatal(err)
					}
					for i := range host(x) {
						host(x)[i] = float32(r.NormFloat64())
					}
					for e, we := range ws {
						sub := we.Tensor()
						got, err := d.Alloc(n * sub.Rows())
						if err != nil {
							t.Fatal(err)
						}
						d.MatMul(got, we, x, n)
						if err := d.Sync(); err != nil {
							t.Fatal(err)
						}
						want := make([]float32, n*sub.Rows())
						d.b.MatMul(want, sub, host(x), n) // the file's layout
						for i, v := range want {
							if math.Float32bits(v) != math.Float32bits(host(got)[i]) {
								t.Fatalf("n=%d expert %d: result %d (row %d) = %g, file layout %g", n, e, i, i%sub.Rows(), host(got)[i], v)
							}
						}
					}
				}
				if held && lazy && cw.il == nil {
					t.Error("the token embeddings not interleaved at their first product")
				}
			})
		}
	}
}

// quantizedRows is a tensor of shape ne of normal random values in type t.
func quantizedRows(t *testing.T, r *rand.Rand, typ quant.Type, ne [4]int) []byte {
	t.Helper()
	vals := make([]float32, ne[0]*ne[1]*ne[2]*ne[3])
	for i := range vals {
		vals[i] = float32(r.NormFloat64())
	}
	size, ok := typ.RowSize(ne[0])
	if !ok {
		t.Fatalf("%v: rows of %d", typ, ne[0])
	}
	data := make([]byte, size*len(vals)/ne[0])
	if err := quant.Quantize(typ, vals, data); err != nil {
		t.Fatal(err)
	}
	return data
}
