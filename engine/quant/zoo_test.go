package quant_test

// Tests against llama.cpp's own output: the quantzoo models in the shared
// test data were quantized by llama-quantize --pure from one F32 model, and
// dequant/ holds ggml's float32 dequantization of one tensor per type.

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/internal/quanttest"
	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/internal/testdata"
)

// zooModels are the quantzoo files; all but the mixed one hold every 2D
// weight in the named type.
var zooModels = []string{
	"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1",
	"Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS", "Q4_K_M-mixed",
}

func openZoo(t *testing.T, model string) *gguf.File {
	t.Helper()
	p := filepath.Join(testdata.Dir(t), "quantzoo", "zoo-"+model+".gguf")
	f, err := gguf.Open(p)
	if err != nil {
		t.Fatalf("open %s: %v", p, err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func tensorBytes(t *testing.T, f *gguf.File, name string) (*gguf.TensorInfo, []byte) {
	t.Helper()
	ti, ok := f.Tensor(name)
	if !ok {
		t.Fatalf("tensor %q missing", name)
	}
	data, err := f.TensorData(ti)
	if err != nil {
		t.Fatalf("tensor %q: %v", name, err)
	}
	return ti, data
}

func readF32File(t *testing.T, p string) []float32 {
	t.Helper()
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

// TestDequantizeZoo: Dequantize must reproduce ggml's float32 output bit
// for bit, for every type in the zoo.
func TestDequantizeZoo(t *testing.T) {
	const name = "blk.0.attn_q.weight"
	for _, model := range zooModels {
		t.Run(model, func(t *testing.T) {
			f := openZoo(t, model)
			ti, data := tensorBytes(t, f, name)
			want := readF32File(t, filepath.Join(testdata.Dir(t), "quantzoo", "dequant", "zoo-"+model+"."+name+".f32"))
			if uint64(len(want)) != ti.Elements() {
				t.Fatalf("reference has %d values, tensor %d", len(want), ti.Elements())
			}
			got := make([]float32, len(want))
			if err := quant.Dequantize(ti.Type, data, got); err != nil {
				t.Fatal(err)
			}
			bad := 0
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					if bad < 5 {
						t.Errorf("%v: element %d (block %d): got %g (%08x), ggml %g (%08x)",
							ti.Type, i, i/ti.Type.BlockSize(), got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
					}
					bad++
				}
			}
			if bad > 0 {
				t.Errorf("%v: %d of %d values differ from ggml", ti.Type, bad, len(got))
			}
		})
	}
}

// TestQuantizeZoo quantizes every weight of the F32 model and compares the
// bytes with llama-quantize's, tensor by tensor. The reference quantizers
// are deterministic and llama-quantize uses them when it has no imatrix,
// so every type must be byte-identical.
func TestQuantizeZoo(t *testing.T) {
	src := openZoo(t, "F32")
	for _, model := range zooModels[1:] {
		t.Run(model, func(t *testing.T) {
			f := openZoo(t, model)
			checked := 0
			for i := range f.Tensors {
				ti := &f.Tensors[i]
				if ti.Type == quant.F32 {
					continue // norms are kept F32 in every model
				}
				_, want := tensorBytes(t, f, ti.Name)
				si, raw := tensorBytes(t, src, ti.Name)
				if si.Type != quant.F32 || si.Elements() != ti.Elements() {
					t.Fatalf("%s: source is %v with %d elements", ti.Name, si.Type, si.Elements())
				}
				x := make([]float32, si.Elements())
				if err := quant.Dequantize(quant.F32, raw, x); err != nil {
					t.Fatal(err)
				}
				got := make([]byte, len(want))
				if err := quant.Quantize(ti.Type, x, got); err != nil {
					t.Fatalf("%s: %v", ti.Name, err)
				}
				checked++
				if bytes.Equal(got, want) {
					continue
				}
				bs, ts := ti.Type.BlockSize(), ti.Type.TypeSize()
				diff := 0
				first := -1
				for b := 0; b < len(got)/ts; b++ {
					if !bytes.Equal(got[b*ts:(b+1)*ts], want[b*ts:(b+1)*ts]) {
						if first < 0 {
							first = b
						}
						diff++
					}
				}
				rmsGot, rmsWant := quanttest.RMSError(t, ti.Type, got, x), quanttest.RMSError(t, ti.Type, want, x)
				t.Errorf("%s (%v): %d of %d blocks differ (first %d, elements %d..); RMS error ours %.6g, llama.cpp %.6g\n ours %x\n ggml %x",
					ti.Name, ti.Type, diff, len(got)/ts, first, first*bs, rmsGot, rmsWant,
					got[first*ts:(first+1)*ts], want[first*ts:(first+1)*ts])
			}
			if checked == 0 {
				t.Fatal("no quantized tensors found")
			}
			t.Logf("%d tensors byte-compared", checked)
		})
	}
}
