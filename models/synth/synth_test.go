package synth

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/quant"
)

func fileHash(t *testing.T, s Spec) string {
	t.Helper()
	w, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(buf.Bytes()))
}

// TestGolden pins the bytes of generated files: a seed must give the
// same model in every version, or published benchmark files could not be
// recreated. The hashes were taken from the first, sequential generator.
func TestGolden(t *testing.T) {
	golden := map[string]string{
		"llama F32":  "67f1b0d9200c30f84431b2122260f784376c1b3ddabf23e0ffbc857a176f804a",
		"llama Q8_0": "d493f0869c1c4ccde6ca951f10844381430c413ffbeea467afd572ee2dd491f2",
		"llama Q4_K": "c8b715ca886e5617c88c7edccab83f6f649c31ac023af3c96b81b99ff1900209",
		"qwen2 F32":  "545657517cac992b26b8ed45156796a78f2cd4adde40951009677d63e523b8be",
		"qwen2 Q8_0": "5f1eadeb6f782e12e334c27ed6938ef17ae872e8efd2e43a9339452e6f503312",
		"qwen2 Q4_K": "6e4961fffcd31de705f98d5f5b9ee4a0f02bc100f42bf1dd3af63a72eff4e107",
		"qwen3 F32":  "27be0968eb51396943ffa144c2bc6c2f5ec7fd8ffa5fb388681ed2244dbd90c2",
		"qwen3 Q8_0": "bbf4f8bc7bf806ba972aeb5e3a591d635d31e44958972f794f370ec01175f04c",
		"qwen3 Q4_K": "5404fc0d02339f71621a32eb1c1a320a938013c6c737007549d2c351fdd3dbdf",
		"phi3 F32":   "ffc420d8e2d34c4ea11b206a65345cdbe383bb79565edfe23b2b36d2fd06d26e",
		"phi3 Q8_0":  "13a6e3bb9e407131bc157b1f162215373682b66c0eaca924b1786fdd95364a57",
		"phi3 Q4_K":  "1379e23b54a37dff7335199f8056a9d0236b61484a08a05627dca2be3e487767",
	}
	for _, a := range []string{"llama", "qwen2", "qwen3", "phi3"} {
		for _, typ := range []quant.Type{quant.F32, quant.Q8_0, quant.Q4_K} {
			key := fmt.Sprintf("%s %v", a, typ)
			t.Run(key, func(t *testing.T) {
				s := Tiny(a)
				s.Type = typ
				if typ == quant.Q4_K {
					s.Embd, s.FF = 256, 512
				}
				for _, workers := range []int{1, 3} {
					s.Workers = workers
					if got := fileHash(t, s); got != golden[key] {
						t.Errorf("workers %d: sha256 %s, want %s", workers, got, golden[key])
					}
				}
			})
		}
	}
}

// TestRNGAt checks that jumping into the stream gives the same draws as
// walking it.
func TestRNGAt(t *testing.T) {
	const seed = 12345
	walk := &rng{state: seed}
	var seq []float64
	for range 301 {
		seq = append(seq, walk.normal())
	}
	for _, m := range []int{0, 1, 2, 3, 17, 100, 299, 300} {
		r := rngAt(seed, uint64(m))
		for i := m; i < len(seq); i++ {
			if got := r.normal(); got != seq[i] {
				t.Fatalf("rngAt(%d): draw %d = %v, want %v", m, i, got, seq[i])
			}
		}
	}
}

// TestRecipeSizes checks the per-tensor types against the sizes of the
// files llama-quantize made for the reference table (reported in
// MiB by llama-bench): a Qwen2.5-0.5B shape with a 32000-token untied
// vocabulary, and TinyLlama-1.1B.
func TestRecipeSizes(t *testing.T) {
	qwen, _ := Preset("qwen2.5-0.5b", "F16", 1)
	qwen.Vocab, qwen.Tied = 32000, false
	tiny, _ := Preset("tinyllama-1.1b", "F16", 1)
	for _, tc := range []struct {
		s      Spec
		ft     FileType
		wantMi float64
	}{
		{qwen, "F16", 792}, {qwen, "Q8_0", 421}, {qwen, "Q4_K_M", 284}, {qwen, "Q4_0", 237},
		{tiny, "Q8_0", 1115}, {tiny, "Q4_K_M", 636}, {tiny, "Q4_0", 607},
	} {
		s := tc.s
		s.FileType = tc.ft
		ts, err := s.Tensors()
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for _, x := range ts {
			total += x.Bytes()
		}
		mi := float64(total) / (1 << 20)
		if mi < tc.wantMi-1 || mi > tc.wantMi+1 {
			t.Errorf("%s %d×%d %s: %.1f MiB, llama.cpp's file %v MiB", s.Arch, s.Layers, s.Embd, tc.ft, mi, tc.wantMi)
		}
	}
}

// TestRecipeRules spot-checks the rules on the 0.5B and 1.1B shapes.
func TestRecipeRules(t *testing.T) {
	types := func(name string, ft FileType) map[string]quant.Type {
		s, err := Preset(name, ft, 1)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := s.Tensors()
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]quant.Type{}
		for _, x := range ts {
			m[x.Name] = x.Type
		}
		return m
	}
	for _, tc := range []struct {
		shape  string
		ft     FileType
		tensor string
		want   quant.Type
	}{
		// Tied: the embedding is treated as the output; 896 is not whole
		// Q6_K blocks, so Q8_0.
		{"qwen2.5-0.5b", "Q4_0", "token_embd.weight", quant.Q8_0},
		{"qwen2.5-0.5b", "Q4_0", "blk.0.attn_q.weight", quant.Q4_0},
		{"qwen2.5-0.5b", "Q4_K_M", "blk.0.attn_q.weight", quant.Q5_0},
		{"qwen2.5-0.5b", "Q4_K_M", "blk.0.attn_v.weight", quant.Q8_0},
		{"qwen2.5-0.5b", "Q4_K_M", "blk.3.attn_v.weight", quant.Q5_0},
		{"qwen2.5-0.5b", "Q4_K_M", "blk.5.ffn_down.weight", quant.Q6_K},
		{"qwen2.5-0.5b", "Q4_K_M", "blk.4.ffn_down.weight", quant.Q4_K},
		{"qwen2.5-0.5b", "Q6_K", "blk.4.ffn_down.weight", quant.Q6_K},
		{"qwen2.5-0.5b", "Q6_K", "blk.4.ffn_up.weight", quant.Q8_0},
		{"qwen2.5-0.5b", "F16", "token_embd.weight", quant.F16},
		{"tinyllama-1.1b", "Q4_0", "output.weight", quant.Q6_K},
		{"tinyllama-1.1b", "Q4_0", "token_embd.weight", quant.Q4_0},
		{"tinyllama-1.1b", "Q8_0", "output.weight", quant.Q8_0},
		{"tinyllama-1.1b", "Q4_K_M", "blk.21.attn_v.weight", quant.Q6_K},
		{"tinyllama-1.1b", "Q4_K_M", "blk.2.attn_v.weight", quant.Q4_K},
		{"tinyllama-1.1b", "Q4_K_M", "blk.2.attn_output.weight", quant.Q4_K},
		{"llama3.2-1b", "Q4_K_M", "token_embd.weight", quant.Q6_K},
	} {
		if got := types(tc.shape, tc.ft)[tc.tensor]; got != tc.want {
			t.Errorf("%s %s %s: %v, want %v", tc.shape, tc.ft, tc.tensor, got, tc.want)
		}
	}
}

// TestFileTypeWritten: the file records general.file_type and the types
// of Tensors.
func TestFileTypeWritten(t *testing.T) {
	s := Tiny("llama")
	s.Embd, s.FF = 256, 512
	s.FileType = "Q4_K_M"
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := Write(path, s); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if v, ok := f.Uint("general.file_type"); !ok || v != 15 {
		t.Errorf("general.file_type %d %v, want 15", v, ok)
	}
	ts, _ := s.Tensors()
	for _, x := range ts {
		ti, ok := f.Tensor(x.Name)
		if !ok || ti.Type != x.Type {
			t.Errorf("%s: in file %v, planned %v", x.Name, ti, x.Type)
		}
	}
	if _, err := Preset("nope", "Q4_0", 1); err == nil {
		t.Error("unknown preset accepted")
	}
	if _, err := Preset("qwen2.5-0.5b", "Q3_X", 1); err == nil {
		t.Error("unknown file type accepted")
	}
	bad := Tiny("llama")
	bad.FileType = "nope"
	if _, err := Build(bad); err == nil {
		t.Error("unknown file type built")
	}
}

// TestPresetParams pins the desktop shapes to their models' parameter
// counts as published (Llama 3.1 8B: 8,030,261,248; Qwen2.5-7B:
// 7,615,616,512, of which 6.53B outside the embeddings, per its model
// card), so a wrong width or count in a preset shows here.
func TestPresetParams(t *testing.T) {
	for _, tc := range []struct {
		shape string
		want  int64
	}{
		{"llama3-8b", 8_030_261_248},
		{"qwen2.5-7b", 7_615_616_512},
	} {
		s, err := Preset(tc.shape, "Q4_K_M", 1)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := s.Tensors()
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, x := range ts {
			k := int64(1)
			for _, d := range x.Shape {
				k *= int64(d)
			}
			n += k
		}
		if n != tc.want {
			t.Errorf("%s: %d parameters, want %d", tc.shape, n, tc.want)
		}
	}
}
