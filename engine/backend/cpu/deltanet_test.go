package cpu

import (
	"math"
	"runtime"
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

// TestDeltaRowsPinned: the fused row kernel gives the bits of the four
// whole-matrix steps it replaces (scale, the dots with k, the rank-one
// update, the dots with q), with the vector kernels and with the Go
// twins, on head widths that take the vector kernel and one that does
// not.
func TestDeltaRowsPinned(t *testing.T) {
	saved := useAsm
	defer func() { useAsm = saved }()
	for _, asm := range []bool{false, true} {
		if asm && !haveAsm {
			continue
		}
		useAsm = asm
		for _, hd := range []int{8, 20, 32, 128} {
			s := make([]float32, hd*hd)
			k, q, v := make([]float32, hd), make([]float32, hd), make([]float32, hd)
			for i := range s {
				s[i] = float32(math.Sin(0.7*float64(i) + 0.1))
			}
			for i := range k {
				k[i] = float32(math.Cos(1.9*float64(i))) / 4
				q[i] = float32(math.Sin(2.3*float64(i)+1)) / 4
				v[i] = float32(math.Cos(0.3 * float64(i)))
			}
			want := append([]float32(nil), s...)
			wantOut, sk := make([]float32, hd), make([]float32, hd)
			got := append([]float32(nil), s...)
			gotOut := make([]float32, hd)
			for step, g := range []float32{0.93, 0.71, 0.999} {
				b, scale := 0.6+0.1*float32(step), float32(1/math.Sqrt(float64(hd)))
				scaleF32(want, g)
				dots(sk, k, want, hd, 1)
				for c := range hd {
					accum(want[c*hd:(c+1)*hd], []float32{(v[c] - sk[c]) * b}, k, hd)
				}
				dots(wantOut, q, want, hd, scale)
				deltaRows(got, k, q, v, gotOut, g, b, scale)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("asm %v, hd %d, step %d: state %d is %v, want %v", asm, hd, step, i, got[i], want[i])
					}
				}
				for i := range wantOut {
					if gotOut[i] != wantOut[i] {
						t.Fatalf("asm %v, hd %d, step %d: output %d is %v, want %v", asm, hd, step, i, gotOut[i], wantOut[i])
					}
				}
			}
		}
	}
}

// BenchmarkDeltaNet runs a 128-token prompt through one DeltaNet layer of
// Qwen 3.5 0.8B's shape (16 key and 16 value heads of 128) and of 4B's
// (16 and 32); -cpu sets the threads.
func BenchmarkDeltaNet(b *testing.B) {
	for _, sh := range []struct {
		name           string
		kHeads, vHeads int
	}{{"0.8b", 16, 16}, {"4b", 16, 32}} {
		b.Run(sh.name, func(b *testing.B) {
			be := New(runtime.GOMAXPROCS(0))
			defer be.Close()
			d := deltaLayer(sh.kHeads, sh.vHeads, 128, 4)
			const n = 128
			qkv, alpha, beta := deltaInputs(d, n, 0.25)
			dst := make([]float32, n*d.ValueDim())
			st := make([]byte, d.StateBytes())
			b.ResetTimer()
			for range b.N {
				if err := be.DeltaNet(dst, qkv, alpha, beta, st, n, d); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// TestMulAddPinned: the convolution's multiply-add kernel gives its Go
// twin's bits, with and without the add, on lengths with and without a
// tail.
func TestMulAddPinned(t *testing.T) {
	if !haveAsm {
		t.Skip("no vector kernels on this machine or build")
	}
	for _, n := range []int{1, 8, 13, 64, 8195} {
		x, w, base := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = float32(math.Sin(1.1*float64(i) + 0.3))
			w[i] = float32(math.Cos(0.7*float64(i))) / 3
			base[i] = float32(math.Sin(0.05 * float64(i)))
		}
		for _, add := range []bool{false, true} {
			want := append([]float32(nil), base...)
			mulAddGeneric(want, x, w, add)
			got := append([]float32(nil), base...)
			mulAdd(got, x, w, add)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("n %d add %v: %d is %v, want %v", n, add, i, got[i], want[i])
				}
			}
		}
	}
}
