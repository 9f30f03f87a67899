package quant

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// The SIMD kernels are pinned to the generic code (vecDotGeneric) on
// every implementation level this machine has (simdLevels: "go" always,
// "avx2" and "avx512" on amd64 CPUs that have them, "neon" and "dotprod"
// on arm64), selected by flipping the feature variables. The arm64
// kernels are tested under user-mode emulation: GOARCH=arm64 go test
// -exec qemu-aarch64 (QEMU_CPU=max has dotprod; QEMU_CPU=cortex-a72 has
// not, so there the dotprod kernels must not even be selected).
//
// Two kinds of check:
//   - bit-identical: the K-quant kernels reproduce the generic arithmetic
//     exactly (exact integer sums per super-block, then the same float
//     operations in the same order), on any data; every kernel is
//     bit-identical on data whose float sums are exact (scales that are
//     powers of two, float elements on a coarse grid), which pins every
//     integer product and sum, extremes such as -128·-128 included.
//   - within rounding: on realistic data the 32-element block types and
//     the float types sum their per-block terms in float32 lanes, in
//     another order than the generic code's running sum (float32 for the
//     blocks, float64 for the float types). Each block term is exact or
//     rounded once or twice, and either summation errs by at most about
//     (terms per lane)·2⁻²⁴·Σ|term|, so the two agree within
//     (steps+16)·2⁻²²·Σ|w·x|, steps = n / max(block size, 32).

// bitExactTypes have kernels that are bit-identical on any data.
var bitExactTypes = map[Type]bool{Q2_K: true, Q3_K: true, Q4_K: true, Q5_K: true, Q6_K: true, IQ4_XS: true}

// forLevels runs f once per implementation level, as a subtest.
func forLevels(t *testing.T, f func(t *testing.T, level string)) {
	for _, l := range simdLevels() {
		t.Run(l, func(t *testing.T) {
			defer setSIMDLevel(l)()
			f(t, l)
		})
	}
}

// testRowLens are element counts of one block, a few blocks (odd counts
// exercise unrolled loops' tails), and the widths of real models.
func testRowLens(typ Type) []int {
	bs := max(typ.BlockSize(), VecDotType(typ).BlockSize())
	ns := []int{bs, 3 * bs, 7 * bs}
	for _, n := range []int{896, 2048, 4096, 4864} {
		if n%bs == 0 {
			ns = append(ns, n)
		}
	}
	if bs == 1 { // the float kernels' tails
		ns = append(ns, 1, 31, 33, 63, 65, 100)
	}
	return ns
}

// magnitude is Σ|w·x| over the dequantized operands, plus Σ|m·s| of the
// Q8_1 min terms: a bound on the terms either summation adds.
func magnitude(t *testing.T, typ Type, wq, aq []byte, n int) float64 {
	at := VecDotType(typ)
	wd, ad := mustDequantize(t, typ, wq, n), mustDequantize(t, at, aq, n)
	var mag float64
	for i := range wd {
		mag += math.Abs(float64(wd[i]) * float64(ad[i]))
		if math.IsInf(mag, 0) || math.IsNaN(mag) {
			t.Fatalf("%v: test data overflow", typ)
		}
	}
	if at == Q8_1 {
		for b := 0; b < n/32; b++ {
			mag += math.Abs(float64(fp16(wq[b*typ.TypeSize()+2:])) * float64(fp16(aq[36*b+2:])))
		}
	}
	return mag
}

func checkClose(t *testing.T, typ Type, n int, got, want float32, mag float64, what string) {
	t.Helper()
	if bitExactTypes[typ] {
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Errorf("%v n=%d %s: got %g (%#x), generic %g (%#x): want bit-identical",
				typ, n, what, got, math.Float32bits(got), want, math.Float32bits(want))
		}
		return
	}
	steps := n / max(typ.BlockSize(), 32)
	tol := float64(steps+16) * 0x1p-22 * mag
	if d := math.Abs(float64(got) - float64(want)); !(d <= tol) {
		t.Errorf("%v n=%d %s: got %g, generic %g: |diff| %.3g > tolerance %.3g",
			typ, n, what, got, want, d, tol)
	}
}

// TestSIMDMatchesGeneric compares every kernel with the generic code on
// realistic quantized rows (the activations quantized the way the CPU
// backend does it, with an offset on some rows to exercise the min terms).
func TestSIMDMatchesGeneric(t *testing.T) {
	forLevels(t, func(t *testing.T, level string) {
		r := rand.New(rand.NewPCG(21, 22))
		for _, typ := range vecDotTypes {
			at := VecDotType(typ)
			for _, n := range testRowLens(typ) {
				for trial := range 3 {
					w, x := normalData(r, n, 0.05), normalData(r, n, 1)
					if trial == 1 {
						for i := range x {
							x[i] += 0.7
						}
					}
					wq := mustQuantize(t, typ, w)
					size, _ := at.RowSize(n)
					aq := make([]byte, size)
					if err := QuantizeActivations(at, x, aq); err != nil {
						t.Fatal(err)
					}
					got, want := VecDot(typ, wq, aq, n), vecDotGeneric(typ, wq, aq, n)
					checkClose(t, typ, n, got, want, magnitude(t, typ, wq, aq, n), fmt.Sprintf("trial %d", trial))
				}
			}
		}
	})
}

// kernelless lists, per level, the types that run the generic code on
// purpose: MXFP4 has no NEON kernel yet (gpt-oss's experts, written for
// amd64 first; arm64 has no test machine here but qemu).
var kernelless = map[string]map[Type]bool{
	"neon":    {MXFP4: true},
	"dotprod": {MXFP4: true},
}

// TestSIMDCoversEveryType checks that every level above "go" runs a
// kernel for every VecDot type, so that the comparisons here cannot pass
// by running the generic code twice.
func TestSIMDCoversEveryType(t *testing.T) {
	forLevels(t, func(t *testing.T, level string) {
		for _, typ := range vecDotTypes {
			n := max(typ.BlockSize(), VecDotType(typ).BlockSize(), 32)
			wsize, _ := typ.RowSize(n)
			asize, _ := VecDotType(typ).RowSize(n)
			_, ok := vecDotFast(typ, make([]byte, wsize), make([]byte, asize), n)
			if !ok && kernelless[level][typ] {
				continue
			}
			if ok != (level != "go") {
				t.Errorf("%v at level %s: SIMD kernel %v, want %v", typ, level, ok, level != "go")
			}
		}
	})
}

// Patterns for the quant bytes of extreme-case blocks.
var bytePatterns = []struct {
	name string
	f    func(r *rand.Rand, i int) byte
}{
	{"random", func(r *rand.Rand, _ int) byte { return byte(r.Uint32()) }},
	{"0x00", func(*rand.Rand, int) byte { return 0 }},
	{"0xff", func(*rand.Rand, int) byte { return 0xff }},
	{"0x80", func(*rand.Rand, int) byte { return 0x80 }},
	{"0x7f", func(*rand.Rand, int) byte { return 0x7f }},
	{"0x88/0x77", func(_ *rand.Rand, i int) byte { return []byte{0x88, 0x77}[i%2] }},
	{"0x80/0x7f", func(_ *rand.Rand, i int) byte { return []byte{0x80, 0x7f}[i/7%2] }},
}

// Half-float powers of two for the exact tests: ½, 1, 2.
var halfPow2 = []uint16{0x3800, 0x3c00, 0x4000}

// exactRow fills nb blocks of t with quant bytes from pat and power-of-
// two scales (so every float operation on them is exact), or, for the
// float types, small multiples of ¼. Q8_K gets consistent bsums. zero
// sets every scale to +0 instead.
func exactRow(r *rand.Rand, t Type, n int, pat func(*rand.Rand, int) byte, zero bool) []byte {
	size, _ := t.RowSize(n)
	b := make([]byte, size)
	for i := range b {
		b[i] = pat(r, i)
	}
	half := func(off int) {
		h := halfPow2[r.IntN(len(halfPow2))]
		if zero {
			h = 0
		}
		binary.LittleEndian.PutUint16(b[off:], h)
	}
	switch t {
	case F32, F16, BF16:
		for i := range n {
			v := float32(r.IntN(65)-32) / 4
			switch t {
			case F32:
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
			case F16:
				binary.LittleEndian.PutUint16(b[2*i:], FP32ToFP16(v))
			default:
				binary.LittleEndian.PutUint16(b[2*i:], FP32ToBF16(v))
			}
		}
		return b
	}
	bs := t.TypeSize()
	for blk := 0; blk < n/t.BlockSize(); blk++ {
		o := blk * bs
		switch t {
		case Q4_0, Q5_0, Q8_0, IQ4_NL, IQ4_XS:
			half(o)
		case MXFP4:
			// E8M0 has no zero: 0 is its smallest scale, 2^-128.
			b[o] = byte(127 + r.IntN(3))
			if zero {
				b[o] = 0
			}
		case Q4_1, Q5_1, Q8_1, Q4_K, Q5_K:
			half(o)
			half(o + 2)
		case Q2_K:
			half(o + 80)
			half(o + 82)
		case Q3_K:
			half(o + 108)
		case Q6_K:
			half(o + 208)
		case Q8_K:
			d := []float32{0.5, 1, 2}[r.IntN(3)]
			if zero {
				d = 0
			}
			binary.LittleEndian.PutUint32(b[o:], math.Float32bits(d))
			setQ8KSums(b[o : o+bs])
		}
	}
	return b
}

// TestSIMDExact requires bit-identical results on data where every float
// operation is exact, with quant bytes at the ends of their ranges.
func TestSIMDExact(t *testing.T) {
	forLevels(t, func(t *testing.T, level string) {
		r := rand.New(rand.NewPCG(23, 24))
		exact := map[Type]int{}
		defer func() {
			t.Logf("bit-exact comparisons: %v", exact)
			for _, typ := range vecDotTypes {
				if exact[typ] < 20 {
					t.Errorf("%v: only %d bit-exact comparisons", typ, exact[typ])
				}
			}
		}()
		for _, typ := range vecDotTypes {
			at := VecDotType(typ)
			for _, n := range testRowLens(typ) {
				for _, wp := range bytePatterns {
					for _, ap := range bytePatterns {
						if wp.name != "random" && ap.name != "random" && n > 256 {
							continue // the fixed patterns need only short rows
						}
						for _, zero := range []bool{false, true} {
							if zero && (wp.name != "random" || n > 512) {
								continue
							}
							wq := exactRow(r, typ, n, wp.f, zero)
							aq := exactRow(r, at, n, ap.f, false)
							got, want := VecDot(typ, wq, aq, n), vecDotGeneric(typ, wq, aq, n)
							what := fmt.Sprintf("weights %s (zero scales %v), activations %s", wp.name, zero, ap.name)
							// Sums stay exact while Σ|term| < 2²⁴ units of
							// the smallest scale product (¼·¼, or a 1/16
							// grid for the float types); beyond that the
							// data only allow the rounding tolerance.
							if mag := magnitude(t, typ, wq, aq, n); mag >= 0x1p20 {
								checkClose(t, typ, n, got, want, mag, what)
								continue
							}
							exact[typ]++
							if math.Float32bits(got) != math.Float32bits(want) {
								t.Errorf("%v n=%d %s: got %g, generic %g", typ, n, what, got, want)
							}
						}
					}
				}
			}
		}
	})
}

// forRowShapes runs f at every level for every type VecDot supports, on
// rows of each count of blocks (of the larger of the weight and the
// activation block size) and on rows of 4096; r is one random source per
// level, seeded with seed.
func forRowShapes(t *testing.T, seed uint64, blocks []int, f func(t *testing.T, r *rand.Rand, typ, at Type, n int)) {
	forLevels(t, func(t *testing.T, level string) {
		r := rand.New(rand.NewPCG(seed, seed+1))
		for _, typ := range vecDotTypes {
			at := VecDotType(typ)
			bs := max(typ.BlockSize(), at.BlockSize())
			for _, k := range blocks {
				f(t, r, typ, at, k*bs)
			}
			f(t, r, typ, at, 4096)
		}
	})
}

// TestVecDotMulti checks that each result of VecDotMulti is bit-identical
// to VecDot on the same activation row at the same level, for counts that
// leave every remainder of the four-row kernels, and that VecDotRows
// matches VecDot row by row.
func TestVecDotMulti(t *testing.T) {
	forRowShapes(t, 25, []int{1, 3, 5, 7}, func(t *testing.T, r *rand.Rand, typ, at Type, n int) {
		wq, _, _ := weightRows(t, r, typ, n, 1, 0)
		acts, arow, stride := actRows(t, r, at, n, 11, 6) // padded rows
		for _, nActs := range []int{1, 2, 3, 4, 5, 6, 7, 8, 11} {
			out := make([]float32, nActs+1)
			out[nActs] = 42
			VecDotMulti(typ, wq, acts, stride, nActs, n, out)
			for i := range nActs {
				want := VecDot(typ, wq, acts[i*stride:i*stride+arow], n)
				if math.Float32bits(out[i]) != math.Float32bits(want) {
					t.Errorf("%v n=%d nActs=%d: out[%d] = %g, VecDot %g", typ, n, nActs, i, out[i], want)
				}
			}
			if out[nActs] != 42 {
				t.Errorf("%v: VecDotMulti wrote past nActs", typ)
			}
		}

		// VecDotRows: three weight rows against the first activation row.
		wrow, _ := typ.RowSize(n)
		rows := make([]byte, 0, 3*(wrow+2))
		for range 3 {
			rows = append(rows, mustQuantize(t, typ, normalData(r, n, 0.05))...)
			rows = append(rows, 0xee, 0xee)
		}
		out := make([]float32, 3)
		VecDotRows(typ, rows, wrow+2, 3, acts[:arow], n, out)
		for i := range 3 {
			want := VecDot(typ, rows[i*(wrow+2):i*(wrow+2)+wrow], acts[:arow], n)
			if math.Float32bits(out[i]) != math.Float32bits(want) {
				t.Errorf("%v n=%d: VecDotRows[%d] = %g, VecDot %g", typ, n, i, out[i], want)
			}
		}
	})
}

// TestVecDotRows checks that each result of VecDotRows is bit-identical
// to VecDot on the same weight row at the same level, for row counts that
// leave every remainder of the four-row kernels, with padded rows, and
// that it writes nothing past nRows.
func TestVecDotRows(t *testing.T) {
	forRowShapes(t, 43, []int{1, 3, 5}, func(t *testing.T, r *rand.Rand, typ, at Type, n int) {
		rows, wrow, stride := weightRows(t, r, typ, n, 9, 5)
		act, _, _ := actRows(t, r, at, n, 1, 0)
		for _, nRows := range []int{1, 3, 4, 5, 8, 9} {
			out := make([]float32, nRows+1)
			out[nRows] = 42
			VecDotRows(typ, rows, stride, nRows, act, n, out)
			for i := range nRows {
				want := VecDot(typ, rows[i*stride:i*stride+wrow], act, n)
				if math.Float32bits(out[i]) != math.Float32bits(want) {
					t.Errorf("%v n=%d nRows=%d: out[%d] = %g, VecDot %g", typ, n, nRows, i, out[i], want)
				}
			}
			if out[nRows] != 42 {
				t.Errorf("%v: VecDotRows wrote past nRows", typ)
			}
		}
	})
}

func TestVecDotMultiBadInput(t *testing.T) {
	const n = 256
	typ := Q4_0
	arow, _ := Q8_0.RowSize(n)
	wrow, _ := typ.RowSize(n)
	w, acts := make([]byte, wrow), make([]byte, 3*arow)
	for _, c := range []struct {
		name          string
		typ           Type
		w, acts       []byte
		stride, nActs int
		n             int
	}{
		{"unsupported type", Q8_K, w, acts, arow, 3, n},
		{"short weights", typ, w[:wrow-1], acts, arow, 3, n},
		{"short activations", typ, w, acts[:3*arow-1], arow, 3, n},
		{"small stride", typ, w, acts, arow - 1, 3, n},
		{"huge stride", typ, w, acts, math.MaxInt / 2, 3, n},
		{"partial block", typ, w, acts, arow, 3, n - 1},
		{"negative n", typ, w, acts, arow, 3, -32},
	} {
		out := []float32{1, 2, 3}
		VecDotMulti(c.typ, c.w, c.acts, c.stride, c.nActs, c.n, out)
		for i, v := range out {
			if !math.IsNaN(float64(v)) {
				t.Errorf("VecDotMulti %s: out[%d] = %g, want NaN", c.name, i, v)
			}
		}
	}
	out := []float32{1, 2}
	VecDotMulti(typ, w, acts, arow, 3, n, out) // out too short
	if !math.IsNaN(float64(out[0])) || !math.IsNaN(float64(out[1])) {
		t.Errorf("VecDotMulti with short out: %v, want NaNs", out)
	}
	VecDotMulti(typ, w, acts, arow, 0, n, nil) // nothing to do, no panic
	out = []float32{1, 2, 3}
	VecDotRows(typ, w, wrow, 3, acts, n, out) // rows buffer holds one row only
	for i, v := range out {
		if !math.IsNaN(float64(v)) {
			t.Errorf("VecDotRows short rows: out[%d] = %g, want NaN", i, v)
		}
	}
}

func TestSIMDNoAllocs(t *testing.T) {
	forLevels(t, func(t *testing.T, level string) {
		r := rand.New(rand.NewPCG(27, 28))
		const n = 1024
		for _, typ := range vecDotTypes {
			at := VecDotType(typ)
			wq, _, _ := weightRows(t, r, typ, n, 1, 0)
			acts, arow, _ := actRows(t, r, at, n, 5, 0)
			out := make([]float32, 5)
			if a := testing.AllocsPerRun(20, func() { VecDot(typ, wq, acts, n) }); a != 0 {
				t.Errorf("%v VecDot: %v allocations", typ, a)
			}
			if a := testing.AllocsPerRun(20, func() { VecDotMulti(typ, wq, acts, arow, 5, n, out) }); a != 0 {
				t.Errorf("%v VecDotMulti: %v allocations", typ, a)
			}
			if a := testing.AllocsPerRun(20, func() { VecDotRows(typ, wq, len(wq), 1, acts, n, out) }); a != 0 {
				t.Errorf("%v VecDotRows: %v allocations", typ, a)
			}
			if a := testing.AllocsPerRun(20, func() { VecDotTile(typ, wq, len(wq), 1, acts, arow, 5, n, out, 1) }); a != 0 {
				t.Errorf("%v VecDotTile: %v allocations", typ, a)
			}
		}
	})
}

// TestSIMDLevelEnv checks that CHURON_NOSIMD=1 selects the generic code
// and that CHURON_CPU caps the level at each one this machine has: it
// reruns this test binary with the variables set, since the features
// are read once at start-up.
func TestSIMDLevelEnv(t *testing.T) {
	if os.Getenv("CHURON_SIMD_CHILD") == "1" {
		_, known := CPUSetting()
		fmt.Printf("level=%s known=%v\n", SIMDLevel(), known)
		return
	}
	levels := simdLevels()
	t.Logf("SIMD level %s; levels here: %v", SIMDLevel(), levels)
	if got, want := SIMDLevel(), levels[len(levels)-1]; got != want && os.Getenv("CHURON_NOSIMD") == "" && os.Getenv("CHURON_CPU") == "" {
		t.Errorf("SIMDLevel() = %q, want the best available, %q", got, want)
	}
	best := levels[len(levels)-1]
	cases := []struct{ nosimd, cpu, want string }{
		{"1", "", "level=go known=true"},
		{"", "", "level=" + best + " known=true"},
		{"", "no-such-level", "level=" + best + " known=false"},
	}
	if os.Getenv("CHURON_NOSIMD") == "1" {
		cases = cases[:1] // the best level is unknown here
	}
	for _, l := range levels {
		cases = append(cases, struct{ nosimd, cpu, want string }{"", l, "level=" + l + " known=true"})
	}
	for _, c := range cases {
		out, err := runChild(t, []string{"-test.run=^TestSIMDLevelEnv$", "-test.count=1"},
			"CHURON_SIMD_CHILD=1", "CHURON_NOSIMD="+c.nosimd, "CHURON_CPU="+c.cpu)
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), c.want) {
			t.Errorf("CHURON_NOSIMD=%q CHURON_CPU=%q: child printed %q, want %q", c.nosimd, c.cpu, out, c.want)
		}
	}
	// setSIMDLevel restores what it changed.
	before := SIMDLevel()
	restore := setSIMDLevel("go")
	if SIMDLevel() != "go" {
		t.Errorf("setSIMDLevel(go): level %q", SIMDLevel())
	}
	restore()
	if SIMDLevel() != before {
		t.Errorf("after restore: level %q, want %q", SIMDLevel(), before)
	}
}

// qemuArch names qemu-user's emulator for a GOARCH ("qemu-" + name).
var qemuArch = map[string]string{"arm64": "aarch64", "amd64": "x86_64", "riscv64": "riscv64",
	"ppc64le": "ppc64le", "s390x": "s390x", "loong64": "loongarch64"}

// runChild reruns this test binary with args and extra environment
// variables. A binary cross-built for another architecture and run with
// go test -exec qemu-<arch> cannot exec itself where binfmt_misc does
// not know qemu (the kernel answers "exec format error"), so the child
// then runs under the same emulator, with the same QEMU_CPU.
func runChild(t *testing.T, args []string, env ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err == nil || !errors.Is(err, syscall.ENOEXEC) {
		return out, err
	}
	emu := "qemu-" + qemuArch[runtime.GOARCH]
	path, lerr := exec.LookPath(emu)
	if lerr != nil {
		t.Skipf("SKIP: cannot exec the test binary (%v) and no %s to run it: %v", err, emu, lerr)
	}
	cmd = exec.Command(path, append([]string{os.Args[0]}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	return cmd.CombinedOutput()
}

// TestVecDotTile checks every element of tiles of several shapes against
// VecDot at the same level: bit-identical (against the generic code where
// the prompt tiles may take the tile, tileRoundsGeneric: VecDot rounds as
// it there too, TestGOrderDispatch).
func TestVecDotTile(t *testing.T) {
	forRowShapes(t, 35, []int{1, 3}, func(t *testing.T, r *rand.Rand, typ, at Type, n int) {
		rows, _, rowStride := weightRows(t, r, typ, n, 5, 3)
		acts, _, actStride := actRows(t, r, at, n, 9, 5)
		for _, shape := range [][2]int{{1, 1}, {5, 1}, {1, 4}, {3, 5}, {5, 9}, {2, 8}} {
			nRows, nActs := shape[0], shape[1]
			checkTile(t, fmt.Sprintf("%v n=%d %dx%d", typ, n, nRows, nActs),
				tileCase{typ, n, rows, rowStride, nRows, acts, actStride, nActs}, 2, tileWant(SIMDLevel(), typ, n))
		}
	})
}

func TestVecDotTileBadInput(t *testing.T) {
	const n = 256
	wrow, _ := Q4_0.RowSize(n)
	arow, _ := Q8_0.RowSize(n)
	rows, acts := make([]byte, 2*wrow), make([]byte, 3*arow)
	for _, c := range []struct {
		name                 string
		rows, acts           []byte
		rowStride, actStride int
		out                  []float32
		outStride            int
	}{
		{"short rows", rows[:2*wrow-1], acts, wrow, arow, make([]float32, 6), 2},
		{"short acts", rows, acts[:3*arow-1], wrow, arow, make([]float32, 6), 2},
		{"short out", rows, acts, wrow, arow, make([]float32, 5), 2},
		{"small out stride", rows, acts, wrow, arow, make([]float32, 6), 1},
		{"small row stride", rows, acts, wrow - 1, arow, make([]float32, 6), 2},
	} {
		VecDotTile(Q4_0, c.rows, c.rowStride, 2, c.acts, c.actStride, 3, n, c.out, c.outStride)
		for i, v := range c.out {
			if !math.IsNaN(float64(v)) {
				t.Errorf("%s: out[%d] = %g, want NaN", c.name, i, v)
			}
		}
	}
}

// TestVecDotF32Levels checks that the typed float32 API equals
// VecDot(F32) at every level, for lengths around the kernels' steps.
func TestVecDotF32Levels(t *testing.T) {
	forLevels(t, func(t *testing.T, level string) {
		r := rand.New(rand.NewPCG(39, 40))
		for _, n := range []int{1, 31, 32, 63, 64, 65, 1000, 4096} {
			w, x := normalData(r, n, 1), normalData(r, n, 1)
			wb, xb := make([]byte, 4*n), make([]byte, 4*n)
			for i := range w {
				binary.LittleEndian.PutUint32(wb[4*i:], math.Float32bits(w[i]))
				binary.LittleEndian.PutUint32(xb[4*i:], math.Float32bits(x[i]))
			}
			got, want := VecDotF32(w, x), VecDot(F32, wb, xb, n)
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Errorf("n=%d: VecDotF32 %g, VecDot(F32) %g", n, got, want)
			}
			checkClose(t, F32, n, got, vecDotGeneric(F32, wb, xb, n), magnitude(t, F32, wb, xb, n), "VecDotF32")
		}
	})
}

// FuzzVecDotSIMD feeds raw bytes as weight and activation rows (scales
// forced to powers of two, Q8_K bsums made consistent, so every sum is
// exact) and requires every level to match the generic code bit for bit,
// in VecDot and in VecDotMulti.
func FuzzVecDotSIMD(f *testing.F) {
	f.Add(uint8(3), uint8(2), []byte{0x80, 0x7f, 0xff, 0x00, 0x88, 0x11})
	f.Add(uint8(12), uint8(1), []byte{0xff})
	f.Fuzz(func(t *testing.T, ti, nblk uint8, raw []byte) {
		if len(raw) == 0 {
			return
		}
		typ := vecDotTypes[int(ti)%len(vecDotTypes)]
		at := VecDotType(typ)
		bs := max(typ.BlockSize(), at.BlockSize())
		n := bs * (1 + int(nblk)%9)
		r := rand.New(rand.NewPCG(uint64(len(raw)), uint64(raw[0])))
		pat := func(_ *rand.Rand, i int) byte { return raw[i%len(raw)] ^ byte(i/len(raw)) }
		wq := exactRow(r, typ, n, pat, false)
		arow, _ := at.RowSize(n)
		acts := make([]byte, 5*arow)
		for i := range 5 {
			copy(acts[i*arow:], exactRow(r, at, n, pat, false))
		}
		want := make([]float32, 5)
		for i := range 5 {
			want[i] = vecDotGeneric(typ, wq, acts[i*arow:(i+1)*arow], n)
		}
		exact := true
		for i := range 5 {
			if magnitude(t, typ, wq, acts[i*arow:(i+1)*arow], n) >= 0x1p20 {
				exact = false
			}
		}
		out := make([]float32, 5)
		for _, l := range simdLevels() {
			restore := setSIMDLevel(l)
			VecDotMulti(typ, wq, acts, arow, 5, n, out)
			for i := range 5 {
				got := VecDot(typ, wq, acts[i*arow:(i+1)*arow], n)
				if math.Float32bits(got) != math.Float32bits(out[i]) {
					t.Errorf("%v %s: VecDot %g, VecDotMulti %g", typ, l, got, out[i])
				}
				if exact && math.Float32bits(got) != math.Float32bits(want[i]) {
					t.Errorf("%v n=%d %s: got %g, generic %g", typ, n, l, got, want[i])
				} else if !exact {
					checkClose(t, typ, n, got, want[i], magnitude(t, typ, wq, acts[i*arow:(i+1)*arow], n), l)
				}
			}
			restore()
		}
	})
}

// TestVecDotRowsLong covers rows at and past the prepared kernels' limits
// (16384 elements for pairs, 24576 for quads): each result must still
// equal VecDot's.
func TestVecDotRowsLong(t *testing.T) {
	forLevels(t, func(t *testing.T, level string) {
		r := rand.New(rand.NewPCG(41, 42))
		for _, typ := range []Type{Q4_0, Q5_0, Q8_0} {
			for _, n := range []int{16384, 16416, 16448, 24576, 24608} {
				rows, wrow, _ := weightRows(t, r, typ, n, 2, 0)
				acts, arow, _ := actRows(t, r, Q8_0, n, 5, 0)
				out := make([]float32, 10)
				VecDotTile(typ, rows, wrow, 2, acts, arow, 5, n, out, 2)
				for a := range 5 {
					for i := range 2 {
						want := VecDot(typ, rows[i*wrow:(i+1)*wrow], acts[a*arow:(a+1)*arow], n)
						if math.Float32bits(out[a*2+i]) != math.Float32bits(want) {
							t.Errorf("%v n=%d: tile[%d,%d] = %g, VecDot %g", typ, n, a, i, out[a*2+i], want)
						}
					}
				}
			}
		}
	})
}

// TestPreparedKernelShapes runs the kernels that lay activations out in
// pairs or quads of blocks (Q4_0, Q5_0, Q8_0 at the avx512 level) over
// every block count from 1 to 13, so that whole groups, partial last
// groups and both accumulators' turns all occur: VecDot within rounding
// of the generic code, and VecDotRows, VecDotMulti and VecDotTile
// bit-identical to VecDot, on unaligned strides.
func TestPreparedKernelShapes(t *testing.T) {
	forLevels(t, func(t *testing.T, level string) {
		r := rand.New(rand.NewPCG(45, 46))
		for _, typ := range []Type{Q4_0, Q5_0, Q8_0} {
			for nb := 1; nb <= 13; nb++ {
				n := 32 * nb
				const nRows, nActs = 6, 5
				rows, wrow, rowStride := weightRows(t, r, typ, n, nRows, 1)
				acts, arow, actStride := actRows(t, r, Q8_0, n, nActs, 3)
				want := make([]float32, nActs*nRows)
				for a := range nActs {
					for i := range nRows {
						wq, aq := rows[i*rowStride:i*rowStride+wrow], acts[a*actStride:a*actStride+arow]
						want[a*nRows+i] = VecDot(typ, wq, aq, n)
						checkClose(t, typ, n, want[a*nRows+i], vecDotGeneric(typ, wq, aq, n), magnitude(t, typ, wq, aq, n), "VecDot")
					}
				}
				same := func(what string, a, i int, got float32) {
					if w := want[a*nRows+i]; math.Float32bits(got) != math.Float32bits(w) {
						t.Errorf("%v nb=%d %s: [act %d, row %d] = %g, VecDot %g", typ, nb, what, a, i, got, w)
					}
				}
				out := make([]float32, nActs*nRows)
				for a := range nActs {
					VecDotRows(typ, rows, rowStride, nRows, acts[a*actStride:a*actStride+arow], n, out[:nRows])
					for i := range nRows {
						same("VecDotRows", a, i, out[i])
					}
				}
				for i := range nRows {
					VecDotMulti(typ, rows[i*rowStride:i*rowStride+wrow], acts, actStride, nActs, n, out[:nActs])
					for a := range nActs {
						same("VecDotMulti", a, i, out[a])
					}
				}
				VecDotTile(typ, rows, rowStride, nRows, acts, actStride, nActs, n, out, nRows)
				for a := range nActs {
					for i := range nRows {
						same("VecDotTile", a, i, out[a*nRows+i])
					}
				}
			}
		}
	})
}

// TestQuantizeActivationsLevels checks that the SIMD rounding of
// activations to Q8_0 writes the same bytes as the Go code, on ordinary
// rows and on blocks of zeros, subnormals, huge values, exact halves, and
// NaNs and infinities (which the Go code handles itself).
func TestQuantizeActivationsLevels(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	const nb = 12
	rows := map[string][]float32{}
	for _, name := range []string{"normal", "zeros", "subnormal", "huge", "halves", "nan", "inf", "mixed"} {
		x := normalData(r, nb*32, 1)
		switch name {
		case "zeros":
			clear(x[32:64])
			x[96] = float32(math.Copysign(0, -1))
		case "subnormal":
			for i := range x[:64] {
				x[i] = float32(r.NormFloat64()) * 0x1p-130
			}
		case "huge":
			for i := range x[32:96] {
				x[32+i] *= 3e37
			}
		case "halves":
			// amax 127 makes id 1, so v·id = v: exact halves test ties.
			for i := range x[:64] {
				x[i] = float32(r.IntN(254)-127) + 0.5
			}
			x[0], x[32] = 127, -127
		case "nan":
			x[40] = float32(math.NaN())
			x[5*32+7] = float32(math.NaN())
		case "inf":
			x[70] = float32(math.Inf(1))
			x[nb*32-1] = float32(math.Inf(-1))
		case "mixed":
			x[3] = float32(math.NaN())
			x[33] = float32(math.Inf(-1))
			clear(x[64:96])
		}
		rows[name] = x
	}
	size, _ := Q8_0.RowSize(nb * 32)
	for _, l := range simdLevels() {
		// The SIMD code takes ordinary rows whole (so the comparisons
		// below test it), and stops at a NaN.
		if l != "avx512" && l != "avx2" {
			continue
		}
		restore := setSIMDLevel(l)
		buf := make([]byte, size)
		if k := quantFast(Q8_0, rows["normal"], buf); k != nb {
			t.Errorf("%s: %d of %d ordinary blocks rounded by SIMD", l, k, nb)
		}
		if k := quantFast(Q8_0, rows["nan"], buf); k != 1 {
			t.Errorf("%s: SIMD rounded %d blocks, want 1 (a NaN in the second)", l, k)
		}
		restore()
	}
	for name, x := range rows {
		restore := setSIMDLevel("go")
		want := make([]byte, size)
		if err := QuantizeActivations(Q8_0, x, want); err != nil {
			t.Fatal(err)
		}
		restore()
		for _, l := range simdLevels() {
			restore := setSIMDLevel(l)
			got := make([]byte, size)
			if err := QuantizeActivations(Q8_0, x, got); err != nil {
				t.Fatal(err)
			}
			restore()
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%s %s: byte %d (block %d) = %#x, Go code %#x", name, l, i, i/34, got[i], want[i])
					break
				}
			}
		}
	}
}

// TestF16FourActShapes runs F16's four-activation kernel (avx512) over
// lengths around its 64-element step, so that rows with and without a
// tail occur: VecDotMulti and VecDotTile bit-identical to VecDot.
func TestF16FourActShapes(t *testing.T) {
	forLevels(t, func(t *testing.T, level string) {
		r := rand.New(rand.NewPCG(49, 50))
		for _, n := range []int{1, 63, 64, 65, 100, 128, 191, 896} {
			const nRows, nActs = 5, 6
			rowStride, actStride := 2*n+6, 2*n+2
			rows := make([]byte, nRows*rowStride)
			for i := range nRows {
				copy(rows[i*rowStride:], mustQuantize(t, F16, normalData(r, n, 0.05)))
			}
			acts := make([]byte, nActs*actStride)
			for i := range nActs {
				copy(acts[i*actStride:], mustQuantize(t, F16, normalData(r, n, 1)))
			}
			out := make([]float32, nActs*nRows)
			VecDotTile(F16, rows, rowStride, nRows, acts, actStride, nActs, n, out, nRows)
			multi := make([]float32, nActs)
			for i := range nRows {
				wq := rows[i*rowStride : i*rowStride+2*n]
				VecDotMulti(F16, wq, acts, actStride, nActs, n, multi)
				for a := range nActs {
					want := VecDot(F16, wq, acts[a*actStride:a*actStride+2*n], n)
					if got := out[a*nRows+i]; math.Float32bits(got) != math.Float32bits(want) {
						t.Errorf("n=%d VecDotTile[act %d, row %d] = %g, VecDot %g", n, a, i, got, want)
					}
					if math.Float32bits(multi[a]) != math.Float32bits(want) {
						t.Errorf("n=%d VecDotMulti[act %d, row %d] = %g, VecDot %g", n, a, i, multi[a], want)
					}
				}
			}
		}
	})
}

// TestVecDotTileActCounts pins the tile kernels of every activation-row
// count (Q4_0 and Q8_0 at avx512 run groups of up to eight through one
// kernel per count, a weight block decoded once per group) to VecDot, bit
// for bit (from qTileMinActs rows on, the prompt tiles to the generic code:
// tileRoundsGeneric): every count from 1 to 17 (groups of 8 and their splits), odd
// and even weight row counts (the two streams), padded strides, and block
// counts that leave every tail of the quad and pair loops.
func TestVecDotTileActCounts(t *testing.T) {
	defer setPromptTiles(true)()
	forLevels(t, func(t *testing.T, level string) {
		r := rand.New(rand.NewPCG(61, 62))
		for _, typ := range []Type{Q4_0, Q8_0, Q5_0} {
			for _, nb := range []int{1, 2, 3, 4, 5, 6, 7, 9, 28} {
				n := 32 * nb
				const maxRows, maxActs = 7, 17
				rows, _, rowStride := weightRows(t, r, typ, n, maxRows, 2)
				acts, _, actStride := actRows(t, r, Q8_0, n, maxActs, 3)
				for nActs := 1; nActs <= maxActs; nActs++ {
					for _, nRows := range []int{1, 2, maxRows} {
						checkTile(t, fmt.Sprintf("%v nb=%d %dx%d", typ, nb, nRows, nActs),
							tileCase{typ, n, rows, rowStride, nRows, acts, actStride, nActs}, 1, tileWant(level, typ, n))
					}
				}
			}
		}
	})
}
