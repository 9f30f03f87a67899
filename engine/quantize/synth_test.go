package quantize_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/quantize"
	"github.com/churon/churon/models/synth"
)

// TestSynthAgrees: a synthetic model written directly in a file type has
// the tensors that quantizing its F32 twin gives, so synth's benchmark
// files are what llama-quantize (and File) would make.
func TestSynthAgrees(t *testing.T) {
	dir := t.TempDir()
	for _, ft := range []string{"Q4_K_M", "Q3_K_M", "Q6_K"} {
		t.Run(ft, func(t *testing.T) {
			s := synth.Tiny("qwen2")
			s.Embd, s.FF, s.Layers, s.Heads, s.KVHeads = 96, 256, 3, 4, 2 // 96: fallbacks
			f32 := filepath.Join(dir, "f32.gguf")
			if err := synth.Write(f32, s); err != nil {
				t.Fatal(err)
			}
			s.FileType = synth.FileType(ft)
			direct := filepath.Join(dir, "direct.gguf")
			if err := synth.Write(direct, s); err != nil {
				t.Fatal(err)
			}
			quantized := filepath.Join(dir, "quantized.gguf")
			if _, err := quantize.File(context.Background(), f32, quantized, quantize.Options{Type: ft}); err != nil {
				t.Fatal(err)
			}
			a, err := gguf.Open(direct)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			b, err := gguf.Open(quantized)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if len(a.Tensors) != len(b.Tensors) {
				t.Fatalf("%d tensors, quantized %d", len(a.Tensors), len(b.Tensors))
			}
			for i := range a.Tensors {
				ta := &a.Tensors[i]
				tb, ok := b.Tensor(ta.Name)
				if !ok || tb.Type != ta.Type {
					t.Errorf("%s: synth %v, quantize %v", ta.Name, ta.Type, tb)
					continue
				}
				da, _ := a.TensorData(ta)
				db, _ := b.TensorData(tb)
				if !bytes.Equal(da, db) {
					t.Errorf("%s (%v): bytes differ", ta.Name, ta.Type)
				}
			}
		})
	}
}
