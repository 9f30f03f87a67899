package kvcache

import (
	"context"
	"testing"

	"github.com/churon/churon/engine"
	"github.com/churon/churon/internal/testutil"
)

// BenchmarkLoad measures Store.Load of a conversation's snapshot on a
// real-sized model: what a fresh process pays before a follow-up's first
// token. It runs only when CHURON_KV_MEASURE_MODEL names a GGUF (e.g.
// qwen3.5-0.8b-Q4_0-seed1.gguf from `churon dev synth`, whose recurrent
// states dominate the file); CHURON_KV_MEASURE_TOKENS sets the length
// (default 2137, `churon bench --followup`'s history). The tokens are fed
// as two prompts, so the file holds a turn boundary's checkpoint too.
func BenchmarkLoad(b *testing.B) {
	path := measureModelPath(b, "snapshot loads")
	n := envCount(b, "CHURON_KV_MEASURE_TOKENS", 2137)
	ctx := context.Background()
	m := loadThreads(b, path, 0) // the engine's default, as the app runs it
	opt := engine.SequenceOptions{Context: n + 512}
	ids := testutil.Tokens(n, m.Info().VocabSize, 1)
	seq := fed(b, m, opt, ids[:n-16])
	if err := seq.Feed(ctx, ids[n-16:]); err != nil {
		b.Fatal(err)
	}
	st := open(b, 0)
	size, err := st.Save("conv-1", seq)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	b.ReportMetric(float64(size)/(1<<20), "MiB/file")
	for b.Loop() {
		got, err := st.Load(ctx, "conv-1", m, opt)
		if err != nil {
			b.Fatal(err)
		}
		if !same(got.Logits(), seq.Logits()) {
			b.Fatal("restored logits differ")
		}
		got.Close()
	}
}
