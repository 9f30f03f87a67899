package fit

import (
	"fmt"

	"github.com/churon/churon/internal/kvring"
)

// Estimate is the memory a model needs, in bytes.
type Estimate struct {
	Context int   `json:"context"`
	Weights int64 `json:"weights"`
	KVCache int64 `json:"kv_cache"` // KV rows and recurrent layers' state
	// Checkpoints is what a recurrent model's state checkpoints take at
	// most (RecurrentCheckpoints copies of the state, in host memory).
	Checkpoints int64 `json:"checkpoints,omitempty"`
	Overhead    int64 `json:"overhead"`
	Total       int64 `json:"total"`
}

// baseOverhead covers the runtime, tokenizer and scratch buffers that do
// not grow with the model; activations grow with the width and context
// and are added per model.
const baseOverhead = 256 << 20

// RecurrentCheckpoints is how many copies of its recurrent state a
// sequence keeps at most, to go back to an earlier token: the engine's
// DefaultMaxCheckpoints (a test there pins the two together), which a
// conversation reaches at 16 × 256 tokens or 16 turns.
const RecurrentCheckpoints = 16

// EstimateMemory estimates the memory to run the model at a context length
// (0: the model's trained length, capped at 8192, which is what the app
// opens by default): the weights as stored, an F16 KV cache of
// rows × (K + V) × kv_heads × head_dim × 2 bytes — context rows in each
// layer, but in a sliding-window layer the rows of its ring, as the
// engine allocates them; in a recurrent layer none, its state instead,
// and the checkpoints of that state —, and an overhead for working
// buffers.
func EstimateMemory(m Meta, context int) Estimate {
	if context <= 0 {
		context = min(max(m.ContextLength, 1), 8192)
	}
	e := Estimate{Context: context, Weights: m.WeightBytes}
	attn := m.Layers - min(max(m.RecurrentLayers, 0), m.Layers)
	rows := int64(attn) * int64(context)
	if w := min(max(m.WindowLayers, 0), m.Layers); w > 0 {
		if ring := kvring.Rows(m.SlidingWindow, context); ring > 0 {
			rows -= int64(w) * int64(context-ring)
		}
	}
	e.KVCache = rows*int64(m.KVHeads)*int64(m.HeadDimK+m.HeadDimV)*2 + m.StateBytes
	e.Checkpoints = m.StateBytes * RecurrentCheckpoints
	// Activations and logits: a few rows of the model's width per token of
	// a prompt batch, and attention scores over the context; 5% of the
	// weights covers the rest (dequantization scratch, the tokenizer).
	act := int64(512)*int64(m.Embedding)*4*8 + int64(m.Heads)*int64(context)*4*512
	e.Overhead = baseOverhead + act + m.WeightBytes/20
	e.Total = e.Weights + e.KVCache + e.Checkpoints + e.Overhead
	return e
}

// Memory is what the machine has.
type Memory struct {
	Total     int64 `json:"total"`
	Available int64 `json:"available"` // what can be used without swapping
}

// Verdict is the answer to "will it fit?".
type Verdict int

const (
	Unknown Verdict = iota // the machine's memory is not known
	Fits                   // comfortably, with room for the rest of the system
	Tight                  // fits in what is free now, with little to spare, or only if other programs give memory back
	WontFit                // more than the machine has
)

func (v Verdict) String() string {
	return [...]string{"unknown", "fits", "tight", "will not fit"}[min(max(int(v), 0), 3)]
}

// Result is a verdict with its numbers.
type Result struct {
	Verdict  Verdict  `json:"-"`
	Name     string   `json:"verdict"`
	Need     int64    `json:"need"`
	Memory   Memory   `json:"memory"`
	Estimate Estimate `json:"estimate"`
}

// Check compares an estimate with the machine's memory: it fits when it
// needs at most 80% of the available memory; it is tight when it needs
// more but no more than the available memory, or no more than 90% of the
// total (other programs would have to give memory back); otherwise it
// will not fit.
func Check(e Estimate, mem Memory) Result {
	r := Result{Need: e.Total, Memory: mem, Estimate: e}
	switch {
	case mem.Total <= 0:
		r.Verdict = Unknown
	case mem.Available > 0 && e.Total*10 <= mem.Available*8:
		r.Verdict = Fits
	case e.Total <= mem.Available || e.Total*10 <= mem.Total*9:
		r.Verdict = Tight
	default:
		r.Verdict = WontFit
	}
	r.Name = r.Verdict.String()
	return r
}

func (r Result) String() string {
	if r.Verdict == Unknown {
		return fmt.Sprintf("needs about %s (this machine's memory is unknown)", gib(r.Need))
	}
	ckpt := ""
	if r.Estimate.Checkpoints > 0 {
		ckpt = " + state checkpoints " + gib(r.Estimate.Checkpoints)
	}
	return fmt.Sprintf("%s: needs about %s (weights %s + KV cache %s at %d tokens%s + %s overhead); %s available of %s",
		r.Verdict, gib(r.Need), gib(r.Estimate.Weights), gib(r.Estimate.KVCache), r.Estimate.Context, ckpt,
		gib(r.Estimate.Overhead), gib(r.Memory.Available), gib(r.Memory.Total))
}

func gib(n int64) string { return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30)) }
