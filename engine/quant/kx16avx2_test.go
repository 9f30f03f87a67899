//go:build amd64 && !noasm

package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// kx16Paths runs f at every level, and at avx2 once per kernel this
// machine can run there: VPMADDUBSW, and AVX-VNNI where it has it.
func kx16Paths(t *testing.T, f func(t *testing.T)) {
	forLevels(t, func(t *testing.T, level string) {
		if got, want := KX16Kernel(), level != "go"; got != want {
			t.Fatalf("KX16Kernel() = %v at %s, want %v", got, level, want)
		}
		if level != "avx2" {
			f(t)
			return
		}
		defer func(saved bool) { kx16VNNI = saved }(kx16VNNI)
		for _, vnni := range []bool{false, true} {
			if vnni && !cpu.X86.HasAVXVNNI {
				t.Log("no AVX-VNNI: its kernel not run")
				continue
			}
			kx16VNNI = vnni
			t.Run(map[bool]string{false: "maddubs", true: "vnni"}[vnni], f)
		}
	})
}

// checkKX16 repacks nRows Q4_K rows of n elements (stride pad bytes past
// the row) and checks the level's kernel, where one runs, and the Go twin
// against the generic product of each original row, bit for bit, and
// that nothing is written past the results.
func checkKX16(t *testing.T, raw, act []byte, n, nRows, pad int) {
	t.Helper()
	size, _ := Q4_K.RowSize(n)
	stride := size + pad
	rows := make([]byte, nRows*stride)
	for i := range nRows {
		copy(rows[i*stride:], raw[i*size:(i+1)*size])
	}
	packed := make([]byte, KX16Size(nRows, n))
	if err := RepackQ4_KX16(packed, rows, stride, nRows, n); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, nRows+1)
	out[nRows] = 42
	if ran := kx16Fast(packed, nRows, act, n/QK_K, out[:nRows]); ran != KX16Kernel() {
		t.Fatalf("n=%d rows=%d: kernel ran %v, KX16Kernel() %v", n, nRows, ran, KX16Kernel())
	}
	if !KX16Kernel() {
		kx16Generic(packed, nRows, act, n/QK_K, out[:nRows])
	}
	twin := make([]float32, nRows)
	kx16Generic(packed, nRows, act, n/QK_K, twin)
	for i := range nRows {
		want := vecDotGeneric(Q4_K, rows[i*stride:i*stride+size], act, n)
		if math.Float32bits(out[i]) != math.Float32bits(want) || math.Float32bits(twin[i]) != math.Float32bits(want) {
			t.Errorf("n=%d rows=%d: row %d = %g (twin %g), generic %g", n, nRows, i, out[i], twin[i], want)
		}
	}
	if out[nRows] != 42 {
		t.Errorf("n=%d rows=%d: wrote past the results", n, nRows)
	}
}

// TestKX16Kernels runs the interleave kernels of every level (both avx2
// kernels) on random rows: partial and whole groups of 16, odd
// super-block counts, padded strides.
func TestKX16Kernels(t *testing.T) {
	kx16Paths(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(38, 16))
		for _, n := range []int{256, 768, 1280, 2304} {
			for _, nRows := range []int{1, 15, 16, 17, 33} {
				for _, pad := range []int{0, 16} {
					checkKX16(t, rawKRows(r, Q4_K, nRows, n), rawQ8KRows(r, 1, n), n, nRows, pad)
				}
			}
		}
	})
}

// TestKX16KernelsBounds runs the kernels at the extremes of their exact
// integer sums: every quant 15, every scale and min 63, every activation
// quant −128 (the VPMADDUBSW kernel's 16-bit lanes reach −30720) or 127.
func TestKX16KernelsBounds(t *testing.T) {
	const n, nRows = 768, 17
	size, _ := Q4_K.RowSize(n)
	raw := make([]byte, nRows*size)
	for i := range raw {
		raw[i] = 0xff
	}
	for o := 0; o < len(raw); o += 144 {
		binary.LittleEndian.PutUint16(raw[o:], FP32ToFP16(0.01))
		binary.LittleEndian.PutUint16(raw[o+2:], FP32ToFP16(-0.003))
	}
	kx16Paths(t, func(t *testing.T) {
		for _, q := range []int8{-128, 127} {
			act := make([]byte, n/QK_K*292)
			for o := 0; o < len(act); o += 292 {
				binary.LittleEndian.PutUint32(act[o:], math.Float32bits(0.02))
				for i := range 256 {
					act[o+4+i] = byte(q)
				}
				setQ8KSums(act[o : o+292])
			}
			checkKX16(t, raw, act, n, nRows, 0)
		}
	})
}
