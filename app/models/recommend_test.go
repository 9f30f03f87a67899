package models

import (
	"testing"

	"github.com/churon/churon/assets/catalog"
	"github.com/churon/churon/models/fit"
	"github.com/churon/churon/models/hub/hubtest"
)

// TestRecommendQwen35: with the real catalog, a machine that runs Qwen 3.5
// is offered the largest Qwen 3.5 that fits comfortably — the 9B with 16
// GiB, the 4B with 8 — and an older model where neither fits or the engine
// lacks the architecture. The verdicts count the hybrid's KV rows only in
// its attention layers, plus its recurrent state and checkpoints.
func TestRecommendQwen35(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	h := hubtest.New(t)
	const G = 1 << 30
	cases := []struct {
		name        string
		total, free int64
		archs       []string
		want        string // "": any model but a Qwen 3.5
	}{
		{"16 GiB", 16 * G, 12 * G, nil, "qwen3.5-9b"},
		{"8 GiB", 8 * G, 6 * G, nil, "qwen3.5-4b"},
		{"4 GiB", 4 * G, 3 * G, nil, ""},
		{"16 GiB, no qwen35 in the engine", 16 * G, 12 * G, []string{"llama", "qwen2", "qwen3"}, "qwen3-4b-instruct-2507"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opt := options(t, h)
			opt.Catalog, opt.Memory, opt.Architectures = cat, fixedMemory(c.total, c.free), c.archs
			s := New(opt)
			defer s.Close()
			m, res, ok := s.Recommend()
			if !ok {
				t.Fatal("nothing recommended")
			}
			if c.want != "" && (m.ID != c.want || res.Verdict != fit.Fits) {
				t.Errorf("recommended %s (%v), want %s fitting", m.ID, res.Verdict, c.want)
			}
			if c.want == "" && m.Architecture == "qwen35" {
				t.Errorf("recommended %s (%v) where no Qwen 3.5 fits comfortably", m.ID, res)
			}
			t.Logf("%s: %s", m.ID, res)
		})
	}
	// The 9B's KV rows are those of its 8 attention layers: a quarter of
	// what 32 layers of 4 KV heads of 256 would take at 8192 tokens.
	m, _ := cat.Find("qwen3.5-9b")
	e := fit.EstimateMemory(CatalogMeta(m), 8192)
	if want := int64(8*8192*4*512*2) + m.StateBytes; e.KVCache != want || e.Checkpoints != fit.RecurrentCheckpoints*m.StateBytes {
		t.Errorf("qwen3.5-9b at 8192 tokens: KV %d, checkpoints %d; want %d, %d", e.KVCache, e.Checkpoints, want, fit.RecurrentCheckpoints*m.StateBytes)
	}
}
