// Package synth writes random-weight GGUF models of any supported
// architecture and shape, deterministically from a seed. Tests use it to
// make fixtures (tiny models of every architecture) and benchmarks to make
// models of real shapes without downloading anything (see Preset).
//
// The files are plain GGUF with a small SentencePiece vocabulary (byte
// fallback, so any text tokenizes; large vocabularies are padded with
// filler pieces) and a ChatML template, so the engine and llama.cpp can
// both load them.
//
// Weights are normal(0, Std) draws from one splitmix64 stream, in tensor
// order; row i of a matrix starts at a known offset of that stream, so
// rows are generated and quantized in parallel and the file is the same
// for any number of workers.
package synth

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/quant"
)

// Spec describes a model to generate.
type Spec struct {
	Arch    string // llama, qwen2, qwen3, phi3, qwen3moe or gpt-oss
	Embd    int
	Layers  int
	Heads   int
	KVHeads int
	FF      int
	// HeadDim, when set, is the width of a head (attention.key_length),
	// which then need not be Embd/Heads (Qwen3-30B-A3B: 32×128 on 2048).
	HeadDim int
	// Experts > 0 makes every feed-forward a mixture of that many
	// experts, ExpertsUsed of them per token, each ExpertFF wide
	// (qwen3moe; llama then is Mixtral-shaped).
	Experts, ExpertsUsed, ExpertFF int
	// SlidingWindow is attention.sliding_window: gpt-oss's even layers,
	// and gemma3's local ones (see Gemma3.SWAPattern), see that many
	// positions. 0 writes no window.
	SlidingWindow int
	Vocab         int // at least 259 (specials + byte tokens); extra entries are filler pieces
	Context       int
	// Type of the weight matrices; norms stay F32. Rows must be whole
	// blocks of the type. Ignored when FileType is set.
	Type quant.Type
	// OutputType overrides the type of output.weight (0 value F32 means
	// "same as Type" only when OutputTypeSet is false).
	OutputType    quant.Type
	OutputTypeSet bool
	// FileType, when set, picks every tensor's type the way llama.cpp's
	// llama-quantize does for that file type (see FileTypes), including
	// its fallbacks for rows that are not whole blocks, and records
	// general.file_type.
	FileType FileType
	Tied     bool // omit output.weight: the output shares token_embd
	// Biases adds the optional biases llama.cpp applies when a file has
	// them: q, k, v and attention output, and the dense feed-forward's.
	Biases bool
	// Scales adds a per-tensor ".scale" factor to every projection (the
	// optional scales llama.cpp multiplies products by).
	Scales   bool
	Std      float64
	Seed     uint64
	RopeBase float32
	// RopeBaseSWA, when > 0, writes rope.freq_base_swa, the RoPE base of
	// the sliding-window layers (gemma3's local ones, where llama.cpp
	// assumes 10 000 without it; gpt-oss's banded ones, where it assumes
	// RopeBase).
	RopeBaseSWA float32
	// RopeScaling, when "linear" or "yarn", is written with RopeFactor
	// and the context trained before the scaling: RopeOrigContext, or
	// Context when it is 0.
	RopeScaling     string
	RopeFactor      float32
	RopeOrigContext int
	// Gemma 3 (Arch "gemma3"): see gemma3.go.
	Gemma3
	// Qwen 3.5 (Arch "qwen35", "qwen35moe"): see qwen35.go.
	Qwen35
	// NoTemplate leaves out tokenizer.chat_template.
	NoTemplate bool
	// Name, when set, is general.name; else it is made from the shape,
	// type and seed. Real quantizations of one model share it.
	Name string
	// Workers generating and quantizing rows in parallel; 0 means
	// runtime.NumCPU(). The output does not depend on it.
	Workers int
}

// Tiny returns a small spec of the given architecture, fast enough for
// unit tests.
func Tiny(arch string) Spec {
	s := Spec{Arch: arch, Embd: 64, Layers: 2, Heads: 4, KVHeads: 2, FF: 128, Vocab: 320,
		Context: 256, Type: quant.F32, Std: 0.08, Seed: 1, RopeBase: 10000}
	if arch == "qwen3moe" {
		// heads wider than Embd/Heads, as Qwen3-30B-A3B's are
		s.HeadDim, s.Experts, s.ExpertsUsed, s.ExpertFF = 32, 8, 3, 64
	}
	if arch == "gpt-oss" {
		// a window shorter than a test's prompt, so the banded layers show
		s.HeadDim, s.Experts, s.ExpertsUsed, s.ExpertFF, s.SlidingWindow = 32, 8, 3, 64, 8
	}
	return s
}

// headDim is the width of a head.
func (s Spec) headDim() int {
	if s.HeadDim > 0 {
		return s.HeadDim
	}
	return s.Embd / s.Heads
}

// attnDims are the head size and the widths of the attention's queries
// and of its keys (and values).
func (s Spec) attnDims() (head, q, kv int) {
	head = s.headDim()
	return head, s.Heads * head, s.KVHeads * head
}

// ChatML is the template written into generated models.
const ChatML = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"

// Write generates the model and writes it atomically to path.
func Write(path string, s Spec) error {
	w, err := Build(s)
	if err != nil {
		return err
	}
	if err := w.WriteFile(path); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	return nil
}

// Build generates the model into a GGUF writer. The writer holds every
// tensor's bytes, so memory use is about the size of the file.
func Build(s Spec) (*gguf.Writer, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	w := gguf.NewWriter()
	var err error
	kv := func(k string, v any) {
		if err == nil {
			err = w.SetKV(k, v)
		}
	}
	a := s.Arch
	headDim := s.headDim()
	typeName := s.Type.String()
	if s.FileType != "" {
		typeName = string(s.FileType)
	}
	kv("general.architecture", a)
	name := s.Name
	if name == "" {
		name = fmt.Sprintf("synthetic %s %d×%d %s seed %d", a, s.Layers, s.Embd, typeName, s.Seed)
	}
	kv("general.name", name)
	if s.FileType != "" {
		ft, ferr := lookupFileType(s.FileType)
		if ferr != nil {
			return nil, ferr
		}
		kv("general.file_type", ft.ID)
		if ft.Base != quant.F32 && ft.Base != quant.F16 {
			kv("general.quantization_version", uint32(2))
		}
	}
	kv(a+".context_length", uint32(s.Context))
	kv(a+".embedding_length", uint32(s.Embd))
	kv(a+".block_count", uint32(s.Layers+s.NextN))
	kv(a+".feed_forward_length", uint32(s.FF))
	kv(a+".attention.head_count", uint32(s.Heads))
	kv(a+".attention.head_count_kv", uint32(s.KVHeads))
	kv(a+".attention.layer_norm_rms_epsilon", float32(1e-5))
	kv(a+".rope.freq_base", s.RopeBase)
	kv(a+".rope.dimension_count", uint32(s.ropeDims()))
	// gemma3 always writes its head width, as llama.cpp's converter does.
	if s.HeadDim > 0 || a == "gemma3" {
		kv(a+".attention.key_length", uint32(headDim))
		kv(a+".attention.value_length", uint32(headDim))
	}
	if s.Experts > 0 {
		kv(a+".expert_count", uint32(s.Experts))
		kv(a+".expert_used_count", uint32(s.ExpertsUsed))
		kv(a+".expert_feed_forward_length", uint32(s.ExpertFF))
	}
	if s.SlidingWindow > 0 {
		kv(a+".attention.sliding_window", uint32(s.SlidingWindow))
	}
	if s.isQwen35() {
		s.qwen35Metadata(kv)
	}
	if a == "gemma3" {
		s.gemma3Metadata(kv)
	} else if s.RopeBaseSWA > 0 {
		kv(a+".rope.freq_base_swa", s.RopeBaseSWA)
	}
	if s.RopeScaling != "" {
		kv(a+".rope.scaling.type", s.RopeScaling)
		kv(a+".rope.scaling.factor", s.RopeFactor)
		orig := s.Context
		if s.RopeOrigContext > 0 {
			orig = s.RopeOrigContext
		}
		kv(a+".rope.scaling.original_context_length", uint32(orig))
	}
	tokens, scores, types := vocab(s.Vocab)
	kv("tokenizer.ggml.model", "llama")
	kv("tokenizer.ggml.tokens", tokens)
	kv("tokenizer.ggml.scores", scores)
	kv("tokenizer.ggml.token_type", types)
	kv("tokenizer.ggml.bos_token_id", uint32(1))
	kv("tokenizer.ggml.eos_token_id", uint32(2))
	kv("tokenizer.ggml.unknown_token_id", uint32(0))
	kv("tokenizer.ggml.add_bos_token", true)
	if !s.NoTemplate {
		kv("tokenizer.chat_template", ChatML)
	}
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}

	g := &gen{w: w, seed: s.Seed, workers: s.Workers}
	if g.workers <= 0 {
		g.workers = runtime.NumCPU()
	}
	ts, err := s.plan()
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		switch t.kind {
		case kindMatrix:
			err = g.matrix(t.Name, t.Type, t.Shape, s.Std)
		case kindOnes:
			err = g.vector(t.Name, t.Shape[0], false, func(float64) float32 { return 1 })
		case kindNoise:
			err = g.vector(t.Name, t.Shape[0], true, func(z float64) float32 { return float32(z * s.Std) })
		case kindNoise2D:
			err = g.matrix(t.Name, quant.F32, t.Shape, s.Std)
		case kindSink:
			// Sinks of a few units, as trained ones are: against scores
			// of random weights they take a real share of the softmax.
			err = g.vector(t.Name, t.Shape[0], true, func(z float64) float32 { return float32(z) })
		case kindConv:
			err = g.matrix(t.Name, quant.F32, t.Shape, 0.5)
		case kindDTBias:
			// softplus(−2 + …) ≈ 0.13: decays of about 0.9 a token with
			// ssm_a near −1, so the state remembers a few tokens.
			err = g.vector(t.Name, t.Shape[0], true, func(z float64) float32 { return float32(-2 + 0.5*z) })
		case kindDecay:
			// ssm_a = −exp(A_log), negative as the converter stores it.
			err = g.vector(t.Name, t.Shape[0], true, func(z float64) float32 { return float32(-math.Exp(0.5 * z)) })
		case kindNearOne:
			// Norm weights near 1, not exactly 1, so a forward pass that
			// skipped them would be caught.
			err = g.vector(t.Name, t.Shape[0], true, func(z float64) float32 { return float32(1 + z*0.2) })
		}
		if err != nil {
			return nil, fmt.Errorf("synth: %w", err)
		}
	}
	return w, nil
}

// Tensor is one tensor of a generated model.
type Tensor struct {
	Name  string
	Type  quant.Type
	Shape []int // ggml order: row length first
	kind  int
}

const (
	kindMatrix  = iota // normal(0, Std) weights
	kindOnes           // norm weights of 1
	kindNoise          // normal(0, Std) biases
	kindNearOne        // norm weights 1 + normal(0, 0.2)
	kindNoise2D        // normal(0, Std) biases of one row per expert
	kindSink           // normal(0, 1) attention sinks
	kindConv           // normal(0, 0.5) F32 convolution taps
	kindDTBias         // −2 + normal(0, 0.5): a DeltaNet's ssm_dt.bias
	kindDecay          // −exp(normal(0, 0.5)): a DeltaNet's ssm_a
)

// Bytes is the size of the tensor's data.
func (t Tensor) Bytes() int64 {
	size, _ := t.Type.RowSize(t.Shape[0])
	n := int64(size)
	for _, d := range t.Shape[1:] {
		n *= int64(d)
	}
	return n
}

// Tensors lists the tensors Build writes, in file order, with the types
// the spec gives them.
func (s Spec) Tensors() ([]Tensor, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.plan()
}

// addEnds adds the model's two ends in llama.cpp's order: the embedding
// table, the output norm (of kind norm) and, untied, the output projection.
func (s Spec) addEnds(add func(kind int, name string, shape ...int), norm int) {
	add(kindMatrix, "token_embd.weight", s.Embd, s.Vocab)
	add(norm, "output_norm.weight", s.Embd)
	if !s.Tied {
		add(kindMatrix, "output.weight", s.Embd, s.Vocab)
	}
}

// addQKV adds layer p's separate query, key and value projections.
func (s Spec) addQKV(add func(kind int, name string, shape ...int), p string, qDim, kvDim int) {
	add(kindMatrix, p+"attn_q.weight", s.Embd, qDim)
	add(kindMatrix, p+"attn_k.weight", s.Embd, kvDim)
	add(kindMatrix, p+"attn_v.weight", s.Embd, kvDim)
}

func (s Spec) plan() ([]Tensor, error) {
	var out []Tensor
	add := func(kind int, name string, shape ...int) {
		out = append(out, Tensor{Name: name, Type: quant.F32, Shape: shape, kind: kind})
	}
	a := s.Arch
	if s.isQwen35() {
		s.qwen35Tensors(add)
		if err := s.types(out); err != nil {
			return nil, err
		}
		return out, nil
	}
	if a == "gemma3" {
		s.gemma3Tensors(add)
		if err := s.types(out); err != nil {
			return nil, err
		}
		return out, nil
	}
	headDim, qDim, kvDim := s.attnDims()
	s.addEnds(add, kindOnes)
	for l := range s.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		add(kindOnes, p+"attn_norm.weight", s.Embd)
		if a == "phi3" {
			add(kindMatrix, p+"attn_qkv.weight", s.Embd, qDim+2*kvDim)
		} else {
			s.addQKV(add, p, qDim, kvDim)
		}
		if a == "qwen2" || a == "gpt-oss" || s.Biases {
			add(kindNoise, p+"attn_q.bias", qDim)
			add(kindNoise, p+"attn_k.bias", kvDim)
			add(kindNoise, p+"attn_v.bias", kvDim)
		}
		if a == "qwen3" || a == "qwen3moe" {
			add(kindNearOne, p+"attn_q_norm.weight", headDim)
			add(kindNearOne, p+"attn_k_norm.weight", headDim)
		}
		add(kindMatrix, p+"attn_output.weight", qDim, s.Embd)
		if s.Biases || a == "gpt-oss" {
			add(kindNoise, p+"attn_output.bias", s.Embd)
		}
		if a == "gpt-oss" {
			// gpt-oss: sinks, the post-attention norm as the experts'
			// norm, biases on the router and on every expert.
			add(kindSink, p+"attn_sinks.weight", s.Heads)
			add(kindNearOne, p+"post_attention_norm.weight", s.Embd)
			add(kindMatrix, p+"ffn_gate_inp.weight", s.Embd, s.Experts)
			add(kindNoise, p+"ffn_gate_inp.bias", s.Experts)
			add(kindMatrix, p+"ffn_gate_exps.weight", s.Embd, s.ExpertFF, s.Experts)
			add(kindMatrix, p+"ffn_up_exps.weight", s.Embd, s.ExpertFF, s.Experts)
			add(kindMatrix, p+"ffn_down_exps.weight", s.ExpertFF, s.Embd, s.Experts)
			add(kindNoise2D, p+"ffn_gate_exps.bias", s.ExpertFF, s.Experts)
			add(kindNoise2D, p+"ffn_up_exps.bias", s.ExpertFF, s.Experts)
			add(kindNoise2D, p+"ffn_down_exps.bias", s.Embd, s.Experts)
			continue
		}
		if s.Scales {
			for _, n := range []string{"attn_q", "attn_k", "attn_v", "attn_output"} {
				add(kindNearOne, p+n+".scale", 1)
			}
		}
		add(kindOnes, p+"ffn_norm.weight", s.Embd)
		if s.Experts > 0 {
			add(kindMatrix, p+"ffn_gate_inp.weight", s.Embd, s.Experts)
			add(kindMatrix, p+"ffn_gate_exps.weight", s.Embd, s.ExpertFF, s.Experts)
			add(kindMatrix, p+"ffn_up_exps.weight", s.Embd, s.ExpertFF, s.Experts)
			add(kindMatrix, p+"ffn_down_exps.weight", s.ExpertFF, s.Embd, s.Experts)
			continue
		}
		if a == "phi3" {
			add(kindMatrix, p+"ffn_up.weight", s.Embd, 2*s.FF)
		} else {
			add(kindMatrix, p+"ffn_gate.weight", s.Embd, s.FF)
			add(kindMatrix, p+"ffn_up.weight", s.Embd, s.FF)
		}
		add(kindMatrix, p+"ffn_down.weight", s.FF, s.Embd)
		if s.Biases {
			add(kindNoise, p+"ffn_gate.bias", s.FF)
			add(kindNoise, p+"ffn_up.bias", s.FF)
			add(kindNoise, p+"ffn_down.bias", s.Embd)
		}
		if s.Scales {
			for _, n := range []string{"ffn_gate", "ffn_up", "ffn_down"} {
				add(kindNearOne, p+n+".scale", 1)
			}
		}
	}
	if err := s.types(out); err != nil {
		return nil, err
	}
	return out, nil
}

func (s Spec) check() error {
	switch s.Arch {
	case "llama", "qwen2", "qwen3", "phi3", "qwen3moe", "gpt-oss", "gemma3", "qwen35", "qwen35moe":
	default:
		return fmt.Errorf("synth: architecture %q not supported", s.Arch)
	}
	if s.isQwen35() && (s.SSMKHeads <= 0 || s.SSMVHeads%s.SSMKHeads != 0 || s.SSMHeadDim <= 0 || s.ropeDims()%2 != 0 || s.ropeDims() > s.headDim()) {
		return fmt.Errorf("synth: %s needs DeltaNet heads (%d key, %d value, width %d) and rotated dimensions (%d) within a head", s.Arch, s.SSMKHeads, s.SSMVHeads, s.SSMHeadDim, s.ropeDims())
	}
	if s.Arch == "qwen35" && s.Experts > 0 || s.Arch == "qwen35moe" && s.Experts == 0 {
		return fmt.Errorf("synth: qwen35moe, not qwen35, has experts")
	}
	if (s.Arch == "qwen3moe" || s.Arch == "gpt-oss") && s.Experts == 0 {
		return fmt.Errorf("synth: %s needs experts", s.Arch)
	}
	if s.Arch == "gpt-oss" && s.SlidingWindow <= 0 {
		return fmt.Errorf("synth: gpt-oss needs a sliding window")
	}
	if (s.Biases || s.Scales) && (s.Arch == "phi3" || s.Experts > 0) {
		return fmt.Errorf("synth: biases and scales are written for split projections and dense feed-forwards only")
	}
	if s.Experts > 0 {
		if s.Arch != "qwen3moe" && s.Arch != "llama" && s.Arch != "gpt-oss" && s.Arch != "qwen35moe" {
			return fmt.Errorf("synth: %s has no mixture of experts", s.Arch)
		}
		if s.Arch == "llama" && s.ExpertFF != s.FF {
			return fmt.Errorf("synth: a llama file's experts are feed_forward_length (%d) wide, not %d", s.FF, s.ExpertFF)
		}
		if s.ExpertsUsed <= 0 || s.ExpertsUsed > s.Experts || s.ExpertFF <= 0 {
			return fmt.Errorf("synth: %d of %d experts of width %d", s.ExpertsUsed, s.Experts, s.ExpertFF)
		}
	}
	if s.Embd <= 0 || s.Layers <= 0 || s.Heads <= 0 || s.KVHeads <= 0 || s.FF <= 0 || s.Context <= 0 {
		return fmt.Errorf("synth: all sizes must be positive: %+v", s)
	}
	if (s.HeadDim == 0 && s.Embd%s.Heads != 0) || s.Heads%s.KVHeads != 0 || s.headDim()%2 != 0 {
		return fmt.Errorf("synth: %d heads (%d KV) do not divide width %d into even head sizes", s.Heads, s.KVHeads, s.Embd)
	}
	if s.Vocab < 259 {
		return fmt.Errorf("synth: vocabulary of %d is smaller than 3 specials + 256 byte tokens", s.Vocab)
	}
	if s.Vocab > 1<<24 || s.Embd > 1<<16 || s.FF > 1<<18 || s.Layers > 1024 {
		return fmt.Errorf("synth: shape %+v is too large", s)
	}
	if s.FileType != "" {
		if _, err := lookupFileType(s.FileType); err != nil {
			return err
		}
	}
	return nil
}

// vocab is a SentencePiece vocabulary: <unk>, <s>, </s>, the 256 byte
// tokens, then common English pieces with descending scores, then filler.
func vocab(n int) ([]string, []float32, []int32) {
	tokens := make([]string, 0, n)
	types := make([]int32, 0, n)
	tokens = append(tokens, "<unk>", "<s>", "</s>")
	types = append(types, 2, 3, 3)
	for b := range 256 {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, 6)
	}
	seen := map[string]bool{}
	for _, t := range tokens {
		seen[t] = true
	}
	words := []string{"▁the", "▁a", "▁and", "▁to", "▁was", "▁he", "▁she", "▁it", "▁of", "▁in",
		"▁Once", "▁upon", "▁time", "▁there", "▁little", "▁day", "▁play", "▁happy", "▁big", "▁said",
		"▁t", "▁s", "▁w", "▁o", "▁i", "▁b", "▁c", "▁d", "▁f", "▁h", "▁l", "▁m", "▁n", "▁p", "▁r",
		"e", "t", "a", "o", "i", "n", "s", "r", "h", "l", "d", "u", "c", "m", "y", "g", "p", "w", "f", "b", ".", ",", "▁"}
	for _, wd := range words {
		if len(tokens) >= n {
			break
		}
		if !seen[wd] {
			tokens = append(tokens, wd)
			types = append(types, 1)
			seen[wd] = true
		}
	}
	for i := 0; len(tokens) < n; i++ {
		tokens = append(tokens, fmt.Sprintf("▁w%d", i))
		types = append(types, 1)
	}
	scores := make([]float32, n)
	for i := range scores {
		if types[i] == 1 {
			scores[i] = -float32(i)
		}
	}
	return tokens, scores, types
}

// gen draws the weights. next is the index, in the seed's stream of
// normal draws, of the next value to use.
type gen struct {
	w       *gguf.Writer
	seed    uint64
	next    uint64
	workers int
}

// matrix draws the values of a tensor of shape (row length first; a 3-D
// one is a stack of matrices), quantizes each row to typ and adds the
// tensor. Rows are split among workers, each positioned at its first
// row's place in the stream.
func (g *gen) matrix(name string, typ quant.Type, shape []int, std float64) error {
	cols, rows := shape[0], 1
	for _, d := range shape[1:] {
		rows *= d
	}
	size, ok := typ.RowSize(cols)
	if !ok {
		return fmt.Errorf("tensor %s: %d columns are not whole %v blocks", name, cols, typ)
	}
	data := make([]byte, size*rows)
	base := g.next
	g.next += uint64(cols) * uint64(rows)
	workers := min(g.workers, max(1, rows/16))
	per := (rows + workers - 1) / workers
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		ferr error
	)
	for lo := 0; lo < rows; lo += per {
		hi := min(rows, lo+per)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rngAt(g.seed, base+uint64(lo)*uint64(cols))
			vals := make([]float32, cols)
			for row := lo; row < hi; row++ {
				for i := range vals {
					vals[i] = float32(r.normal() * std)
				}
				if err := quant.Quantize(typ, vals, data[row*size:(row+1)*size]); err != nil {
					mu.Lock()
					if ferr == nil {
						ferr = fmt.Errorf("tensor %s: %w", name, err)
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if ferr != nil {
		return ferr
	}
	dims := make([]uint64, len(shape))
	for i, d := range shape {
		dims[i] = uint64(d)
	}
	return g.w.AddTensor(name, typ, dims, data)
}

// vector adds an F32 vector; when draws is set, f gets one normal draw
// per element, otherwise it gets 0 and the stream is not advanced.
func (g *gen) vector(name string, n int, draws bool, f func(z float64) float32) error {
	r := rngAt(g.seed, g.next)
	if draws {
		g.next += uint64(n)
	}
	data := make([]byte, 4*n)
	for i := range n {
		z := 0.0
		if draws {
			z = r.normal()
		}
		bits := math.Float32bits(f(z))
		data[4*i], data[4*i+1], data[4*i+2], data[4*i+3] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
	}
	return g.w.AddTensor(name, quant.F32, []uint64{uint64(n)}, data)
}

// rng is splitmix64 with Box–Muller: written here so that a seed gives the
// same model on every Go version and platform.
type rng struct {
	state uint64
	spare float64
	has   bool
}

const golden = 0x9E3779B97F4A7C15

// rngAt returns a generator whose next normal() is draw number m of the
// stream seeded with seed. splitmix64's k-th output depends only on
// seed+k·golden, and Box–Muller turns uniforms 2j and 2j+1 into normals
// 2j and 2j+1, so any position can be reached without drawing the ones
// before it.
func rngAt(seed, m uint64) *rng {
	r := &rng{state: seed + (m/2)*2*golden}
	if m%2 == 1 {
		r.normal()
	}
	return r
}

func (r *rng) next() uint64 {
	r.state += golden
	z := r.state
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// uniform returns a float64 in (0, 1).
func (r *rng) uniform() float64 {
	return (float64(r.next()>>11) + 0.5) / (1 << 53)
}

func (r *rng) normal() float64 {
	if r.has {
		r.has = false
		return r.spare
	}
	u, v := r.uniform(), r.uniform()
	m := math.Sqrt(-2 * math.Log(u))
	r.spare, r.has = m*math.Sin(2*math.Pi*v), true
	return m * math.Cos(2*math.Pi*v)
}
