package engine

import (
	"fmt"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/internal/units"
)

// CacheSize is what the cache of one sequence takes, as NewSequence would
// allocate it.
type CacheSize struct {
	Context int // positions
	KVType  KVType
	Bytes   int64 // KV rows and layer state, every layer's
	// RingLayers of the model's layers attend over a sliding window of
	// Window positions and keep a ring of RingRows KV rows instead of one
	// per position (0 when the context is no longer than a ring).
	RingLayers, RingRows, Window int
}

// CacheSize says what a sequence made with opt allocates for its cache,
// without making one: for `churon info`, the fit check's tests and
// whoever sizes a budget.
func (m *Model) CacheSize(opt SequenceOptions) (CacheSize, error) {
	qt, err := opt.KVType.quantType()
	if err != nil {
		return CacheSize{}, err
	}
	cs := CacheSize{Context: m.contextFor(opt), KVType: opt.KVType}
	for _, l := range m.net.CacheSpec(qt, cs.Context) {
		if l.KV != nil {
			cs.Bytes += l.KV.Bytes()
			if l.KV.Ring > 0 {
				cs.RingLayers++
				cs.RingRows, cs.Window = max(cs.RingRows, l.KV.Ring), max(cs.Window, l.Window)
			}
		}
		cs.Bytes += int64(l.StateBytes)
	}
	return cs, nil
}

// String says it in one line for a model of the given layers: "254.0
// MiB at 4096 tokens (f16; 29 of 34 layers keep a ring of 1536 rows: a
// window of 1024 + 512)".
func (cs CacheSize) String(layers int) string {
	s := fmt.Sprintf("%s at %d tokens (%v", units.Bytes(cs.Bytes), cs.Context, cs.KVType)
	if cs.RingLayers > 0 {
		s += fmt.Sprintf("; %d of %d layers keep a ring of %d rows: a window of %d + %d", cs.RingLayers, layers, cs.RingRows,
			cs.Window, backend.RingMargin)
	}
	return s + ")"
}
