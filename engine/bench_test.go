package engine

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/churon/churon/internal/cputime"
	"github.com/churon/churon/models/synth"
)

// benchModel loads $CHURON_BENCH_MODEL into memory (with
// $CHURON_BENCH_THREADS threads, default all cores), or else generates a two-layer
// model of Qwen2.5-0.5B's width in Q4_0 (the weights of a decode step then
// stay in cache, so this measures compute, not memory).
func benchModel(b *testing.B) *Model {
	b.Helper()
	path := os.Getenv("CHURON_BENCH_MODEL")
	if path == "" {
		s, err := synth.Preset("qwen2.5-0.5b", "Q4_0", 1)
		if err != nil {
			b.Fatal(err)
		}
		s.Layers, s.Vocab = 2, 4096
		path = synthFile(b, "bench.gguf", s)
	}
	threads, _ := strconv.Atoi(os.Getenv("CHURON_BENCH_THREADS"))
	m, err := Load(context.Background(), path, LoadOptions{Threads: threads, InMemory: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	return m
}

// BenchmarkDecode times one decode step of B sequences at depth 128
// ($CHURON_BENCH_DEPTH); tokens/s is B × steps/s. The batch sizes are the
// load benchmark's levels (tools/serveload), so that its end-to-end
// figures can be set against the engine's step alone.
func BenchmarkDecode(b *testing.B) {
	m := benchModel(b)
	ctx := context.Background()
	depth := 128
	if d, err := strconv.Atoi(os.Getenv("CHURON_BENCH_DEPTH")); err == nil && d > 0 {
		depth = d
	}
	for _, n := range []int{1, 2, 4, 8} {
		// The prompt is fed once; each run truncates back to it, so the
		// profile of a run is decode only.
		var seqs []*Sequence
		toks := make([]int32, n)
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			if seqs == nil {
				seqs = make([]*Sequence, n)
				prompts := make([][]int32, n)
				for i := range seqs {
					seqs[i] = must(m.NewSequence(SequenceOptions{Context: depth + 1024, Batch: 512}))
					prompts[i] = make([]int32, depth)
					for j := range prompts[i] {
						prompts[i][j] = int32(3 + (i*131+j*7)%200)
					}
					toks[i] = int32(10 + i)
				}
				if err := m.FeedBatch(ctx, seqs, prompts); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
			}
			b.ReportAllocs()
			cpu := cputime.Process()
			steps := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				if i%1000 == 0 {
					b.StopTimer()
					for _, s := range seqs {
						if err := s.Truncate(depth); err != nil {
							b.Fatal(err)
						}
					}
					b.StartTimer()
				}
				t0 := time.Now()
				if err := m.DecodeBatch(ctx, seqs, toks); err != nil {
					b.Fatal(err)
				}
				steps = append(steps, time.Since(t0))
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tokens/s")
			// And at the 10th percentile step: on a shared machine the
			// fast steps are those no other program disturbed, so two
			// builds compare more steadily on them than on the mean.
			slices.Sort(steps)
			b.ReportMetric(float64(n)/steps[len(steps)/10].Seconds(), "p10-tokens/s")
			// Per CPU-second as well: on a shared machine the wall clock
			// counts the waits for a core, CPU time only the work (the
			// threads' spinning between jobs included), so that the
			// batch sizes compare even when the load changes between them.
			b.ReportMetric(float64(n*b.N)/(cputime.Process()-cpu).Seconds(), "tokens/cpu-s")
		})
	}
}

// BenchmarkPrefill times a 128-token prompt.
func BenchmarkPrefill(b *testing.B) {
	m := benchModel(b)
	ctx := context.Background()
	prompt := make([]int32, 128)
	for i := range prompt {
		prompt[i] = int32(3 + i*7%200)
	}
	seq := must(m.NewSequence(SequenceOptions{Context: 256, Batch: 512}))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := seq.Truncate(0); err != nil {
			b.Fatal(err)
		}
		if err := seq.Feed(ctx, prompt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(prompt)*b.N)/b.Elapsed().Seconds(), "tokens/s")
}
