// Package synth writes random-weight GGUF models of any supported
// architecture and shape, deterministically from a seed. Tests use it to
// make fixtures (tiny models of every architecture) and benchmarks to make
// models of real shapes without downloading anything.
//
// The files are plain GGUF with a small SentencePiece vocabulary (byte
// fallback, so any text tokenizes) and a ChatML template, so the engine
// and llama.cpp can both load them.
package synth

import (
	"fmt"
	"math"

	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/quant"
)

// Spec describes a model to generate.
type Spec struct {
	Arch    string // llama, qwen2, qwen3 or phi3
	Embd    int
	Layers  int
	Heads   int
	KVHeads int
	FF      int
	Vocab   int // at least 259 (specials + byte tokens); extra entries are filler pieces
	Context int
	// Type of the weight matrices; norms stay F32. Rows must be whole
	// blocks of the type.
	Type quant.Type
	// OutputType overrides the type of output.weight (0 value F32 means
	// "same as Type" only when OutputTypeSet is false).
	OutputType    quant.Type
	OutputTypeSet bool
	Tied          bool // omit output.weight: the output shares token_embd
	Std           float64
	Seed          uint64
	RopeBase      float32
	// RopeScaling, when "linear" or "yarn", is written with RopeFactor.
	RopeScaling string
	RopeFactor  float32
	// NoTemplate leaves out tokenizer.chat_template.
	NoTemplate bool
}

// Tiny returns a small spec of the given architecture, fast enough for
// unit tests.
func Tiny(arch string) Spec {
	return Spec{Arch: arch, Embd: 64, Layers: 2, Heads: 4, KVHeads: 2, FF: 128, Vocab: 320,
		Context: 256, Type: quant.F32, Std: 0.08, Seed: 1, RopeBase: 10000}
}

// ChatML is the template written into generated models.
const ChatML = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"

// Write generates the model and writes it atomically to path.
func Write(path string, s Spec) error {
	w, err := Build(s)
	if err != nil {
		return err
	}
	return w.WriteFile(path)
}

// Build generates the model into a GGUF writer.
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
	headDim := s.Embd / s.Heads
	kv("general.architecture", a)
	kv("general.name", fmt.Sprintf("synthetic %s %d×%d %v seed %d", a, s.Layers, s.Embd, s.Type, s.Seed))
	kv(a+".context_length", uint32(s.Context))
	kv(a+".embedding_length", uint32(s.Embd))
	kv(a+".block_count", uint32(s.Layers))
	kv(a+".feed_forward_length", uint32(s.FF))
	kv(a+".attention.head_count", uint32(s.Heads))
	kv(a+".attention.head_count_kv", uint32(s.KVHeads))
	kv(a+".attention.layer_norm_rms_epsilon", float32(1e-5))
	kv(a+".rope.freq_base", s.RopeBase)
	kv(a+".rope.dimension_count", uint32(headDim))
	if s.RopeScaling != "" {
		kv(a+".rope.scaling.type", s.RopeScaling)
		kv(a+".rope.scaling.factor", s.RopeFactor)
		kv(a+".rope.scaling.original_context_length", uint32(s.Context))
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

	r := newRNG(s.Seed)
	qDim, kvDim := s.Embd, s.KVHeads*headDim
	mat := func(name string, typ quant.Type, cols, rows int) {
		if err == nil {
			err = addMatrix(w, r, name, typ, cols, rows, s.Std)
		}
	}
	ones := func(name string, n int) {
		if err == nil {
			err = addVector(w, name, n, func(int) float32 { return 1 })
		}
	}
	noise := func(name string, n int) {
		if err == nil {
			err = addVector(w, name, n, func(int) float32 { return float32(r.normal() * s.Std) })
		}
	}
	mat("token_embd.weight", s.Type, s.Embd, s.Vocab)
	ones("output_norm.weight", s.Embd)
	if !s.Tied {
		ot := s.Type
		if s.OutputTypeSet {
			ot = s.OutputType
		}
		mat("output.weight", ot, s.Embd, s.Vocab)
	}
	for l := range s.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		ones(p+"attn_norm.weight", s.Embd)
		if a == "phi3" {
			mat(p+"attn_qkv.weight", s.Type, s.Embd, qDim+2*kvDim)
		} else {
			mat(p+"attn_q.weight", s.Type, s.Embd, qDim)
			mat(p+"attn_k.weight", s.Type, s.Embd, kvDim)
			mat(p+"attn_v.weight", s.Type, s.Embd, kvDim)
		}
		if a == "qwen2" {
			noise(p+"attn_q.bias", qDim)
			noise(p+"attn_k.bias", kvDim)
			noise(p+"attn_v.bias", kvDim)
		}
		if a == "qwen3" {
			// Norm weights near 1, not exactly 1, so a forward pass that
			// skipped them would be caught.
			if err == nil {
				err = addVector(w, p+"attn_q_norm.weight", headDim, func(int) float32 { return float32(1 + r.normal()*0.2) })
			}
			if err == nil {
				err = addVector(w, p+"attn_k_norm.weight", headDim, func(int) float32 { return float32(1 + r.normal()*0.2) })
			}
		}
		mat(p+"attn_output.weight", s.Type, qDim, s.Embd)
		ones(p+"ffn_norm.weight", s.Embd)
		if a == "phi3" {
			mat(p+"ffn_up.weight", s.Type, s.Embd, 2*s.FF)
		} else {
			mat(p+"ffn_gate.weight", s.Type, s.Embd, s.FF)
			mat(p+"ffn_up.weight", s.Type, s.Embd, s.FF)
		}
		mat(p+"ffn_down.weight", s.Type, s.FF, s.Embd)
	}
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	return w, nil
}

func (s Spec) check() error {
	switch s.Arch {
	case "llama", "qwen2", "qwen3", "phi3":
	default:
		return fmt.Errorf("synth: architecture %q not supported", s.Arch)
	}
	if s.Embd <= 0 || s.Layers <= 0 || s.Heads <= 0 || s.KVHeads <= 0 || s.FF <= 0 || s.Context <= 0 {
		return fmt.Errorf("synth: all sizes must be positive: %+v", s)
	}
	if s.Embd%s.Heads != 0 || s.Heads%s.KVHeads != 0 || (s.Embd/s.Heads)%2 != 0 {
		return fmt.Errorf("synth: %d heads (%d KV) do not divide width %d into even head sizes", s.Heads, s.KVHeads, s.Embd)
	}
	if s.Vocab < 259 {
		return fmt.Errorf("synth: vocabulary of %d is smaller than 3 specials + 256 byte tokens", s.Vocab)
	}
	return nil
}

// vocab is a SentencePiece vocabulary: <unk>, <s>, </s>, the 256 byte
// tokens, then common English pieces with descending scores.
func vocab(n int) ([]string, []float32, []int32) {
	tokens := []string{"<unk>", "<s>", "</s>"}
	types := []int32{2, 3, 3}
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
		t := fmt.Sprintf("▁w%d", i)
		tokens = append(tokens, t)
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

func addMatrix(w *gguf.Writer, r *rng, name string, typ quant.Type, cols, rows int, std float64) error {
	vals := make([]float32, cols*rows)
	for i := range vals {
		vals[i] = float32(r.normal() * std)
	}
	size, ok := typ.RowSize(cols)
	if !ok {
		return fmt.Errorf("tensor %s: %d columns are not whole %v blocks", name, cols, typ)
	}
	data := make([]byte, size*rows)
	for row := range rows {
		if err := quant.Quantize(typ, vals[row*cols:(row+1)*cols], data[row*size:(row+1)*size]); err != nil {
			return fmt.Errorf("tensor %s: %w", name, err)
		}
	}
	return w.AddTensor(name, typ, []uint64{uint64(cols), uint64(rows)}, data)
}

func addVector(w *gguf.Writer, name string, n int, f func(i int) float32) error {
	data := make([]byte, 4*n)
	for i := range n {
		bits := math.Float32bits(f(i))
		data[4*i], data[4*i+1], data[4*i+2], data[4*i+3] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
	}
	return w.AddTensor(name, quant.F32, []uint64{uint64(n)}, data)
}

// rng is splitmix64 with Box–Muller: written here so that a seed gives the
// same model on every Go version and platform.
type rng struct {
	state uint64
	spare float64
	has   bool
}

func newRNG(seed uint64) *rng { return &rng{state: seed} }

func (r *rng) next() uint64 {
	r.state += 0x9E3779B97F4A7C15
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
