package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/fake"
	"github.com/churon/churon/models/synth"
)

// ringCtx is a context long enough that the window models' local layers
// keep rings (5 or 8 positions + backend.RingMargin, 576 rows) shorter
// than it; ringPrompt crosses them twice.
const (
	ringCtx    = 2048
	ringPrompt = 1300
)

// ringSpecs are the architectures with sliding-window layers: gemma3
// (a window of 5, a global layer every third) and gpt-oss (a window of 8
// on every other layer, MXFP4 experts, sinks).
func ringSpecs(t *testing.T) map[string]synth.Spec {
	g3, err := synth.Preset("gemma3-odd", "F16", 1)
	if err != nil {
		t.Fatal(err)
	}
	g3.Context = 32768
	oss := synth.Tiny("gpt-oss")
	oss.FileType = "MXFP4_MOE"
	oss.Context = 32768
	return map[string]synth.Spec{"gemma3-F16": g3, "gpt-oss-MXFP4_MOE": oss}
}

// fullCache gives s a cache that keeps every position of every layer, as
// the engine did before rings: the reference rings must equal.
func fullCache(t *testing.T, s *Sequence) {
	t.Helper()
	specs := s.m.net.CacheSpec(s.kvType, s.ctxLen)
	for i := range specs {
		kv := *specs[i].KV
		kv.Ring = 0
		specs[i].KV = &kv
	}
	c, err := backend.NewCache(s.m.plan, specs)
	if err != nil {
		t.Fatal(err)
	}
	s.held.cache.Release()
	s.held.cache, s.run = c, 0
}

// ringLayers counts the layers of s whose KV is a ring, and checks that
// each holds no more rows than it must.
func ringLayers(t *testing.T, s *Sequence) int {
	t.Helper()
	n := 0
	c := s.held.cache
	specs := s.m.net.CacheSpec(s.kvType, s.ctxLen)
	for l := range c.Layers() {
		sp := c.KV(l).Spec()
		if want := backend.RingRows(specs[l].Window, s.ctxLen); sp.Ring != want {
			t.Fatalf("layer %d (window %d): a ring of %d rows, want %d", l, specs[l].Window, sp.Ring, want)
		}
		if sp.Ring > 0 {
			n++
		}
	}
	return n
}

// TestRingEqualsFullCache: a sequence whose sliding-window layers keep
// rings computes, at every position of a prompt that wraps them twice and
// while decoding, bit for bit what the full cache computes, in less
// memory.
func TestRingEqualsFullCache(t *testing.T) {
	ctx := context.Background()
	for name, spec := range ringSpecs(t) {
		m := synthModel(t, spec)
		toks := snapTokens(ringPrompt, m.Info().VocabSize, 21)
		for _, kvt := range []KVType{KVF16, KVF32, KVQ8_0} {
			t.Run(name+"/"+kvt.String(), func(t *testing.T) {
				opt := SequenceOptions{Context: ringCtx, KVType: kvt}
				ring, err := m.NewSequence(opt)
				if err != nil {
					t.Fatal(err)
				}
				full, _ := m.NewSequence(opt)
				fullCache(t, full)
				if n := ringLayers(t, ring); n == 0 || ring.KVBytes() >= full.KVBytes() {
					t.Fatalf("%d ring layers, %d bytes against %d", n, ring.KVBytes(), full.KVBytes())
				}
				t.Logf("KV %d bytes with rings, %d without", ring.KVBytes(), full.KVBytes())
				got, err := ring.FeedAll(ctx, toks)
				if err != nil {
					t.Fatal(err)
				}
				want, err := full.FeedAll(ctx, toks)
				if err != nil {
					t.Fatal(err)
				}
				sameFloats(t, "prompt logits", got, want)
				for range 4 {
					tok := int32(argmax(full.Logits()))
					for _, s := range []*Sequence{ring, full} {
						if err := s.Feed(ctx, []int32{tok}); err != nil {
							t.Fatal(err)
						}
					}
					sameFloats(t, "decode logits", ring.Logits(), full.Logits())
				}
			})
		}
	}
}

// TestRingTruncate: cut back within a ring's margin, a sequence goes on
// from its cache; cut back further, it runs its tokens again first. Either
// way every logit after the cut equals a cold prefill of the same tokens,
// bit for bit — in passes of any size, even one larger than a ring allows.
func TestRingTruncate(t *testing.T) {
	ctx := context.Background()
	for name, spec := range ringSpecs(t) {
		m := synthModel(t, spec)
		vocab := m.Info().VocabSize
		toks := snapTokens(ringPrompt, vocab, 22)
		for _, kb := range []struct {
			kvt   KVType
			batch int
		}{{KVF16, DefaultBatch}, {KVF16, 4096}, {KVQ8_0, DefaultBatch}} {
			kvt, batch := kb.kvt, kb.batch
			t.Run(fmt.Sprintf("%s/%v/batch%d", name, kvt, batch), func(t *testing.T) {
				opt := SequenceOptions{Context: ringCtx, KVType: kvt, Batch: batch}
				seq, err := m.NewSequence(opt)
				if err != nil {
					t.Fatal(err)
				}
				if err := seq.Feed(ctx, toks); err != nil {
					t.Fatal(err)
				}
				for i, c := range []struct {
					keep   int
					refill bool
				}{
					{ringPrompt - 300, false}, // a regenerated answer: within the margin
					{ringPrompt - 100, false},
					{400, true}, // an edit far back
					{ringPrompt - 513, false},
					{ringPrompt - 700, true},
					{3, true}, // within the first window, whose rows the ring lost
					{0, false},
				} {
					// Grow back to the prompt's length first, so each cut
					// starts from a wrapped ring.
					if n := seq.Len(); n < ringPrompt {
						if err := seq.Feed(ctx, toks[n:]); err != nil {
							t.Fatal(err)
						}
					}
					if err := seq.Truncate(c.keep); err != nil {
						t.Fatal(err)
					}
					if seq.Refills() != c.refill {
						t.Fatalf("cut to %d: Refills %v, want %v", c.keep, seq.Refills(), c.refill)
					}
					more := snapTokens(40, vocab, uint64(30+i))
					got, err := seq.FeedAll(ctx, more)
					if err != nil {
						t.Fatal(err)
					}
					all := append(slices.Clone(toks[:c.keep]), more...)
					if !slices.Equal(seq.Tokens(), all) {
						t.Fatalf("cut to %d: the sequence holds other tokens", c.keep)
					}
					cold, _ := m.NewSequence(SequenceOptions{Context: ringCtx, KVType: kvt})
					want, err := cold.FeedAll(ctx, all)
					if err != nil {
						t.Fatal(err)
					}
					sameFloats(t, fmt.Sprintf("cut to %d, then fed", c.keep), got, want[c.keep*vocab:])
					toks = append(all, toks[len(all):]...)
				}
			})
		}
	}
}

// TestRingRefillCancelled: a refill stopped half way leaves a sequence of
// the tokens it ran, which goes on exactly as a cold prefill of them.
func TestRingRefillCancelled(t *testing.T) {
	spec := ringSpecs(t)["gemma3-F16"]
	m := synthModel(t, spec)
	vocab := m.Info().VocabSize
	toks := snapTokens(ringPrompt, vocab, 23)
	seq, err := m.NewSequence(SequenceOptions{Context: ringCtx, Batch: 100})
	if err != nil {
		t.Fatal(err)
	}
	if err := seq.Feed(context.Background(), toks); err != nil {
		t.Fatal(err)
	}
	if err := seq.Truncate(1000); err != nil {
		t.Fatal(err)
	}
	if err := seq.Truncate(200); err != nil {
		t.Fatal(err)
	}
	// Cancelled after the refill's first pass of 100 tokens.
	if err := seq.Feed(&cancelAfter{Context: context.Background(), n: 1}, []int32{5}); err == nil {
		t.Fatal("a cancelled feed succeeded")
	}
	n := seq.Len()
	if n != 100 || !slices.Equal(seq.Tokens(), toks[:n]) {
		t.Fatalf("after a cancelled refill: %d tokens", n)
	}
	if err := seq.Feed(context.Background(), []int32{5, 6}); err != nil {
		t.Fatal(err)
	}
	cold, _ := m.NewSequence(SequenceOptions{Context: ringCtx})
	if err := cold.Feed(context.Background(), append(slices.Clone(toks[:n]), 5, 6)); err != nil {
		t.Fatal(err)
	}
	sameFloats(t, "after the refill", seq.Logits(), cold.Logits())
}

// TestRingBatch: sequences whose rings have wrapped, fed and stepped
// together (in passes larger than a ring allows one sequence), give the
// logits each gives alone.
func TestRingBatch(t *testing.T) {
	ctx := context.Background()
	for name, spec := range ringSpecs(t) {
		t.Run(name, func(t *testing.T) {
			m := synthModel(t, spec)
			vocab := m.Info().VocabSize
			prompts := [][]int32{snapTokens(700, vocab, 24), snapTokens(1250, vocab, 25), snapTokens(3, vocab, 26)}
			var want [][]float32
			for i, p := range prompts {
				s, _ := m.NewSequence(SequenceOptions{Context: ringCtx})
				if err := s.Feed(ctx, p); err != nil {
					t.Fatal(err)
				}
				rows := slices.Clone(s.Logits())
				for j := range 3 {
					if err := s.Feed(ctx, []int32{int32(7 + i + j)}); err != nil {
						t.Fatal(err)
					}
					rows = append(rows, s.Logits()...)
				}
				want = append(want, rows)
			}
			seqs := make([]*Sequence, len(prompts))
			for i := range seqs {
				seqs[i], _ = m.NewSequence(SequenceOptions{Context: ringCtx, Batch: 2000})
			}
			if err := m.FeedBatch(ctx, seqs, prompts); err != nil {
				t.Fatal(err)
			}
			got := make([][]float32, len(seqs))
			for i, s := range seqs {
				got[i] = slices.Clone(s.Logits())
			}
			for j := range 3 {
				step := []int32{int32(7 + j), int32(8 + j), int32(9 + j)}
				if err := m.DecodeBatch(ctx, seqs, step); err != nil {
					t.Fatal(err)
				}
				for i, s := range seqs {
					got[i] = append(got[i], s.Logits()...)
				}
			}
			for i := range seqs {
				sameFloats(t, fmt.Sprintf("sequence %d", i), got[i], want[i])
			}
		})
	}
}

// cancelAfter is a context whose Err is nil n times, then Canceled.
type cancelAfter struct {
	context.Context
	n int
}

func (c *cancelAfter) Err() error {
	if c.n <= 0 {
		return context.Canceled
	}
	c.n--
	return nil
}

// ringRun is offloadRun past the rings: a prompt that wraps them in
// passes, decode steps, a cut back past them (a refill) and within them,
// and a batched step with a second sequence. It returns every logit it
// saw, in order.
func ringRun(t *testing.T, m *Model) []float32 {
	t.Helper()
	ctx := context.Background()
	vocab := m.Info().VocabSize
	prompt := snapTokens(900, vocab, 27)
	a, err := m.NewSequence(SequenceOptions{Context: ringCtx, Batch: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	out, err := a.FeedAll(ctx, prompt)
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []int{850, 100} {
		if err := a.Truncate(keep); err != nil {
			t.Fatal(err)
		}
		more, err := a.FeedAll(ctx, prompt[keep:keep+20])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, more...)
	}
	return batchedSteps(t, m, a, SequenceOptions{Context: ringCtx}, prompt[:650], out)
}

// TestOffloadRings: rings on the fake device, wholly or split with the
// CPU, give the CPU's logits bit for bit, refills included.
func TestOffloadRings(t *testing.T) {
	for name, spec := range ringSpecs(t) {
		t.Run(name, func(t *testing.T) {
			path := synthFile(t, "ring.gguf", spec)
			want := ringRun(t, loadWith(t, path, LoadOptions{Device: "cpu"}))
			L := spec.Layers
			for _, n := range []int{1, L / 2, L + 1} {
				dev := fake.New(fake.Options{})
				m := loadWith(t, path, LoadOptions{Accelerator: dev, GPULayers: n})
				sameFloats(t, fmt.Sprintf("-ngl %d (%s)", n, m.Info().Backend), ringRun(t, m), want)
				if dev.Ops() == 0 {
					t.Fatalf("-ngl %d: nothing ran on the fake device", n)
				}
			}
		})
	}
}

// TestStepRings: streams run by Step on models with rings — one whose
// sequence was cut further back than its rings reach, one whose prompt is
// longer than a ring takes in one pass, fed in passes as large as Step
// allows — produce exactly what Generate produces on a cold sequence of
// the same tokens.
func TestStepRings(t *testing.T) {
	ctx := context.Background()
	for name, spec := range ringSpecs(t) {
		t.Run(name, func(t *testing.T) {
			m := synthModel(t, spec)
			vocab := m.Info().VocabSize
			toks := snapTokens(ringPrompt, vocab, 24)
			opt := SequenceOptions{Context: ringCtx, Batch: 4096}
			gen := GenerateOptions{MaxTokens: 8, Sampling: greedy, IgnoreEOS: true}

			cut := must(m.NewSequence(opt))
			if err := cut.Feed(ctx, toks); err != nil {
				t.Fatal(err)
			}
			if err := cut.Truncate(400); err != nil {
				t.Fatal(err)
			}
			if !cut.Refills() {
				t.Fatal("a cut to 400 of 1300 tokens should need a refill")
			}
			more := snapTokens(30, vocab, 25)
			long := snapTokens(ringPrompt, vocab, 26)
			prompts := [][]int32{append(slices.Clone(toks[:400]), more...), long}
			var want []Result
			for _, p := range prompts {
				res, err := must(m.NewSequence(opt)).Generate(ctx, p, gen, nil)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, res)
			}
			streams := []*Stream{
				must(cut.NewStream(more, gen, nil)),
				must(must(m.NewSequence(opt)).NewStream(long, gen, nil)),
			}
			for range 100 {
				live := slices.DeleteFunc(slices.Clone(streams), (*Stream).Done)
				if len(live) == 0 {
					break
				}
				if err := m.Step(live, 4096); err != nil {
					t.Fatal(err)
				}
			}
			for i, st := range streams {
				got, err := st.Result()
				if err != nil || !st.Done() {
					t.Fatalf("stream %d: done %v, %v", i, st.Done(), err)
				}
				if !slices.Equal(got.Tokens, want[i].Tokens) {
					t.Errorf("stream %d: %v, cold %v", i, got.Tokens, want[i].Tokens)
				}
				if !slices.Equal(st.Sequence().Tokens()[:len(prompts[i])], prompts[i]) {
					t.Errorf("stream %d: the sequence holds other tokens", i)
				}
			}
		})
	}
}
