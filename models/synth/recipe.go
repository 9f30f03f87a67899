package synth

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/engine/quantize"
)

// FileType is a llama.cpp file type (llama_ftype) by its usual name:
// "F16", "Q8_0", "Q6_K", "Q4_K_M", "Q4_0" and so on — any of
// quantize.Types().
type FileType string

// FileTypes lists the file types Spec.FileType accepts, sorted.
func FileTypes() []FileType {
	names := quantize.Types()
	out := make([]FileType, len(names))
	for i, n := range names {
		out[i] = FileType(n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// ParseFileType maps a name such as "q4_k_m" (or llama-quantize's alias
// "q4_k") to a FileType.
func ParseFileType(name string) (FileType, error) {
	ft, err := quantize.ParseType(name)
	if err != nil {
		return "", fmt.Errorf("synth: unknown file type %q (have %v)", name, FileTypes())
	}
	return FileType(ft.Name), nil
}

func lookupFileType(ft FileType) (quantize.FileType, error) {
	t, err := quantize.ParseType(string(ft))
	if err != nil || t.Name != string(ft) {
		return quantize.FileType{}, fmt.Errorf("synth: unknown file type %q (have %v)", ft, FileTypes())
	}
	return t, nil
}

// types picks the type of each weight matrix of ts (in place). With a
// FileType it is llama-quantize's choice for that file type
// (quantize.Plan), fallbacks for rows that are not whole blocks included.
// Without one every matrix has Spec.Type (output.weight Spec.OutputType
// when OutputTypeSet).
func (s Spec) types(ts []Tensor) error {
	if s.FileType == "" {
		for i := range ts {
			if ts[i].kind != kindMatrix {
				continue
			}
			ts[i].Type = s.Type
			if ts[i].Name == "output.weight" && s.OutputTypeSet {
				ts[i].Type = s.OutputType
			}
		}
		return nil
	}
	ft, err := lookupFileType(s.FileType)
	if err != nil {
		return err
	}
	qs := make([]quantize.Tensor, len(ts))
	for i, t := range ts {
		shape := make([]uint64, len(t.Shape))
		for j, d := range t.Shape {
			shape[j] = uint64(d)
		}
		qs[i] = quantize.Tensor{Name: t.Name, Shape: shape, Type: quant.F32}
	}
	m := quantize.Model{Arch: s.Arch, Layers: s.Layers, Heads: s.Heads, KVHeads: s.KVHeads, Experts: s.Experts}
	choices, err := quantize.Plan(ft, m, qs, false)
	if err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	for i := range ts {
		if ts[i].kind == kindMatrix {
			ts[i].Type = choices[i].Type
		}
	}
	return nil
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
	// The 7–8B models people run on a desktop. Llama 3.1 8B (config.json:
	// 4096 wide, 14336 feed-forward, 32 layers, 32 heads over 8 KV heads,
	// 128256 tokens, base 500000, untied), again without rope_freqs. At
	// Q4_K_M it takes 4.6 GiB: benchmarks on a small machine may pass
	// --layers (each layer is 124 MiB of the file).
	"llama3-8b": {Arch: "llama", Embd: 4096, Layers: 32, Heads: 32, KVHeads: 8, FF: 14336, Vocab: 128256,
		Context: 131072, RopeBase: 500000},
	// Qwen2.5-7B(-Instruct): 3584 wide (14 blocks of 256), 18944
	// feed-forward, 28 layers, 28 heads over 4 KV heads, biases on q, k
	// and v, 152064 tokens, untied, base 1000000, 32768 positions.
	"qwen2.5-7b": {Arch: "qwen2", Embd: 3584, Layers: 28, Heads: 28, KVHeads: 4, FF: 18944, Vocab: 152064,
		Context: 32768, RopeBase: 1000000},
	// Gemma 3 4B's text model (262208 tokens, heads of 256, a window of
	// 1024 on five layers in six, global layers at base 1M scaled ×8).
	"gemma3-4b": {Arch: "gemma3", Embd: 2560, Layers: 34, Heads: 8, KVHeads: 4, FF: 10240, Vocab: 262208,
		Context: 131072, Tied: true, RopeBase: 1000000, RopeScaling: "linear", RopeFactor: 8,
		HeadDim: 256, SlidingWindow: 1024, RopeBaseSWA: 10000},
	// Gemma 3 12B's and 27B's (heads of 128 on 5376: its queries are
	// scaled by 1/√(embd/heads)).
	"gemma3-12b": {Arch: "gemma3", Embd: 3840, Layers: 48, Heads: 16, KVHeads: 8, FF: 15360, Vocab: 262208,
		Context: 131072, Tied: true, RopeBase: 1000000, RopeScaling: "linear", RopeFactor: 8,
		HeadDim: 256, SlidingWindow: 1024, RopeBaseSWA: 10000},
	"gemma3-27b": {Arch: "gemma3", Embd: 5376, Layers: 62, Heads: 32, KVHeads: 16, FF: 21504, Vocab: 262208,
		Context: 131072, Tied: true, RopeBase: 1000000, RopeScaling: "linear", RopeFactor: 8,
		HeadDim: 128, SlidingWindow: 1024, RopeBaseSWA: 10000},
	// Gemma 3 1B's.
	"gemma3-1b": {Arch: "gemma3", Embd: 1152, Layers: 26, Heads: 4, KVHeads: 1, FF: 6912, Vocab: 262144,
		Context: 32768, Tied: true, RopeBase: 1000000,
		HeadDim: 256, SlidingWindow: 512, RopeBaseSWA: 10000},
	// Test shapes: every Gemma 3 feature at a size llama.cpp runs in
	// milliseconds. The odd one has widths that are no power of two, a
	// pattern of 3 and a window of 5, so a short prompt crosses it.
	"gemma3-tiny": {Arch: "gemma3", Embd: 256, Layers: 6, Heads: 4, KVHeads: 2, FF: 512, Vocab: 512,
		Context: 512, Tied: true, RopeBase: 1000000, RopeScaling: "linear", RopeFactor: 8,
		HeadDim: 128, SlidingWindow: 8, RopeBaseSWA: 10000},
	"gemma3-odd": {Arch: "gemma3", Embd: 96, Layers: 4, Heads: 3, KVHeads: 1, FF: 160, Vocab: 389,
		Context: 256, RopeBase: 100000,
		HeadDim: 64, SlidingWindow: 5, RopeBaseSWA: 5000, Gemma3: Gemma3{SWAPattern: 3, LogitSoftCap: 0.5}},
	// Qwen3-30B-A3B (2507): 128 experts of width 768, 8 per token; heads
	// of 128 on a width of 2048. At Q4_K_M its 48 layers take 17 GiB:
	// benchmarks on a small machine pass --layers.
	"qwen3-30b-a3b": {Arch: "qwen3moe", Embd: 2048, Layers: 48, Heads: 32, KVHeads: 4, HeadDim: 128, FF: 6144,
		Experts: 128, ExpertsUsed: 8, ExpertFF: 768, Vocab: 151936, Context: 262144, RopeBase: 10000000},
	// Small mixtures of experts for conformance tests: one in whole
	// K-quant blocks, one of odd sizes (3 heads, 7 experts, widths that
	// are not multiples of 256, so K-quant files fall back per tensor).
	"qwen3moe-test": {Arch: "qwen3moe", Embd: 256, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 64, FF: 512,
		Experts: 8, ExpertsUsed: 2, ExpertFF: 256, Vocab: 320, Context: 4096, RopeBase: 1000000},
	// A Llama with every optional bias and scale llama.cpp applies, and
	// a Mixtral-shaped one (a llama file with experts).
	"llama-extras-test": {Arch: "llama", Embd: 128, Layers: 2, Heads: 4, KVHeads: 2, FF: 256, Vocab: 320,
		Context: 4096, RopeBase: 10000, Biases: true, Scales: true},
	"llama-moe-test": {Arch: "llama", Embd: 128, Layers: 2, Heads: 4, KVHeads: 2, FF: 256, Vocab: 320,
		Context: 4096, RopeBase: 10000, Experts: 4, ExpertsUsed: 2, ExpertFF: 256},
	"qwen3moe-odd": {Arch: "qwen3moe", Embd: 96, Layers: 3, Heads: 3, KVHeads: 1, HeadDim: 32, FF: 288,
		Experts: 7, ExpertsUsed: 3, ExpertFF: 160, Vocab: 333, Context: 4096, RopeBase: 1000000},
	// gpt-oss-20b: 24 layers alternating banded (128 positions) and full
	// attention with sinks, 32 experts of width 2880, 4 per token, YaRN ×32
	// over 4096 trained positions to a context of 131072. Its MXFP4
	// experts (MXFP4_MOE) take 12 GiB: benchmarks on a small machine pass
	// --layers.
	"gpt-oss-20b": {Arch: "gpt-oss", Embd: 2880, Layers: 24, Heads: 64, KVHeads: 8, HeadDim: 64, FF: 2880,
		Experts: 32, ExpertsUsed: 4, ExpertFF: 2880, SlidingWindow: 128, Vocab: 201088, Context: 131072,
		RopeBase: 150000, RopeScaling: "yarn", RopeFactor: 32, RopeOrigContext: 4096},
	// Small gpt-oss shapes for conformance tests: windows shorter than
	// the test prompts; one of odd sizes (5 heads, 7 experts) with YaRN.
	"gpt-oss-test": {Arch: "gpt-oss", Embd: 256, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 64, FF: 256,
		Experts: 8, ExpertsUsed: 2, ExpertFF: 256, SlidingWindow: 16, Vocab: 320, Context: 4096, RopeBase: 150000},
	"gpt-oss-odd": {Arch: "gpt-oss", Embd: 160, Layers: 3, Heads: 5, KVHeads: 1, HeadDim: 32, FF: 96,
		Experts: 7, ExpertsUsed: 3, ExpertFF: 96, SlidingWindow: 5, Vocab: 333, Context: 4096, RopeBase: 150000,
		RopeScaling: "yarn", RopeFactor: 4},
	// gpt-oss whose banded layers rotate with a RoPE base of their own
	// (rope.freq_base_swa), YaRN-scaled as the full ones.
	"gpt-oss-ropeswa": {Arch: "gpt-oss", Embd: 128, Layers: 4, Heads: 4, KVHeads: 2, HeadDim: 32, FF: 128,
		Experts: 4, ExpertsUsed: 2, ExpertFF: 128, SlidingWindow: 6, Vocab: 320, Context: 4096, RopeBase: 150000,
		RopeBaseSWA: 50, RopeScaling: "yarn", RopeFactor: 8, Std: 0.06},
}

// Presets lists the preset names, sorted.
func Presets() []string {
	return slices.Sorted(maps.Keys(presets))
}

// Preset returns the spec of a real model shape ("qwen2.5-0.5b",
// "tinyllama-1.1b", "llama3.2-1b") with the given file type and seed.
func Preset(name string, ft FileType, seed uint64) (Spec, error) {
	s, ok := presets[strings.ToLower(name)]
	if !ok {
		return Spec{}, fmt.Errorf("synth: unknown shape %q (have %s)", name, strings.Join(Presets(), ", "))
	}
	t, err := lookupFileType(ft)
	if err != nil {
		return Spec{}, err
	}
	s.FileType = ft
	s.Type = t.Base
	s.Seed = seed
	if s.Std == 0 {
		s.Std = 0.02
	}
	return s, nil
}
