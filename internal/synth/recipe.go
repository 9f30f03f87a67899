package synth

import (
	"fmt"
	"sort"
	"strings"

	"github.com/churon/churon/engine/quant"
)

// FileType is a llama.cpp file type (llama_ftype) by its usual name:
// "F16", "Q8_0", "Q6_K", "Q4_K_M", "Q4_0" and so on.
type FileType string

type fileType struct {
	id   uint32     // general.file_type
	base quant.Type // the type most matrices get
}

// fileTypes lists the file types synth can make. The ids are llama.cpp's
// llama_ftype numbers, part of the format.
var fileTypes = map[FileType]fileType{
	"F32":    {0, quant.F32},
	"F16":    {1, quant.F16},
	"Q4_0":   {2, quant.Q4_0},
	"Q4_1":   {3, quant.Q4_1},
	"Q8_0":   {7, quant.Q8_0},
	"Q5_0":   {8, quant.Q5_0},
	"Q5_1":   {9, quant.Q5_1},
	"Q4_K_S": {14, quant.Q4_K},
	"Q4_K_M": {15, quant.Q4_K},
	"Q5_K_M": {17, quant.Q5_K},
	"Q6_K":   {18, quant.Q6_K},
	"BF16":   {32, quant.BF16},
}

// FileTypes lists the file types Spec.FileType accepts, sorted.
func FileTypes() []FileType {
	out := make([]FileType, 0, len(fileTypes))
	for k := range fileTypes {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// ParseFileType maps a name such as "q4_k_m" to a FileType.
func ParseFileType(name string) (FileType, error) {
	ft := FileType(strings.ToUpper(strings.TrimSpace(name)))
	if _, ok := fileTypes[ft]; !ok {
		return "", fmt.Errorf("synth: unknown file type %q (have %v)", name, FileTypes())
	}
	return ft, nil
}

// recipe picks the type of each weight matrix. With a FileType it
// follows llama-quantize's llama_tensor_get_type (llama.cpp, early 2025)
// for the dense Llama-family tensors synth writes:
//
//   - output.weight, or token_embd.weight when the output is tied: Q8_0
//     when its rows are not whole blocks of the base type; otherwise Q6_K
//     unless the base type is Q8_0.
//   - attn_v.weight and ffn_down.weight: Q6_K in the "more bits" layers
//     (the first and last eighth, and every third between) for Q4_K_M and
//     Q5_K_M; Q5_K in the first four (attn_v) or the first eighth
//     (ffn_down) of the layers for Q4_K_S.
//   - attn_qkv.weight (fused): Q5_K for Q4_K_M, Q6_K for Q5_K_M.
//   - Finally a K-quant whose rows are not whole 256-element blocks falls
//     back as llama.cpp does: Q4_K→Q5_0, Q5_K→Q5_1, Q6_K→Q8_0.
//
// Without a FileType every matrix has Spec.Type (output.weight
// Spec.OutputType when OutputTypeSet).
type recipe struct {
	s         Spec
	ft        fileType
	quantized bool
	iV, iDown int // attn_v and ffn_down tensors seen so far
}

func newRecipe(s Spec) *recipe {
	r := &recipe{s: s}
	if s.FileType != "" {
		r.ft = fileTypes[s.FileType]
		r.quantized = r.ft.base != quant.F32 && r.ft.base != quant.F16 && r.ft.base != quant.BF16
	}
	return r
}

// moreBits is llama.cpp's use_more_bits.
func moreBits(i, n int) bool {
	return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2
}

func (r *recipe) typeFor(name string, cols int) quant.Type {
	s := r.s
	if s.FileType == "" {
		if name == "output.weight" && s.OutputTypeSet {
			return s.OutputType
		}
		return s.Type
	}
	t := r.ft.base
	if !r.quantized {
		return t
	}
	ft := s.FileType
	n := s.Layers
	switch {
	case name == "output.weight" || (s.Tied && name == "token_embd.weight"):
		if cols%t.BlockSize() != 0 {
			t = quant.Q8_0
		} else if t != quant.Q8_0 {
			t = quant.Q6_K
		}
	case name == "token_embd.weight":
	case strings.HasSuffix(name, "attn_v.weight"):
		i := r.iV
		r.iV++
		if (ft == "Q4_K_M" || ft == "Q5_K_M") && moreBits(i, n) {
			t = quant.Q6_K
		} else if ft == "Q4_K_S" && i < 4 {
			t = quant.Q5_K
		}
	case strings.HasSuffix(name, "ffn_down.weight"):
		i := r.iDown
		r.iDown++
		if (ft == "Q4_K_M" || ft == "Q5_K_M") && moreBits(i, n) {
			t = quant.Q6_K
		} else if ft == "Q4_K_S" && i < n/8 {
			t = quant.Q5_K
		}
	case strings.HasSuffix(name, "attn_qkv.weight"):
		switch ft {
		case "Q4_K_M":
			t = quant.Q5_K
		case "Q5_K_M":
			t = quant.Q6_K
		}
	}
	if cols%t.BlockSize() != 0 {
		switch t {
		case quant.Q4_K:
			t = quant.Q5_0
		case quant.Q5_K:
			t = quant.Q5_1
		case quant.Q6_K:
			t = quant.Q8_0
		}
		if cols%t.BlockSize() != 0 {
			t = quant.F16
		}
	}
	return t
}

// presets are the real model shapes benchmarks use. Norms are 1, weights
// normal(0, 0.02) like a freshly initialised transformer.
var presets = map[string]Spec{
	// Qwen2.5-0.5B: 896 is not a multiple of 256, so its K-quant files are
	// mostly Q5_0.
	"qwen2.5-0.5b": {Arch: "qwen2", Embd: 896, Layers: 24, Heads: 14, KVHeads: 2, FF: 4864, Vocab: 151936,
		Context: 32768, Tied: true, RopeBase: 1000000},
	"tinyllama-1.1b": {Arch: "llama", Embd: 2048, Layers: 22, Heads: 32, KVHeads: 4, FF: 5632, Vocab: 32000,
		Context: 2048, RopeBase: 10000},
	// Llama 3.2 1B without its rope_freqs tensor (which only matters past
	// 8k tokens) and with a filler vocabulary.
	"llama3.2-1b": {Arch: "llama", Embd: 2048, Layers: 16, Heads: 32, KVHeads: 8, FF: 8192, Vocab: 128256,
		Context: 131072, Tied: true, RopeBase: 500000},
}

// Presets lists the preset names, sorted.
func Presets() []string {
	out := make([]string, 0, len(presets))
	for k := range presets {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Preset returns the spec of a real model shape ("qwen2.5-0.5b",
// "tinyllama-1.1b", "llama3.2-1b") with the given file type and seed.
func Preset(name string, ft FileType, seed uint64) (Spec, error) {
	s, ok := presets[strings.ToLower(name)]
	if !ok {
		return Spec{}, fmt.Errorf("synth: unknown shape %q (have %s)", name, strings.Join(Presets(), ", "))
	}
	if _, ok := fileTypes[ft]; !ok {
		return Spec{}, fmt.Errorf("synth: unknown file type %q (have %v)", ft, FileTypes())
	}
	s.FileType = ft
	s.Type = fileTypes[ft].base
	s.Seed = seed
	s.Std = 0.02
	return s, nil
}
