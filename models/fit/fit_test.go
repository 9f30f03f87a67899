package fit

import (
	"strings"
	"testing"
)

func TestEstimate(t *testing.T) {
	m := Meta{Layers: 32, KVHeads: 8, HeadDimK: 128, HeadDimV: 128, Heads: 32, Embedding: 4096, WeightBytes: 4 << 30, ContextLength: 131072}
	e := EstimateMemory(m, 8192)
	// 32 layers × 8192 × 2 × 8 × 128 × 2 bytes = 1 GiB: Llama 3 8B's F16 cache at 8k.
	if e.KVCache != 1<<30 {
		t.Errorf("KV cache %d; want 1 GiB", e.KVCache)
	}
	if e.Total != e.Weights+e.KVCache+e.Overhead || e.Overhead < baseOverhead || e.Overhead > 2<<30 {
		t.Errorf("%+v", e)
	}
	if d := EstimateMemory(m, 0); d.Context != 8192 {
		t.Errorf("default context %d", d.Context)
	}
}

// TestEstimateWindows: sliding-window layers count the rows of their
// rings, not the context: Gemma 3 4B's F16 cache (34 layers, 29 of them
// local with a window of 1024; 4 KV heads of 256) takes 254 MiB at 4096
// tokens instead of 544, and 814 MiB instead of 4.25 GiB at 32k.
func TestEstimateWindows(t *testing.T) {
	const MiB = 1 << 20
	g := Meta{Layers: 34, KVHeads: 4, HeadDimK: 256, HeadDimV: 256, Heads: 8, Embedding: 2560, ContextLength: 131072,
		SlidingWindow: 1024, WindowLayers: 29}
	for _, c := range []struct {
		context    int
		want, full int64
	}{
		{4096, 254 * MiB, 544 * MiB},
		{32768, 814 * MiB, 4352 * MiB},
		{1024, 136 * MiB, 136 * MiB}, // a ring would be longer than the context
	} {
		if got := EstimateMemory(g, c.context).KVCache; got != c.want {
			t.Errorf("gemma3-4b at %d: KV %d MiB, want %d", c.context, got/MiB, c.want/MiB)
		}
		full := g
		full.WindowLayers = 0
		if got := EstimateMemory(full, c.context).KVCache; got != c.full {
			t.Errorf("without windows at %d: KV %d MiB, want %d", c.context, got/MiB, c.full/MiB)
		}
	}
}

// TestEstimateRecurrent: a hybrid's recurrent layers keep no KV rows but
// their state, and the checkpoints of that state: Qwen3.5-9B (32 layers,
// 24 of them Gated DeltaNet with a state of 2,195,456 bytes each; 4 KV
// heads of 256 in the other 8) takes 256 MiB of KV rows at 8192 tokens
// instead of 1 GiB, plus 50.25 MiB of state and 16 checkpoints of it.
func TestEstimateRecurrent(t *testing.T) {
	const MiB = 1 << 20
	state := int64(24 * 2195456)
	q := Meta{Layers: 32, KVHeads: 4, HeadDimK: 256, HeadDimV: 256, Heads: 16, Embedding: 4096, ContextLength: 262144,
		WeightBytes: 5 << 30, RecurrentLayers: 24, StateBytes: state}
	e := EstimateMemory(q, 8192)
	if e.KVCache != 256*MiB+state || e.Checkpoints != RecurrentCheckpoints*state {
		t.Errorf("KV %d, checkpoints %d; want %d and %d", e.KVCache, e.Checkpoints, 256*MiB+state, RecurrentCheckpoints*state)
	}
	if e.Total != e.Weights+e.KVCache+e.Checkpoints+e.Overhead {
		t.Errorf("%+v", e)
	}
	dense := q
	dense.RecurrentLayers, dense.StateBytes = 0, 0
	if d := EstimateMemory(dense, 8192); d.KVCache != 1024*MiB || d.Checkpoints != 0 {
		t.Errorf("as a dense model: KV %d, checkpoints %d", d.KVCache, d.Checkpoints)
	}
	r := Check(e, Memory{Total: 16 << 30, Available: 12 << 30})
	if !strings.Contains(r.String(), "state checkpoints 0.79 GiB") {
		t.Errorf("verdict text %q does not name the checkpoints", r.String())
	}
}

func TestCheck(t *testing.T) {
	const G = 1 << 30
	cases := []struct {
		need      int64
		total, av int64
		want      Verdict
	}{
		{4 * G, 16 * G, 10 * G, Fits},
		{9 * G, 16 * G, 10 * G, Tight},
		{14 * G, 16 * G, 10 * G, Tight},
		{15 * G, 16 * G, 10 * G, WontFit},
		{4 * G, 0, 0, Unknown},
	}
	for _, c := range cases {
		r := Check(Estimate{Total: c.need}, Memory{Total: c.total, Available: c.av})
		if r.Verdict != c.want || r.Name != c.want.String() {
			t.Errorf("need %d of %d/%d: %v; want %v", c.need, c.av, c.total, r.Verdict, c.want)
		}
		if !strings.Contains(r.String(), "GiB") {
			t.Errorf("%q", r)
		}
	}
}
