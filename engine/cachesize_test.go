package engine

import (
	"testing"

	"github.com/churon/churon/engine/arch"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/models/synth"
)

// TestCacheSize: what CacheSize says a sequence allocates is what it
// allocates, rings counted, and the windows arch.Windows reads from the
// header alone (what the fit check counts) are the ones the cache keeps
// rings for.
func TestCacheSize(t *testing.T) {
	specs := ringSpecs(t)
	specs["llama"] = synth.Tiny("llama")
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			path := synthFile(t, "m.gguf", spec)
			m := loadModel(t, path)
			for _, opt := range []SequenceOptions{{Context: 256}, {Context: ringCtx}, {Context: ringCtx, KVType: KVQ8_0}} {
				cs, err := m.CacheSize(opt)
				if err != nil {
					t.Fatal(err)
				}
				s, err := m.NewSequence(opt)
				if err != nil {
					t.Fatal(err)
				}
				if cs.Bytes != s.KVBytes() || cs.Context != s.Context() || (cs.RingLayers > 0) != (ringLayers(t, s) > 0) {
					t.Fatalf("%+v: CacheSize %+v, the sequence allocates %d bytes", opt, cs, s.KVBytes())
				}
				t.Logf("%s", cs.String(m.Info().Layers))
				s.Close()
			}
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ws, err := arch.Windows(f)
			if err != nil {
				t.Fatal(err)
			}
			for l, spec := range m.net.CacheSpec(0, ringCtx) {
				w := 0
				if ws != nil {
					w = ws[l]
				}
				if w != spec.Window {
					t.Fatalf("layer %d: Windows says %v, the cache keeps a window of %d", l, ws, spec.Window)
				}
			}
		})
	}
}
