package arch

import (
	"testing"

	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/models/synth"
)

// TestStatesMatchCacheSpec: what States reads from a header alone is, layer
// for layer, the state the loaded model's CacheSpec allocates (so the fit
// check counts what a sequence will take), for qwen35 shapes with and
// without multi-token-prediction layers and a non-default attention
// interval; an architecture without recurrent layers has none.
func TestStatesMatchCacheSpec(t *testing.T) {
	for _, preset := range []string{"qwen35-test", "qwen35-odd", "qwen35moe-test", "qwen35moe-odd", "qwen3moe-test", "gemma3-odd"} {
		t.Run(preset, func(t *testing.T) {
			s, err := synth.Preset(preset, "F16", 1)
			if err != nil {
				t.Fatal(err)
			}
			f := writeModel(t, s)
			states, err := States(f)
			if err != nil {
				t.Fatal(err)
			}
			m, err := Build(f)
			if err != nil {
				t.Fatal(err)
			}
			spec := m.CacheSpec(quant.F16, 64)
			if states == nil {
				for i, l := range spec {
					if l.StateBytes != 0 {
						t.Errorf("layer %d keeps %d bytes of state, States says none", i, l.StateBytes)
					}
				}
				return
			}
			if len(states) != len(spec) {
				t.Fatalf("States has %d layers, CacheSpec %d", len(states), len(spec))
			}
			recurrent := 0
			for i, l := range spec {
				if states[i] != l.StateBytes || (l.KV != nil) != (states[i] == 0) {
					t.Errorf("layer %d: States %d bytes, CacheSpec %d (KV rows %v)", i, states[i], l.StateBytes, l.KV != nil)
				}
				if states[i] > 0 {
					recurrent++
				}
			}
			if recurrent == 0 || recurrent == len(spec) {
				t.Errorf("%d of %d layers recurrent: not a hybrid", recurrent, len(spec))
			}
		})
	}
}
