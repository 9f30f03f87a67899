package engine

import (
	"context"
	"testing"

	"github.com/churon/churon/models/synth"
)

// TestGemma3TruncateAcrossWindow: local layers see only a window of
// positions; in a context this short their caches keep every position's
// rows (no ring is shorter), so cutting a sequence back past the window
// (an edited message, a regenerated answer) and feeding on computes what
// a fresh sequence computes. TestRingTruncate does the same past rings.
func TestGemma3TruncateAcrossWindow(t *testing.T) {
	ctx := context.Background()
	s, err := synth.Preset("gemma3-odd", "F16", 1)
	if err != nil {
		t.Fatal(err)
	}
	m := synthModel(t, s)
	vocab := m.Info().VocabSize
	first, second := snapTokens(30, vocab, 1), snapTokens(12, vocab, 2)
	for _, kvt := range []KVType{KVF16, KVF32} {
		t.Run(kvt.String(), func(t *testing.T) {
			opt := SequenceOptions{Context: 64, KVType: kvt, Batch: 8}
			seq, err := m.NewSequence(opt)
			if err != nil {
				t.Fatal(err)
			}
			if err := seq.Feed(ctx, first); err != nil {
				t.Fatal(err)
			}
			// Back 22 positions: far past the window of 5.
			if err := seq.Truncate(8); err != nil {
				t.Fatal(err)
			}
			if err := seq.Feed(ctx, second); err != nil {
				t.Fatal(err)
			}
			cold, err := m.NewSequence(opt)
			if err != nil {
				t.Fatal(err)
			}
			if err := cold.Feed(ctx, append(append([]int32(nil), first[:8]...), second...)); err != nil {
				t.Fatal(err)
			}
			sameFloats(t, "logits after truncating across the window", seq.Logits(), cold.Logits())
		})
	}
}
