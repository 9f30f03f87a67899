package quantize

import (
	"fmt"
	"sort"
	"strings"

	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/quant"
)

// FileType is a llama.cpp file type (llama_ftype): the name people know a
// quantization by, the number stored in general.file_type, and the tensor
// type most weight matrices get.
type FileType struct {
	Name string     // "Q4_K_M"
	ID   uint32     // general.file_type; llama.cpp's numbers, part of the format
	Base quant.Type // the default type of a weight matrix
}

// fileTypes are the file types File can make, largest first. The ones
// llama.cpp has and this list lacks need an importance matrix (IQ1–IQ3,
// Q2_K_S) or quantizers engine/quant does not have (TQ1_0, TQ2_0).
var fileTypes = []FileType{
	{"F32", 0, quant.F32},
	{"F16", 1, quant.F16},
	{"BF16", 32, quant.BF16},
	{"Q8_0", 7, quant.Q8_0},
	{"Q6_K", 18, quant.Q6_K},
	{"Q5_K_M", 17, quant.Q5_K},
	{"Q5_K_S", 16, quant.Q5_K},
	{"Q5_1", 9, quant.Q5_1},
	{"Q5_0", 8, quant.Q5_0},
	{"Q4_K_M", 15, quant.Q4_K},
	{"Q4_K_S", 14, quant.Q4_K},
	{"Q4_1", 3, quant.Q4_1},
	{"Q4_0", 2, quant.Q4_0},
	{"IQ4_NL", 25, quant.IQ4_NL},
	{"IQ4_XS", 30, quant.IQ4_XS},
	{"Q3_K_L", 13, quant.Q3_K},
	{"Q3_K_M", 12, quant.Q3_K},
	{"Q3_K_S", 11, quant.Q3_K},
	{"Q2_K", 10, quant.Q2_K},
	{"MXFP4_MOE", 38, quant.MXFP4},
}

// aliases are llama-quantize's short names for the _M recipes.
var aliases = map[string]string{"Q3_K": "Q3_K_M", "Q4_K": "Q4_K_M", "Q5_K": "Q5_K_M"}

// Types lists the file type names File accepts, largest first.
func Types() []string {
	out := make([]string, len(fileTypes))
	for i, ft := range fileTypes {
		out[i] = ft.Name
	}
	return out
}

// ParseType looks a file type up by name, ignoring case; llama-quantize's
// aliases Q3_K, Q4_K and Q5_K mean the _M recipes.
func ParseType(name string) (FileType, error) {
	up := strings.ToUpper(strings.TrimSpace(name))
	if a, ok := aliases[up]; ok {
		up = a
	}
	for _, ft := range fileTypes {
		if ft.Name == up {
			return ft, nil
		}
	}
	return FileType{}, fmt.Errorf("quantize: %w %q (have %s)", ErrUnknownType, name, strings.Join(Types(), ", "))
}

func (ft FileType) quantized() bool {
	return ft.Base != quant.F32 && ft.Base != quant.F16 && ft.Base != quant.BF16
}

// Model holds the hyperparameters llama.cpp's per-tensor rules look at.
type Model struct {
	Arch    string // general.architecture
	Layers  int    // block_count
	Heads   int    // attention.head_count (of the first layer)
	KVHeads int    // attention.head_count_kv; 0 means equal to Heads
	Experts int    // expert_count; 0 or 1 for a dense model
}

// ModelOf reads the Model of a GGUF file's metadata.
func ModelOf(f *gguf.File) Model {
	a := f.Architecture()
	m := Model{Arch: a}
	m.Layers = int(firstUint(f, a+".block_count"))
	m.Heads = int(firstUint(f, a+".attention.head_count"))
	m.KVHeads = int(firstUint(f, a+".attention.head_count_kv"))
	m.Experts = int(firstUint(f, a+".expert_count"))
	return m
}

// firstUint reads an integer key, or the first element of a per-layer
// integer array (some models store head counts per layer).
func firstUint(f *gguf.File, key string) uint64 {
	if v, ok := f.Uint(key); ok {
		return v
	}
	if vs, ok := f.Int32s(key); ok && len(vs) > 0 && vs[0] > 0 {
		return uint64(vs[0])
	}
	return 0
}

// gqa is llama.cpp's n_gqa(): query heads per KV head.
func (m Model) gqa() int {
	kv := m.KVHeads
	if kv == 0 {
		kv = m.Heads
	}
	if kv <= 0 {
		return 0
	}
	return m.Heads / kv
}

// is70B mirrors llama.cpp's model-type table for the architectures whose
// 80-layer models it calls 70B; only attn_v's recipe depends on it.
func (m Model) is70B() bool {
	if m.Layers != 80 {
		return false
	}
	switch m.Arch {
	case "llama":
		return m.Experts <= 1 && m.gqa() != 1
	case "deci", "qwen2", "olmo":
		return true
	}
	return false
}

// Tensor describes a tensor to plan.
type Tensor struct {
	Name  string
	Shape []uint64   // ggml order: Shape[0] is the row length
	Type  quant.Type // its type in the source
}

// Choice is what a file type does with one tensor.
type Choice struct {
	Type quant.Type // type in the output
	// Convert is false when the tensor is copied unchanged: it is not a
	// weight matrix (norms, biases, 1-D tensors) or already has Type.
	Convert bool
	// Wanted is the type the recipe asked for. It differs from Type when
	// the rows are not whole blocks of it and llama.cpp's fallback type
	// (Q4_K→Q5_0, Q5_K→Q5_1, Q6_K→Q8_0, Q2_K/Q3_K/IQ4_XS→IQ4_NL, else
	// F16) took its place.
	Wanted quant.Type
}

// Plan picks every tensor's output type the way llama.cpp's llama-quantize
// does without an importance matrix (llama_tensor_get_type, February
// 2025), returning one Choice per tensor in the order given. pure is
// llama-quantize's --pure: every weight matrix gets ft.Base, with no
// per-tensor rules and no fallbacks.
//
// The rules depend on the order llama.cpp visits tensors (counters of
// attn_v and ffn_down seen so far), which is Order's, not the file's.
func Plan(ft FileType, m Model, ts []Tensor, pure bool) ([]Choice, error) {
	p := &planner{ft: ft, m: m}
	for _, t := range ts {
		if strings.Contains(t.Name, "attn_v.weight") || strings.Contains(t.Name, "attn_qkv.weight") ||
			strings.Contains(t.Name, "attn_kv_b.weight") {
			p.nAttnV++
		} else if t.Name == "output.weight" {
			p.hasOutput = true
		}
	}
	out := make([]Choice, len(ts))
	for _, i := range Order(ts) {
		t := ts[i]
		c := Choice{Type: t.Type, Wanted: t.Type}
		if len(t.Shape) == 0 || !quantizable(t.Name, t.Shape) {
			out[i] = c
			continue
		}
		typ, wanted := ft.Base, ft.Base
		if !pure && ft.Name == "MXFP4_MOE" {
			typ, wanted = p.pickMXFP4MoE(t.Name, t.Shape)
		} else if !pure && ft.quantized() {
			var err error
			if typ, wanted, err = p.pick(t.Name, t.Shape[0]); err != nil {
				return nil, fmt.Errorf("quantize: tensor %q: %w", t.Name, err)
			}
		}
		if bs := uint64(typ.BlockSize()); bs == 0 || t.Shape[0]%bs != 0 {
			return nil, fmt.Errorf("quantize: tensor %q: rows of %d are not whole %v blocks of %d", t.Name, t.Shape[0], typ, bs)
		}
		c.Type, c.Wanted = typ, wanted
		c.Convert = typ != t.Type
		out[i] = c
	}
	return out, nil
}

// Order returns the indices of ts in the order llama.cpp visits and writes
// them: tensors outside the blocks first, then block by block (by number,
// so blk.10 follows blk.9), by name within each.
func Order(ts []Tensor) []int {
	idx := make([]int, len(ts))
	layer := make([]int, len(ts))
	for i, t := range ts {
		idx[i] = i
		layer[i] = layerOf(t.Name)
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ia, ib := idx[a], idx[b]
		if layer[ia] != layer[ib] {
			return layer[ia] < layer[ib]
		}
		return ts[ia].Name < ts[ib].Name
	})
	return idx
}

// layerOf reads the N of "blk.N." as C's sscanf("blk.%d.") does, or -1.
func layerOf(name string) int {
	s, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return -1
	}
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	n, digits := 0, 0
	for ; digits < len(s) && s[digits] >= '0' && s[digits] <= '9'; digits++ {
		if n < 1<<30 {
			n = n*10 + int(s[digits]-'0')
		}
	}
	if digits == 0 {
		return -1
	}
	if neg {
		return -n
	}
	return n
}

// quantizable is llama.cpp's test for a weight matrix: a 2-D or larger
// tensor named *weight that is not a norm or one of the small matrices
// some architectures keep exact.
func quantizable(name string, shape []uint64) bool {
	if !strings.HasSuffix(name, "weight") || nDims(shape) < 2 {
		return false
	}
	for _, keep := range []string{"_norm.weight", "ffn_gate_inp.weight", "ssm_conv1d.weight",
		"time_mix_first.weight", "time_mix_w1.weight", "time_mix_w2.weight", "time_mix_decay_w1.weight",
		"time_mix_decay_w2.weight", "time_mix_lerp_fused.weight", "attn_rel_b.weight"} {
		if strings.Contains(name, keep) {
			return false
		}
	}
	return name != "position_embd.weight" && name != "token_types.weight"
}

// nDims is ggml_n_dims: trailing dimensions of 1 do not count.
func nDims(shape []uint64) int {
	for i := len(shape) - 1; i >= 1; i-- {
		if shape[i] > 1 {
			return i + 1
		}
	}
	return 1
}

// moreBits is llama.cpp's use_more_bits: the first and last eighth of the
// layers and every third one between get more bits.
func moreBits(i, n int) bool {
	return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2
}

type planner struct {
	ft              FileType
	m               Model
	nAttnV          int
	hasOutput       bool
	iAttnV, iFFNDwn int
}

// pick is llama_tensor_get_type for the file types this package makes.
// The branches llama.cpp has for other file types (IQ1–IQ3, Q2_K_S, TQ)
// are left out: they cannot be reached.
func (p *planner) pick(name string, cols uint64) (typ, wanted quant.Type, err error) {
	ft, m := p.ft.Name, p.m
	t := p.ft.Base
	falcon := m.Arch == "falcon"
	switch {
	case name == "output.weight" || (!p.hasOutput && name == "token_embd.weight"):
		// A tied embedding is the output too, and gets its type.
		if falcon || cols%uint64(t.BlockSize()) != 0 {
			t = quant.Q8_0
		} else if t != quant.Q8_0 {
			t = quant.Q6_K
		}
	case name == "token_embd.weight":
	case strings.Contains(name, "attn_v.weight"):
		i := p.iAttnV
		p.iAttnV++
		switch {
		case ft == "Q2_K":
			t = quant.Q3_K
			if m.gqa() >= 4 {
				t = quant.Q4_K
			}
		case ft == "Q3_K_M":
			t = quant.Q4_K
			if i < 2 {
				t = quant.Q5_K
			}
		case ft == "Q3_K_L":
			t = quant.Q5_K
		case (ft == "IQ4_NL" || ft == "IQ4_XS") && m.gqa() >= 4:
			t = quant.Q5_K
		case (ft == "Q4_K_M" || ft == "Q5_K_M") && moreBits(i, p.nAttnV):
			t = quant.Q6_K
		case ft == "Q4_K_S" && i < 4:
			t = quant.Q5_K
		}
		if m.is70B() && (t == quant.Q3_K || t == quant.Q4_K) {
			// Eight query heads share each KV head: attn_v is small, and
			// more bits there cost little.
			t = quant.Q5_K
		}
		if m.Experts == 8 {
			t = quant.Q8_0
		}
	case strings.Contains(name, "attn_k.weight"):
		if m.Experts == 8 {
			t = quant.Q8_0
		}
	case strings.Contains(name, "attn_q.weight"):
	case strings.Contains(name, "ffn_down"):
		i, n, err := p.layer(p.iFFNDwn, name)
		p.iFFNDwn++
		if err != nil {
			return 0, 0, err
		}
		switch {
		case ft == "Q2_K":
			t = quant.Q3_K
		case ft == "Q3_K_M":
			switch {
			case i < n/16:
				t = quant.Q5_K
			case !falcon || moreBits(i, n):
				t = quant.Q4_K
			default:
				t = quant.Q3_K
			}
		case ft == "Q3_K_L":
			t = quant.Q5_K
			if falcon {
				t = quant.Q4_K
			}
		case ft == "Q4_K_M":
			switch {
			case falcon && i < n/16:
				t = quant.Q6_K
			case falcon && moreBits(i, n):
				t = quant.Q5_K
			case !falcon && moreBits(i, n):
				t = quant.Q6_K
			}
		case i < n/8 && (ft == "IQ4_NL" || ft == "IQ4_XS"):
			t = quant.Q5_K
		case ft == "Q5_K_M" && moreBits(i, n):
			t = quant.Q6_K
		case ft == "Q4_K_S" && !falcon && i < n/8:
			t = quant.Q5_K
		}
	case strings.Contains(name, "attn_output.weight"):
		switch {
		case falcon:
			if ft == "Q3_K_L" {
				t = quant.Q4_K
			}
		case m.Experts == 8:
			switch ft {
			case "Q2_K", "Q3_K_S", "Q3_K_M", "IQ4_NL", "Q4_K_S", "Q4_K_M", "IQ4_XS":
				t = quant.Q5_K
			}
		default:
			switch ft {
			case "Q2_K":
				t = quant.Q3_K
			case "Q3_K_M":
				t = quant.Q4_K
			case "Q3_K_L":
				t = quant.Q5_K
			}
		}
	case strings.Contains(name, "attn_qkv.weight"):
		switch ft {
		case "Q3_K_M", "Q3_K_L":
			t = quant.Q4_K
		case "Q4_K_M":
			t = quant.Q5_K
		case "Q5_K_M":
			t = quant.Q6_K
		}
	}

	if cols%uint64(t.BlockSize()) == 0 {
		return t, t, nil
	}
	// Rows that are not whole blocks (Qwen2.5-0.5B's 896): the nearest
	// type with 32-element blocks, or F16.
	want := t
	switch t {
	case quant.Q2_K, quant.Q3_K, quant.IQ4_XS:
		t = quant.IQ4_NL
	case quant.Q4_K:
		t = quant.Q5_0
	case quant.Q5_K:
		t = quant.Q5_1
	case quant.Q6_K:
		t = quant.Q8_0
	default:
		return 0, 0, fmt.Errorf("rows of %d are not whole %v blocks and %v has no fallback type", cols, want, want)
	}
	if cols%uint64(t.BlockSize()) != 0 {
		t = quant.F16
	}
	return t, want, nil
}

// layer is llama.cpp's layer_info: the counter for a dense model, the
// number in the name for a mixture of experts, whose expert tensors are
// not stored in layer order.
func (p *planner) layer(counter int, name string) (int, int, error) {
	n := p.m.Layers
	if p.m.Experts <= 1 {
		return counter, n, nil
	}
	i := layerOf(name)
	if i < 0 || i >= n {
		return 0, 0, fmt.Errorf("expert tensor's layer (%d from its name) is outside [0, %d)", i, n)
	}
	return i, n, nil
}

// pickMXFP4MoE is llama.cpp's MXFP4_MOE recipe (v0.5.0), gpt-oss's
// layout: expert tensors (3-D, more than one expert) in MXFP4, every
// other matrix, the output included, in Q8_0; rows that are not whole
// 32-element blocks fall back to F16.
func (p *planner) pickMXFP4MoE(name string, shape []uint64) (typ, wanted quant.Type) {
	t := quant.Q8_0
	isOutput := name == "output.weight" || (!p.hasOutput && name == "token_embd.weight")
	if !isOutput && len(shape) > 2 && shape[2] > 1 {
		t = quant.MXFP4
	}
	if shape[0]%uint64(t.BlockSize()) != 0 {
		return quant.F16, t
	}
	return t, t
}
