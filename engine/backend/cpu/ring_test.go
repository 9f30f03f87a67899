package cpu

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// TestAttendRing: a sliding-window layer's ring, written position after
// position past its end so it wraps several times, attends bit for bit as
// a cache of every position does — for a prompt pass whose keys are
// stored before it attends, and a decode step; in a ring of whole key
// blocks and one whose blocks straddle the wrap (F32 rows are then
// copied). Its rows read and write as the full cache's.
func TestAttendRing(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const heads, kvHeads, hd = 4, 2, 32
	dim := kvHeads * hd
	for _, tc := range []struct{ window, ring, n int }{
		{30, 100, 20},   // blocks straddle the wrap
		{5, 576, 512},   // RingRows(5, …): a pass as long as the margin
		{64, 128, 65},   // a pass that fills the ring with the window
		{100, 192, 1},   // decode
		{1, 64, 64},     // a window of one
		{200, 1024, 33}, // a window of several blocks
	} {
		for _, typ := range []quant.Type{quant.F16, quant.F32, quant.Q8_0} {
			t.Run(fmt.Sprintf("%v/w%d-ring%d-n%d", typ, tc.window, tc.ring, tc.n), func(t *testing.T) {
				ctx := 3*tc.ring + 2*tc.n + 1
				full, _ := NewKV(backend.KVSpec{Type: typ, Context: ctx, Dim: dim})
				ring, err := NewKV(backend.KVSpec{Type: typ, Context: ctx, Dim: dim, Ring: tc.ring})
				if err != nil {
					t.Fatal(err)
				}
				if ring.Spec().Bytes()*int64(ctx) != full.Spec().Bytes()*int64(tc.ring) {
					t.Fatalf("a ring of %d rows holds %d bytes", tc.ring, ring.Spec().Bytes())
				}
				a := backend.Attention{Heads: heads, KVHeads: kvHeads, HeadDim: hd, Scale: float32(1 / math.Sqrt(hd)), Window: tc.window}
				b := New(2)
				defer b.Close()
				// Positions in passes of n, each stored then attended.
				for p0 := 0; p0+tc.n <= 3*tc.ring+tc.n; p0 += tc.n {
					pos := make([]int32, tc.n)
					for i := range pos {
						pos[i] = int32(p0 + i)
					}
					k, v := randFloats(r, tc.n*dim, 1), randFloats(r, tc.n*dim, 1)
					full.Store(pos, k, v)
					ring.Store(pos, k, v)
					q := randFloats(r, tc.n*heads*hd, 1)
					want, got := make([]float32, len(q)), make([]float32, len(q))
					b.Attend(want, q, nil, full, pos, &a, nil)
					b.Attend(got, q, nil, ring, pos, &a, nil)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("pass at %d: value %d = %v, want %v", p0, i, got[i], want[i])
						}
					}
					// The rows the ring holds read as the full cache's, and
					// written to another ring, read back the same.
					end := p0 + tc.n
					lo := max(0, end-tc.ring)
					other, _ := NewKV(ring.Spec())
					for _, values := range []bool{false, true} {
						wantRows, _ := full.AppendRows(nil, values, lo, end)
						gotRows, err := ring.AppendRows(nil, values, lo, end)
						if err != nil || !bytes.Equal(gotRows, wantRows) {
							t.Fatalf("rows [%d,%d): %v, or other bytes than the full cache's", lo, end, err)
						}
						if err := other.SetRows(values, lo, gotRows); err != nil {
							t.Fatal(err)
						}
						again, _ := other.AppendRows(nil, values, lo, end)
						if !bytes.Equal(again, wantRows) {
							t.Fatalf("rows [%d,%d) written to a ring read back otherwise", lo, end)
						}
					}
				}
				if _, err := ring.AppendRows(nil, false, 0, tc.ring+1); err == nil {
					t.Fatal("more positions than the ring holds read")
				}
			})
		}
	}
}

// TestAttendRingTooShort: attending over more positions than a ring
// holds is a bug of the caller, and panics rather than read other rows.
func TestAttendRingTooShort(t *testing.T) {
	kv, _ := NewKV(backend.KVSpec{Type: quant.F16, Context: 1000, Dim: 32, Ring: 64})
	b := New(1)
	defer b.Close()
	a := backend.Attention{Heads: 1, KVHeads: 1, HeadDim: 32, Scale: 1, Window: 60}
	pos := make([]int32, 8)
	for i := range pos {
		pos[i] = int32(200 + i)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	b.Attend(make([]float32, 8*32), make([]float32, 8*32), nil, kv, pos, &a, nil)
}

// BenchmarkAttendWindow is one Gemma 3 4B local layer's attention (8
// heads on 4 KV heads of 256, a window of 1024) at position 4096: a
// decode step and a prompt pass of 256, over a cache of every position
// and over a ring of 1536 rows.
func BenchmarkAttendWindow(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	a := backend.Attention{Heads: 8, KVHeads: 4, HeadDim: 256, Scale: 1, Window: 1024}
	const depth = 4096
	dim := a.KVHeads * a.HeadDim
	for _, ring := range []int{0, 1536} {
		for _, n := range []int{1, 256} {
			b.Run(fmt.Sprintf("ring=%d/n=%d", ring, n), func(b *testing.B) {
				kv, _ := NewKV(backend.KVSpec{Type: quant.F16, Context: depth + n, Dim: dim, Ring: ring})
				pos := make([]int32, depth+n)
				for i := range pos {
					pos[i] = int32(i)
				}
				for p := 0; p < len(pos); p += 256 {
					e := min(len(pos), p+256)
					kv.Store(pos[p:e], randFloats(r, (e-p)*dim, 1), randFloats(r, (e-p)*dim, 1))
				}
				q := randFloats(r, n*a.Heads*a.HeadDim, 1)
				dst := make([]float32, len(q))
				be := New(2)
				defer be.Close()
				b.ReportAllocs()
				for range b.N {
					be.Attend(dst, q, nil, kv, pos[depth:], &a, nil)
				}
			})
		}
	}
}
