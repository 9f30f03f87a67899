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
