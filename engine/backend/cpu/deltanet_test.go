package cpu

import (
	"math"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/internal/gdnref"
)

// deltaLayer is a DeltaNet layer of the given shape with parameters of
// the sizes real ones have (decays of about 0.9 a token).
func deltaLayer(kHeads, vHeads, hd, taps int) *backend.DeltaNet {
	d := &backend.DeltaNet{KHeads: kHeads, VHeads: vHeads, HeadDim: hd, ConvKernel: taps, Eps: 1e-6}
	d.Conv = make([]float32, taps*d.ConvDim())
	for i := range d.Conv {
		d.Conv[i] = float32(0.5 * math.Sin(float64(3*i+1)))
	}
	d.DTBias, d.A = make([]float32, vHeads), make([]float32, vHeads)
	for h := range vHeads {
		d.DTBias[h] = -2 + 0.3*float32(h%3)
		d.A[h] = -0.5 - 0.25*float32(h)
	}
	return d
}

// deltaInputs are n tokens of projections.
func deltaInputs(d *backend.DeltaNet, n int, seed float64) (qkv, alpha, beta []float32) {
	qkv = make([]float32, n*d.ConvDim())
	for i := range qkv {
		qkv[i] = float32(math.Sin(seed + 0.37*float64(i)))
	}
	alpha, beta = make([]float32, n*d.VHeads), make([]float32, n*d.VHeads)
	for i := range alpha {
		alpha[i] = float32(math.Cos(seed + 1.3*float64(i)))
		beta[i] = float32(math.Sin(seed - 0.7*float64(i)))
	}
	return qkv, alpha, beta
}

// TestDeltaNetOracle: the kernel's outputs and its state after a prompt
// and then single tokens match the float64 oracle, on shapes with value
// heads sharing key heads, head widths that take the vector kernels and
// one that does not, and convolutions of 4 and 3 taps, on 1 and 3 threads.
func TestDeltaNetOracle(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		kHeads, vHeads, hd, taps int
		threads                  int
	}{
		{"2x4x32", 2, 4, 32, 4, 1},
		{"1x3x20", 1, 3, 20, 3, 3},
		{"2x2x128", 2, 2, 128, 4, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := New(tc.threads)
			defer b.Close()
			d := deltaLayer(tc.kHeads, tc.vHeads, tc.hd, tc.taps)
			st := make([]byte, d.StateBytes())
			ref := gdnref.NewState(d)
			for step, n := range []int{7, 1, 1, 2} {
				qkv, alpha, beta := deltaInputs(d, n, float64(step))
				got := make([]float32, n*d.ValueDim())
				if err := b.DeltaNet(got, qkv, alpha, beta, st, n, d); err != nil {
					t.Fatal(err)
				}
				want := gdnref.Run(d, ref, qkv, alpha, beta, n)
				if e := maxRelErr(got, want); e > 2e-4 {
					t.Errorf("step %d (%d tokens): outputs off by %.2g of their largest", step, n, e)
				}
			}
			back := gdnref.FromBytes(d, st)
			for i, v := range ref.Conv {
				if math.Abs(back.Conv[i]-v) > 1e-6 {
					t.Fatalf("conv state %d: %v, want %v", i, back.Conv[i], v)
				}
			}
			got := make([]float32, len(back.S))
			for i, v := range back.S {
				got[i] = float32(v)
			}
			if e := maxRelErr(got, ref.S); e > 2e-4 {
				t.Errorf("state off by %.2g of its largest", e)
			}
		})
	}
}

// TestDeltaNetSplitInvariant: a prompt fed in one pass or in pieces
// leaves the same state and outputs, bit for bit: what lets a sequence's
// checkpoints be restored and fed on.
func TestDeltaNetSplitInvariant(t *testing.T) {
	b := New(2)
	defer b.Close()
	d := deltaLayer(2, 4, 32, 4)
	const n = 9
	qkv, alpha, beta := deltaInputs(d, n, 0.5)
	whole := make([]float32, n*d.ValueDim())
	st1 := make([]byte, d.StateBytes())
	if err := b.DeltaNet(whole, qkv, alpha, beta, st1, n, d); err != nil {
		t.Fatal(err)
	}
	st2 := make([]byte, d.StateBytes())
	parts := make([]float32, n*d.ValueDim())
	cd, vd, H := d.ConvDim(), d.ValueDim(), d.VHeads
	for _, r := range [][2]int{{0, 1}, {1, 3}, {3, 8}, {8, 9}} {
		lo, hi := r[0], r[1]
		if err := b.DeltaNet(parts[lo*vd:hi*vd], qkv[lo*cd:hi*cd], alpha[lo*H:hi*H], beta[lo*H:hi*H], st2, hi-lo, d); err != nil {
			t.Fatal(err)
		}
	}
	for i := range whole {
		if whole[i] != parts[i] {
			t.Fatalf("output %d: %v in one pass, %v in pieces", i, whole[i], parts[i])
		}
	}
	if string(st1) != string(st2) {
		t.Fatal("states differ")
	}
}

// maxRelErr is the largest |got − want| over the largest |want|.
func maxRelErr(got []float32, want []float64) float64 {
	var e, m float64
	for i, w := range want {
		e = math.Max(e, math.Abs(float64(got[i])-w))
		m = math.Max(m, math.Abs(w))
	}
	return e / math.Max(m, 1e-30)
}
