// Package arch holds the model architectures. Each is data — a struct of
// named tensors read from the GGUF file — plus a forward pass written once
// against backend.Device and a backend.Plan, so it runs on the CPU, on an
// accelerator, or split between them, without knowing which.
// Architectures register themselves by their general.architecture name.
package arch

import (
	"fmt"

	"github.com/churon/churon/engine/quant"
	"sort"
	"strings"
	"sync"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/gguf"
)

// Model is a loaded architecture. Build reads its tensors from the file;
// Place makes them resident on the devices of a plan; then Forward runs.
type Model interface {
	// Config describes the model's shape.
	Config() *Config
	// Weights lists every tensor the forward pass applies, each with the
	// part of the model it belongs to: what a planner weighs.
	Weights() []Part
	// Place uploads every weight to the device its part runs on in p and
	// makes p the plan Forward follows. Weights already on their device
	// stay. Not safe to call during a Forward.
	Place(p *backend.Plan) error
	// CacheSpec says what each layer keeps per sequence, for a cache of
	// ctx positions stored as kvType.
	CacheSpec(kvType quant.Type, ctx int) []backend.LayerSpec
	// Forward runs one batch through the model: rows from one or more
	// sequences, each with its own cache made for the current plan. For
	// each of batch.OutRows it writes that row's logits to logits, one
	// Vocab-long row each, in order. s holds reusable buffers.
	Forward(s *Scratch, batch *Batch, logits []float32) error
}

// Part numbers the parts of a model a plan places: InputPart is the
// embedding, 0 … Layers-1 the layers, Layers the output head (the final
// norm and projection).
type Part struct {
	Part   int
	Tensor *backend.Tensor
}

// InputPart is the embedding's part number.
const InputPart = -1

// Builder reads an architecture's tensors and hyperparameters from a file.
type Builder func(f *gguf.File) (Model, error)

var (
	mu       sync.RWMutex
	builders = map[string]Builder{}
)

// Register makes an architecture available under name. It panics if the
// name is taken, like database/sql.Register: that is a programming error.
func Register(name string, b Builder) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := builders[name]; dup {
		panic("arch: Register called twice for " + name)
	}
	builders[name] = b
}

// Names lists the registered architectures, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(builders))
	for n := range builders {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ErrUnknownArchitecture is wrapped by Build for an unregistered name.
var ErrUnknownArchitecture = fmt.Errorf("arch: unknown architecture")

// UnknownArchitectureError names the architecture a file asks for and the
// ones registered, for a front end to say both. It matches
// ErrUnknownArchitecture.
type UnknownArchitectureError struct {
	Name      string
	Supported []string // sorted
}

func (e *UnknownArchitectureError) Error() string {
	return fmt.Sprintf("%v %q (supported: %s)", ErrUnknownArchitecture, e.Name, strings.Join(e.Supported, ", "))
}

func (e *UnknownArchitectureError) Is(target error) bool { return target == ErrUnknownArchitecture }

// Build constructs the model described by f's general.architecture.
func Build(f *gguf.File) (Model, error) {
	name := f.Architecture()
	if name == "" {
		return nil, fmt.Errorf("arch: file has no general.architecture")
	}
	mu.RLock()
	b, ok := builders[name]
	mu.RUnlock()
	if !ok {
		return nil, &UnknownArchitectureError{Name: name, Supported: Names()}
	}
	m, err := b(f)
	if err != nil {
		return nil, fmt.Errorf("arch %s: %w", name, err)
	}
	return m, nil
}

// Config is the shape of a transformer, read from GGUF metadata.
type Config struct {
	Arch     string
	Embd     int // hidden width
	Layers   int
	Heads    int
	KVHeads  int
	HeadDim  int // per-head width of queries and keys
	FF       int // feed-forward width
	Vocab    int
	Context  int // trained context length
	RMSEps   float32
	Rope     backend.Rope
	TiedEmbd bool // output projection shares token_embd
	// Mixture of experts (0 for a dense model): experts per layer, how
	// many each token uses, and an expert's feed-forward width.
	Experts, ExpertsUsed, ExpertFF int
	// Gated DeltaNet layers (Qwen 3.5; 0 for a model without): the width
	// of the projection the convolution runs over, of the output, and the
	// value heads.
	SSMConvDim, SSMValueDim, SSMHeads int
}

// KVDim is the width of one position's keys (and values) in the cache.
func (c *Config) KVDim() int { return c.KVHeads * c.HeadDim }
