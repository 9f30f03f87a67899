package catalog_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/churon/churon/assets/catalog"
	"github.com/churon/churon/engine/arch"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/models/synth"
)

// TestCatalogArchitecturesRun: the catalog offers only files whose
// architecture the engine runs, so a person who downloads a verified entry
// can chat with it.
func TestCatalogArchitecturesRun(t *testing.T) {
	c, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	names := arch.Names()
	for _, m := range c.Models {
		if !slices.Contains(names, m.Architecture) {
			t.Errorf("%s: architecture %q is not one the engine runs (%v)", m.ID, m.Architecture, names)
		}
	}
}

// TestCatalogShapesLoad builds a file of each catalog entry's shape that
// synth has a preset for (one layer, a small vocabulary and feed-forward:
// what the loader checks is the attention shape and the metadata keys) and
// checks the engine loads it with the shape the catalog states; and, from
// the metadata of all its layers, that the layers with a sliding window
// and the recurrent layers with their state are the ones the catalog
// counts for the fit check.
func TestCatalogShapesLoad(t *testing.T) {
	c, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	presets := map[string]string{"gemma-3-1b-it": "gemma3-1b", "gemma-3-4b-it": "gemma3-4b",
		"gemma-3-12b-it": "gemma3-12b", "gemma-3-27b-it": "gemma3-27b", "gpt-oss-20b": "gpt-oss-20b",
		"qwen3.5-4b": "qwen3.5-4b", "qwen3.5-9b": "qwen3.5-9b", "qwen3.5-35b-a3b": "qwen3.5-35b-a3b"}
	for id, preset := range presets {
		t.Run(id, func(t *testing.T) {
			var m *catalog.Model
			for i := range c.Models {
				if c.Models[i].ID == id {
					m = &c.Models[i]
				}
			}
			if m == nil {
				t.Fatalf("no catalog entry %s", id)
			}
			s, err := synth.Preset(preset, "F16", 1)
			if err != nil {
				t.Fatal(err)
			}
			s.FileType, s.Type = "", quant.Q8_0
			s.Layers, s.Vocab, s.FF = 1, 512, 256
			if s.Experts > 0 {
				s.Experts, s.ExpertsUsed, s.ExpertFF = 4, 2, 256
			}
			path := filepath.Join(t.TempDir(), "m.gguf")
			if err := synth.Write(path, s); err != nil {
				t.Fatal(err)
			}
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Architecture() != m.Architecture {
				t.Fatalf("preset %s is %s, the catalog says %s", preset, f.Architecture(), m.Architecture)
			}
			model, err := arch.Build(f)
			if err != nil {
				t.Fatalf("the engine refuses %s's shape: %v", id, err)
			}
			// One layer with the real widths: the first is a DeltaNet layer,
			// whose state the catalog's figure must count.
			perLayer := 0
			if states, err := arch.States(f); err != nil {
				t.Fatal(err)
			} else if len(states) > 0 {
				perLayer = states[0]
			}
			cfg := model.Config()
			if cfg.Embd != m.Embedding || cfg.Heads != m.Heads || cfg.KVHeads != m.KVHeads || cfg.HeadDim != m.HeadDim {
				t.Errorf("loaded embd %d heads %d/%d head size %d; the catalog says %d, %d/%d, %d",
					cfg.Embd, cfg.Heads, cfg.KVHeads, cfg.HeadDim, m.Embedding, m.Heads, m.KVHeads, m.HeadDim)
			}
			full, _ := synth.Preset(preset, "F16", 1)
			if full.Layers != m.Layers || full.Context != m.Context {
				t.Errorf("preset has %d layers and context %d; the catalog says %d and %d", full.Layers, full.Context, m.Layers, m.Context)
			}
			// Every layer, at widths that keep the file small: the windows
			// are metadata.
			full.FileType, full.Type = "", quant.F32
			full.Embd, full.Heads, full.KVHeads, full.HeadDim, full.FF, full.Vocab = 64, 2, 1, 32, 64, 300
			if full.Experts > 0 {
				full.Experts, full.ExpertsUsed, full.ExpertFF = 2, 1, 32
			}
			if q := &full.Qwen35; q.SSMHeadDim > 0 {
				q.SSMKHeads, q.SSMVHeads, q.SSMHeadDim, q.RopeDims = 1, 2, 32, 16
				if q.SharedFF > 0 {
					q.SharedFF = 32
				}
			}
			if err := synth.Write(path, full); err != nil {
				t.Fatal(err)
			}
			ff, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer ff.Close()
			ws, err := arch.Windows(ff)
			if err != nil {
				t.Fatal(err)
			}
			window, layers := 0, 0
			for _, w := range ws {
				if w > 0 {
					window, layers = max(window, w), layers+1
				}
			}
			if window != m.SlidingWindow || layers != m.WindowLayers {
				t.Errorf("%d layers attend over a window of %d; the catalog says %d over %d", layers, window, m.WindowLayers, m.SlidingWindow)
			}
			states, err := arch.States(ff)
			if err != nil {
				t.Fatal(err)
			}
			recurrent := 0
			for _, b := range states {
				if b > 0 {
					recurrent++
				}
			}
			if recurrent != m.RecurrentLayers || int64(recurrent*perLayer) != m.StateBytes {
				t.Errorf("%d recurrent layers of %d bytes of state each; the catalog says %d layers, %d bytes", recurrent, perLayer, m.RecurrentLayers, m.StateBytes)
			}
		})
	}
}
