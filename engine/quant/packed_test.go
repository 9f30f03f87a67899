package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// The tile kernels are pinned to the generic twins bit for bit: each
// block's integer sum is exact and its scaling and running sum are the
// generic code's float32 operations in the same order.

func randRows(r *rand.Rand, typ Type, rows, n int, scale float64) []byte {
	f := make([]float32, rows*n)
	for i := range f {
		f[i] = float32(r.NormFloat64() * scale)
	}
	// Outliers and zero blocks: extreme quants and zero scales.
	for range rows {
		f[r.IntN(len(f))] = float32(40 * scale)
		z := r.IntN(len(f)/32) * 32
		clear(f[z : z+32])
	}
	size, _ := typ.RowSize(n)
	b := make([]byte, rows*size)
	for i := range rows {
		var err error
		if typ == Q8_0 || typ == Q8_K {
			err = QuantizeActivations(typ, f[i*n:(i+1)*n], b[i*size:(i+1)*size])
		} else {
			err = Quantize(typ, f[i*n:(i+1)*n], b[i*size:(i+1)*size])
		}
		if err != nil {
			panic(err)
		}
	}
	return b
}

func TestVecDotPackedExact(t *testing.T) {
	if !AMX() {
		t.Skip("SKIP: this CPU or system has no AMX tile kernels (CHURON_NOAMX, no AMX-INT8, or not Linux/amd64); nothing runs them here")
	}
	for _, typ := range []Type{Q4_0, Q5_0, Q8_0, Q4_K, Q6_K} {
		if !PackedKernel(typ) {
			t.Fatalf("%v: AMX is on but has no tile kernel", typ)
		}
		r := rand.New(rand.NewPCG(1, uint64(typ)))
		at := VecDotType(typ)
		ns := []int{32, 96, 896, 4864}
		if at == Q8_K {
			ns = []int{256, 768, 4864}
		}
		for _, n := range ns {
			for _, shape := range [][2]int{{1, 1}, {16, 16}, {17, 5}, {15, 33}, {40, 16}, {33, 47}} {
				nRows, nActs := shape[0], shape[1]
				wrow, _ := typ.RowSize(n)
				arow, _ := at.RowSize(n)
				stride := wrow + 18*(nRows%2) // a padded stride now and then
				w := make([]byte, stride*nRows)
				wr := randRows(r, typ, nRows, n, 1)
				for i := range nRows {
					copy(w[i*stride:], wr[i*wrow:(i+1)*wrow])
				}
				acts := randRows(r, at, nActs, n, 3)
				var p PackedActs
				if !p.Reset(at, nActs, n) {
					t.Fatalf("Reset refused %v", at)
				}
				for a := range nActs {
					p.PackRow(a, acts[a*arow:])
				}
				outStride := nRows + 3
				out := make([]float32, nActs*outStride)
				for i := range out {
					out[i] = -7 // untouched past each row's nRows
				}
				var s PackedScratch
				VecDotPacked(typ, w, stride, nRows, &p, out, outStride, &s)
				for a := range nActs {
					for i := range nRows {
						want := vecDotGeneric(typ, w[i*stride:i*stride+wrow], acts[a*arow:(a+1)*arow], n)
						if got := out[a*outStride+i]; math.Float32bits(got) != math.Float32bits(want) {
							t.Fatalf("%v n=%d %dx%d: row %d act %d: got %g, generic %g", typ, n, nRows, nActs, i, a, got, want)
						}
					}
					for i := nRows; i < outStride && a*outStride+i < len(out); i++ {
						if out[a*outStride+i] != -7 {
							t.Fatalf("%v n=%d %dx%d: wrote past the rows at act %d col %d", typ, n, nRows, nActs, a, i)
						}
					}
				}
			}
		}
	}
}

func TestVecDotPackedBadInput(t *testing.T) {
	var p PackedActs
	if p.Reset(Q4_0, 4, 64) || p.Reset(Q8_0, 4, 40) || p.Reset(Q8_0, 0, 64) {
		t.Fatal("Reset took a type or shape no tile kernel has")
	}
	if !p.Reset(Q8_0, 4, 64) {
		t.Fatal("Reset refused Q8_0")
	}
	out := make([]float32, 8)
	var s PackedScratch
	// A Q4_K weight has no tile kernel (and wants Q8_K activations); rows
	// too short for two rows.
	VecDotPacked(Q4_K, make([]byte, 1024), 512, 2, &p, out, 2, &s)
	VecDotPacked(Q4_0, make([]byte, 40), 36, 2, &p, out, 2, &s)
	for i, v := range out {
		if !math.IsNaN(float64(v)) {
			t.Fatalf("out[%d] = %v, want NaN", i, v)
		}
	}
}

func BenchmarkVecDotPacked(b *testing.B) {
	for _, typ := range []Type{Q4_0, Q8_0} {
		if !PackedKernel(typ) {
			b.Skipf("no tile kernels here")
		}
		const n, nRows, nActs = 4864, 64, 128
		r := rand.New(rand.NewPCG(2, 2))
		w := randRows(r, typ, nRows, n, 1)
		acts := randRows(r, Q8_0, nActs, n, 1)
		wrow, _ := typ.RowSize(n)
		arow, _ := Q8_0.RowSize(n)
		out := make([]float32, nActs*nRows)
		b.Run(typ.String()+"/packed", func(b *testing.B) {
			var p PackedActs
			var s PackedScratch
			for b.Loop() {
				p.Reset(Q8_0, nActs, n)
				for a := range nActs {
					p.PackRow(a, acts[a*arow:])
				}
				VecDotPacked(typ, w, wrow, nRows, &p, out, nRows, &s)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*nRows*nActs)*1e3, "ps/MAC")
		})
		b.Run(typ.String()+"/kernel", func(b *testing.B) {
			var p PackedActs
			var s PackedScratch
			p.Reset(Q8_0, nActs, n)
			for a := range nActs {
				p.PackRow(a, acts[a*arow:])
			}
			for b.Loop() {
				VecDotPacked(typ, w, wrow, nRows, &p, out, nRows, &s)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*nRows*nActs)*1e3, "ps/MAC")
		})
		b.Run(typ.String()+"/tile", func(b *testing.B) {
			for b.Loop() {
				VecDotTile(typ, w, wrow, nRows, acts, arow, nActs, n, out, nRows)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*nRows*nActs)*1e3, "ps/MAC")
		})
	}
}

// TestAMXEnv: CHURON_NOAMX=1 (and CHURON_NOSIMD=1) turn the tile
// kernels off in a fresh process; without them they are on wherever the
// CPU and the system allow.
func TestAMXEnv(t *testing.T) {
	if os.Getenv("CHURON_AMX_CHILD") == "1" {
		fmt.Printf("amx=%v\n", AMX())
		return
	}
	t.Logf("AMX tile kernels in use: %v", AMX())
	for _, env := range []string{"CHURON_NOAMX=1", "CHURON_NOSIMD=1", "CHURON_CPU=avx512", "CHURON_CPU=avx2"} {
		out, err := runChild(t, []string{"-test.run=^TestAMXEnv$", "-test.count=1"}, "CHURON_AMX_CHILD=1", env)
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "amx=false") {
			t.Errorf("%s: child printed %q, want amx=false", env, out)
		}
	}
}
