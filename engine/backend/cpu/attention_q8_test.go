package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// TestAttendQ8: attention over a Q8_0 cache equals, bit for bit,
// attention over an F32 cache holding the dequantized values — the Q8_0
// path only widens differently — for head sizes that are and are not
// whole blocks, one and many query rows, with and without assembly.
func TestAttendQ8(t *testing.T) {
	defer func() { useAsm = haveAsm }()
	for _, asm := range []bool{false, haveAsm} {
		useAsm = asm
		for _, c := range []struct{ heads, kvHeads, hd int }{{8, 4, 8}, {4, 2, 64}, {14, 2, 64}, {4, 4, 16}} {
			dim := c.kvHeads * c.hd
			const ctx = 150
			r := rand.New(rand.NewPCG(uint64(c.hd), 3))
			q8, err := NewKV(backend.KVSpec{Type: quant.Q8_0, Context: ctx, Dim: dim})
			if err != nil {
				t.Fatal(err)
			}
			f32, _ := NewKV(backend.KVSpec{Type: quant.F32, Context: ctx, Dim: dim})
			k, v := make([]float32, ctx*dim), make([]float32, ctx*dim)
			for i := range k {
				k[i], v[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			}
			pos := make([]int32, ctx)
			for i := range pos {
				pos[i] = int32(i)
			}
			q8.Store(pos, k, v)
			// The F32 cache gets what Q8_0 holds, widened by quant.
			kq, vq := q8.Q8()
			kd, vd := make([]float32, ctx*dim), make([]float32, ctx*dim)
			if err := quant.Dequantize(quant.Q8_0, kq, kd); err != nil {
				t.Fatal(err)
			}
			if err := quant.Dequantize(quant.Q8_0, vq, vd); err != nil {
				t.Fatal(err)
			}
			f32.Store(pos, kd, vd)
			a := backend.Attention{Heads: c.heads, KVHeads: c.kvHeads, HeadDim: c.hd, Scale: float32(1 / math.Sqrt(float64(c.hd)))}
			for _, rows := range [][2]int{{0, ctx}, {ctx - 1, ctx}, {70, 75}} {
				p := pos[rows[0]:rows[1]]
				n := len(p)
				qv := make([]float32, n*c.heads*c.hd)
				for i := range qv {
					qv[i] = float32(r.NormFloat64())
				}
				b := New(2)
				got, want := make([]float32, len(qv)), make([]float32, len(qv))
				b.Attend(got, qv, nil, q8, p, &a, nil)
				b.Attend(want, qv, nil, f32, p, &a, nil)
				b.Close()
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("asm %v %+v rows %v: out[%d] = %v, F32 cache gives %v", asm, c, rows, i, got[i], want[i])
					}
				}
			}
		}
	}
}
